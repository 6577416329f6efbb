// `ferry run FILE`: a job from a definition file, the way cron runs ferry. Each kind runs through
// the same code as its command (`ferry mirror`, `upload`, `pull`, `playbooks backup`, `migrate`).
import type { Command } from 'commander';
import { loadDefinition } from '../../../jobs/definition.js';
import { ConfigurationError } from '../../api/errors.js';
import { runMirrorCommand } from './mirror.js';
import { runUploadCommand } from './upload.js';
import { runPullCommand } from './pull.js';
import { runBackupCommand } from './playbooks.js';
import { runMigrateCommand } from './migrate.js';
import { statsFlag } from '../options.js';
import { heard } from '../shared.js';
import { Reply } from '../reply.js';

export async function runAction(file: string, opts: { dryRun?: boolean; json?: boolean; stats?: string }, cmd: Command): Promise<void> {
  const loaded = loadDefinition(file);
  // --stats of the command, else the file's own.
  const statsIntervalMs = statsFlag(opts.stats) ?? loaded.statsIntervalMs;
  const dryRun = opts.dryRun === true;
  const run = { rps: loaded.rps, state: loaded.state, reply: Reply.to(opts, statsIntervalMs), dryRun, profile: loaded.profile };
  switch (loaded.kind) {
    case 'mirror':
      process.exitCode = await runMirrorCommand(cmd, heard(loaded.mirror), run);
      return;
    case 'upload':
      // The plan of an upload job is its mirror's: the same files, the same checkpoint state; no
      // batch is created, nothing is sent.
      if (dryRun) {
        process.exitCode = await runMirrorCommand(cmd, loaded.upload, run);
        return;
      }
      process.exitCode = await runUploadCommand(cmd, heard(loaded.upload), { ...run, ack: loaded.ack });
      return;
    case 'pull':
      process.exitCode = await runPullCommand(cmd, loaded.pull, run);
      return;
    case 'playbooks-backup':
      if (dryRun) throw new ConfigurationError(`job file ${file}: a playbooks-backup job has no dry run (ferry playbooks list shows what it would back up)`);
      process.exitCode = await runBackupCommand(cmd, heard(loaded.backup), run);
      return;
    case 'migrate':
      process.exitCode = await runMigrateCommand(cmd, { ...loaded.migrate, options: heard(loaded.migrate.options) }, run);
      return;
  }
}
