// `ferry watch`: wait out an existing batch's processing, reading only.
// Its definition (arguments, flags, help); the action is in ../actions and loads when it runs.
import { type Command } from 'commander';
import { later } from '../later.js';

export function registerWatch(program: Command): void {
  program
    .command('watch')
    .description("wait out an existing batch's processing (reading only: nothing is uploaded again)")
    .requiredOption('--playbook <id>', 'the playbook')
    .requiredOption('--upload <id>', 'the playbook document upload (batch)')
    .option('--timeout <duration>', 'longest wait, e.g. 90s, 30m, 2h', '1h')
    .option('--json', 'print the final details as JSON')
    .action(later(() => import('../actions/watch.js'), 'watchAction'));
}
