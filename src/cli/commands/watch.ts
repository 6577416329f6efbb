// `ferry watch`: wait out an existing batch's processing, reading only.
// Its definition (arguments, flags, help); the action is in ../actions and loads when it runs.
import { type Command } from 'commander';
import { later } from '../later.js';

export function registerWatch(program: Command): void {
  program
    .command('watch')
    .description("wait out an existing batch's processing, a playbook's or a mirror's (reading only: nothing is uploaded again)")
    .option('--upload <id>', "the batch: a playbook document upload, or the uploadIdentifier of a mirror's documents")
    .option('--run <n>', 'the batch of this run of the checkpoint store (a number, or last)')
    .option('--playbook <id>', "the playbook, for a playbook's batch this checkpoint store did not make")
    .option('--project <id>', "the project (id or name), for a mirror's batch this checkpoint store did not make")
    .option('--state <file>', 'checkpoint database')
    .option('--timeout <duration>', 'longest wait, e.g. 90s, 30m, 2h', '1h')
    .option('--json', 'print the final details as JSON')
    .action(later(() => import('../actions/watch.js'), 'watchAction'));
}
