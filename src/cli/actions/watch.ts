// `ferry watch`: wait out an existing batch's processing, reading only.
import type { Command } from 'commander';
import { ProcessingTimeoutError, waitForBatch } from '../../../jobs/upload.js';
import { openJobDeps, uuidFlag } from '../shared.js';
import { EXIT } from '../exit-codes.js';
import { writeEnvelope } from '../envelope.js';
import { liveDisplay, parseDurationFlag } from './upload.js';

export async function watchAction(opts: { playbook: string; upload: string; timeout: string; json?: boolean }, cmd: Command): Promise<void> {
  uuidFlag('--playbook', opts.playbook);
  uuidFlag('--upload', opts.upload);
  const deps = openJobDeps(cmd, 1, { json: opts.json === true });
  try {
    const live = opts.json ? undefined : liveDisplay();
    const details = await waitForBatch(deps.client, opts.playbook, opts.upload, { timeoutMs: parseDurationFlag('--timeout', opts.timeout), onPoll: live?.onPoll }).finally(() => live?.stop());
    // What to run next: the report of this batch, ready to copy.
    const next = `ferry report --playbook ${opts.playbook} --upload ${opts.upload}`;
    process.exitCode = (details.failedDocumentCount ?? 0) > 0 ? EXIT.failed : EXIT.ok;
    if (opts.json) writeEnvelope(process.exitCode === EXIT.ok ? 'succeeded' : 'failed', process.exitCode, { details, next });
    else process.stdout.write(`\ndone: ${details.completedDocumentCount} completed, ${details.failedDocumentCount} failed\nreport: ${next}\n`);
  } catch (err) {
    if (!(err instanceof ProcessingTimeoutError)) throw err;
    process.stderr.write(`\nferry: ${err.message}\n`);
    process.exitCode = EXIT.timeout;
    if (opts.json) writeEnvelope('timeout', EXIT.timeout, { error: err.message });
  } finally {
    await deps.close();
  }
}

