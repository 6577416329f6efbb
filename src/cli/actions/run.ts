// `ferry run FILE`: a job from a definition file, the way cron runs ferry.
import type { Command } from 'commander';
import { loadDefinition } from '../../../jobs/definition.js';
import { runMirrorCommand } from './mirror.js';
import { runUploadCommand } from './upload.js';
import { ConfigurationError } from '../../api/errors.js';

export async function runAction(file: string, opts: { dryRun?: boolean; json?: boolean }, cmd: Command): Promise<void> {
  const loaded = loadDefinition(file);
  if (loaded.upload) {
    if (opts.dryRun) throw new ConfigurationError('--dry-run applies to mirror jobs; an upload job creates its batch first');
    const ack = loaded.definition.job === 'upload' && loaded.definition.ack === true;
    process.exitCode = await runUploadCommand(cmd, { ...loaded.upload, progress: !opts.json }, { rps: loaded.rps, state: loaded.state, json: opts.json === true, profile: loaded.profile, ack });
    return;
  }
  process.exitCode = await runMirrorCommand(cmd, { ...loaded.mirror, progress: !opts.json }, {
    rps: loaded.rps,
    state: loaded.state,
    json: opts.json === true,
    dryRun: opts.dryRun === true,
    profile: loaded.profile,
  });
}

