// `ferry run FILE`: a job from a definition file, the way cron runs ferry.
import type { Command } from 'commander';
import { loadDefinition } from '../../../jobs/definition.js';
import { runMirrorCommand } from './mirror.js';

export function registerRun(program: Command): void {
  program
    .command('run')
    .description('run the job a definition file describes (see config/jobs/*.yaml)')
    .argument('<file>', 'job definition, YAML or JSON')
    .option('--dry-run', 'print the plan and touch nothing')
    .option('--json', 'print one JSON summary on stdout at the end')
    .action(async (file: string, opts: { dryRun?: boolean; json?: boolean }, cmd: Command) => {
      const loaded = loadDefinition(file);
      process.exitCode = await runMirrorCommand(cmd, { ...loaded.mirror, progress: !opts.json }, {
        rps: loaded.rps,
        state: loaded.state,
        json: opts.json === true,
        dryRun: opts.dryRun === true,
        profile: loaded.profile,
      });
    });
}
