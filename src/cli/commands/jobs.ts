// `ferry jobs list|show|resume`: what ran, how it ended, and picking up where a run stopped.
// Its definition (arguments, flags, help); the action is in ../actions and loads when it runs.
import { type Command } from 'commander';
import { later } from '../later.js';

export function registerJobs(program: Command): void {
  const jobs = program.command('jobs').description('list, inspect and resume runs recorded in the checkpoint store');
  jobs
    .command('list')
    .description('recent runs, newest first')
    .option('--job <kind>', 'only runs of this job kind (mirror, upload, ...)')
    .option('--limit <n>', 'how many', '20')
    .option('--state <file>', 'checkpoint database')
    .option('--json', 'print JSON')
    .action(later(() => import('../actions/jobs.js'), 'listAction'));
  jobs
    .command('show')
    .description('one run: parameters, counts and problems')
    .argument('<run>', 'run id')
    .option('--state <file>', 'checkpoint database')
    .option('--json', 'print JSON')
    .action(later(() => import('../actions/jobs.js'), 'showAction'));
  jobs
    .command('resume')
    .description('continue a run that stopped (interrupted, crashed or aborted), settling in-flight uploads first')
    .argument('<run>', 'run id')
    .option('--state <file>', 'checkpoint database')
    .option('--json', 'print one JSON summary on stdout at the end')
    .action(later(() => import('../actions/jobs.js'), 'resumeAction'));
}
