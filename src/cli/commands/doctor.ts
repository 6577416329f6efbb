// `ferry doctor`: checks a profile end to end and prints a verdict.
// Its definition (arguments, flags, help); the action is in ../actions and loads when it runs.
import { type Command } from 'commander';
import { later } from '../later.js';

export function registerDoctor(program: Command): void {
  program
    .command('doctor')
    .description('check a profile end to end: addresses, token, clock, a read call per host, permissions')
    .option('--json', 'print the checks as JSON')
    .action(later(() => import('../actions/doctor.js'), 'doctorAction'));
}
