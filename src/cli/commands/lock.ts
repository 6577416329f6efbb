// `ferry lock status|break [--project ID]`: the leases held on the service, for the operator. Its
// definition (arguments, flags, help); the action is in ../actions and loads when it runs.
import { type Command } from 'commander';
import { later } from '../later.js';

export function registerLock(program: Command): void {
  const lock = program.command('lock').description("the leases runs hold on the service (one writer per destination): who holds them, and breaking them");
  lock
    .command('status')
    .description("list the holders of a project's leases (or, without --project, of the tenant's: migrations, playbook imports, backups): host, pid, run, job, path, since, last renewed, TTL")
    .option('--project <id>', 'the project whose leases to show, by id or name (default: the tenant-wide ones)')
    .option('--json', 'print one JSON object')
    .action(later(() => import('../actions/lock.js'), 'lockStatusAction'));
  lock
    .command('break')
    .description('remove the leases on a project (or one folder of it), or the tenant-wide ones: a run still holding one may write until its next renewal')
    .option('--project <id>', 'the project whose leases to break, by id or name (default: the tenant-wide ones)')
    .option('--path <path>', 'only leases that conflict with this folder or path, e.g. migrate/<host> (default: every one)')
    .option('--json', 'print one JSON object')
    .action(later(() => import('../actions/lock.js'), 'lockBreakAction'));
}
