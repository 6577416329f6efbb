// `ferry run FILE`: a job from a definition file, the way cron runs ferry.
// Its definition (arguments, flags, help); the action is in ../actions and loads when it runs.
import { type Command } from 'commander';
import { later } from '../later.js';
import { STATS_HELP } from '../options.js';

export function registerRun(program: Command): void {
  program
    .command('run')
    .description('run the job a definition file describes (see config/jobs/*.yaml)')
    .argument('<file>', 'job definition, YAML or JSON')
    .option('-n, --dry-run', 'print the plan and touch nothing')
    .option('--stats <duration>', STATS_HELP)
    .option('--json', 'print one JSON summary on stdout at the end')
    .action(later(() => import('../actions/run.js'), 'runAction'));
}
