// `ferry run FILE`: a job from a definition file, the way cron runs ferry.
// Its definition (arguments, flags, help); the action is in ../actions and loads when it runs.
import { type Command } from 'commander';
import { later } from '../later.js';
import { addSettings } from '../settings-flags.js';
import { OTHER_SETTINGS } from '../../settings/declared.js';

export function registerRun(program: Command): void {
  addSettings(
    program
      .command('run')
      .description('run the job a definition file describes (see config/jobs/*.yaml)')
      .argument('<file>', 'job definition, YAML or JSON'),
    OTHER_SETTINGS.run,
  ).action(later(() => import('../actions/run.js'), 'runAction'));
}
