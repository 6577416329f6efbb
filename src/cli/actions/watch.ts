// `ferry watch`: wait out an existing batch's processing, reading only: a playbook's upload, or
// a mirror's or a migration's documents in a project (found as `ferry report` finds a batch).
import type { Command } from 'commander';
import { ProcessingTimeoutError, waitForBatch } from '../../../jobs/upload.js';
import { tallyAsDetails, waitForProjectBatch } from '../../report/model.js';
import { openJobDeps } from '../shared.js';
import { EXIT } from '../exit-codes.js';
import { Reply } from '../reply.js';
import { liveDisplay } from './upload.js';
import { parseDurationFlag } from '../options.js';
import { DEFAULT_PROCESSING_WAIT_MS } from '../../settings/declared.js';
import { describeBatch, resolveBatch, withProjectId } from './report.js';
import { endOnFirstSignal } from '../read-only-stop.js';

export async function watchAction(opts: { playbook?: string; upload?: string; run?: string; project?: string; timeout?: string; state?: string; json?: boolean }, cmd: Command): Promise<void> {
  const timeoutMs = opts.timeout !== undefined ? parseDurationFlag('--timeout', opts.timeout) : DEFAULT_PROCESSING_WAIT_MS;
  const reply = Reply.to(opts);
  const deps = openJobDeps(cmd, 1, { state: opts.state });
  let opened: string | undefined;
  const stopped = endOnFirstSignal(reply, () => (opened ? { watched: opened } : {}));
  try {
    const batch = resolveBatch(deps.store, await withProjectId(deps.client, opts));
    opened = describeBatch(batch, deps.storePath);
    if (!reply.json) process.stderr.write(`ferry: watching ${opened}\n`);
    const live = reply.display.progress ? liveDisplay() : undefined;
    const details =
      batch.kind === 'playbook'
        ? await waitForBatch(deps.client, batch.playbook, batch.upload, { timeoutMs, onPoll: live?.onPoll }).finally(() => live?.stop())
        : tallyAsDetails(await waitForProjectBatch(deps.client, batch.project, batch.upload, { timeoutMs, ...(batch.expected !== undefined ? { expected: batch.expected } : {}), onPoll: (t) => live?.onPoll(tallyAsDetails(t)) }).finally(() => live?.stop()));
    // What to run next: the report of this batch, ready to copy, reaching the same tenant.
    const next = `${batch.kind === 'playbook' ? `ferry report --playbook ${batch.playbook} --upload ${batch.upload}` : `ferry report --project ${batch.project} --upload ${batch.upload}`}${deps.store.reopenFlags}`;
    process.exitCode = (details.failedDocumentCount ?? 0) > 0 ? EXIT.failed : EXIT.ok;
    reply.answer(process.exitCode === EXIT.ok ? 'succeeded' : 'failed', process.exitCode, { watched: opened, details, next }, () => `\ndone: ${details.completedDocumentCount} completed, ${details.failedDocumentCount} failed\nreport: ${next}`);
  } catch (err) {
    if (!(err instanceof ProcessingTimeoutError)) throw err;
    process.stderr.write('\n');
    process.exitCode = EXIT.timeout;
    reply.error(EXIT.timeout, err.message, {}, 'timeout');
  } finally {
    stopped();
    await deps.close();
  }
}
