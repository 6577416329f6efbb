// `ferry run FILE`: a job from a definition file, the way cron runs ferry.
import type { Command } from 'commander';
import { loadDefinition } from '../../../jobs/definition.js';
import { runMirrorCommand } from './mirror.js';
import { runUploadCommand } from './upload.js';
import { statsFlag } from '../options.js';

export async function runAction(file: string, opts: { dryRun?: boolean; json?: boolean; stats?: string }, cmd: Command): Promise<void> {
  const loaded = loadDefinition(file);
  const statsIntervalMs = statsFlag(opts.stats);
  if (loaded.upload) {
    // The plan of an upload job is its mirror's: the same files, the same checkpoint state; no
    // batch is created, nothing is sent.
    if (opts.dryRun) {
      process.exitCode = await runMirrorCommand(cmd, { ...loaded.upload, progress: false }, { rps: loaded.rps, state: loaded.state, json: opts.json === true, dryRun: true, profile: loaded.profile });
      return;
    }
    const ack = loaded.definition.job === 'upload' && loaded.definition.ack === true;
    process.exitCode = await runUploadCommand(cmd, { ...loaded.upload, progress: !opts.json, statsIntervalMs }, { rps: loaded.rps, state: loaded.state, json: opts.json === true, profile: loaded.profile, ack });
    return;
  }
  process.exitCode = await runMirrorCommand(cmd, { ...loaded.mirror, progress: !opts.json, statsIntervalMs }, {
    rps: loaded.rps,
    state: loaded.state,
    json: opts.json === true,
    dryRun: opts.dryRun === true,
    profile: loaded.profile,
  });
}

