// `ferry watch`: wait out an existing batch's processing, reading only.
// Its definition (arguments, flags, help); the action is in ../actions and loads when it runs.
import { type Command } from 'commander';
import { later } from '../later.js';
import { addSettings } from '../settings-flags.js';

export function registerWatch(program: Command): void {
  const watch = program
    .command('watch')
    .description("wait out an existing batch's processing, a playbook's or a mirror's (reading only: nothing is uploaded again)")
    .option('--upload <id>', "the batch: a playbook document upload, or the uploadIdentifier of a mirror's documents")
    .option('--run <n>', 'the batch of this run of the checkpoint store (a number, or last)')
    .option('--playbook <id>', "the playbook, for a playbook's batch this checkpoint store did not make")
    .option('--project <id>', "the project (id or name), for a mirror's batch this checkpoint store did not make");
  // The wait is a job's --timeout: the same setting, its default and its units.
  addSettings(watch, ['state', 'timeout'])
    .option('--json', 'print the final details as JSON')
    .action(later(() => import('../actions/watch.js'), 'watchAction'));
}
