// `ferry upload`: a tree as one upload batch, driven to its end (processing waited for, failures
// retried by the policy, the report printed). `ferry watch` and `ferry report` have files of their own.
import type { Command } from 'commander';
import type { FerryClient } from '../../api/client.js';
import type { PlaybookDocumentUploadDetails } from '../../api/types.js';
import { renderText } from '../../report/render.js';
import { durationText } from '../../duration.js';
import { DEFAULT_PROCESSING_WAIT_MS } from '../../settings/declared.js';
import { upload, type UploadOptions, type UploadResult } from '../../../jobs/upload.js';
import { heard, jobFromFlags, lockedOr, openJobDeps, type RunOptions } from '../shared.js';
import { EXIT } from '../exit-codes.js';
import { visible, safeText } from '../../text.js';
import { summaryBody, summaryText } from '../output.js';
import { Reply } from '../reply.js';
import { StatusLine } from '../../runner/progress.js';
import { resolveProject } from '../../backends/project/named.js';

export async function uploadAction(source: string, opts: Record<string, unknown>, cmd: Command): Promise<void> {
  const loaded = jobFromFlags('upload', { source }, opts);
  const options: UploadOptions = heard(loaded.upload);
  process.exitCode = await runUploadCommand(cmd, options, { rps: loaded.rps, state: loaded.state, reply: Reply.to(opts, loaded.statsIntervalMs), ack: loaded.ack, timeoutText: durationText(options.timeoutMs ?? DEFAULT_PROCESSING_WAIT_MS) });
}


/** Shared by `upload` and `jobs resume` of an upload run. */
export async function runUploadCommand(cmd: Command, options: UploadOptions, run: RunOptions & { ack?: boolean; timeoutText?: string }): Promise<number> {
  const { reply } = run;
  const deps = openJobDeps(cmd, options.concurrency, run);
  const live = reply.display.progress ? liveDisplay() : undefined;
  try {
    let result: UploadResult;
    try {
      options = { ...options, project: await resolveProject(deps.client, options.project) };
      result = await upload({ ...options, onPoll: live?.onPoll }, { ...deps, display: reply.display });
    } catch (err) {
      return lockedOr(err, reply);
    } finally {
      live?.stop();
    }
    // Processing that ran out of time is waited on by the last batch's watch (reaching the same tenant).
    const watch = `ferry watch --playbook ${options.playbook} --upload ${result.batches.at(-1)?.uploadIdentifier}${deps.store.reopenFlags}`;
    const notes = await batchNotifications(deps.client, result.batches.map((b) => b.uploadIdentifier), run.ack === true);
    const code = exitFor(result);
    const { batches, ...rest } = result;
    reply.answer(
      statusFor(code, result),
      code,
      {
        ...rest,
        // The tenant, said once for the whole job as every summary says it (each batch says it too).
        target: deps.client.target,
        ...(code === EXIT.timeout ? { error: `processing did not end within ${run.timeoutText ?? 'the timeout'}`, next: [watch] } : {}),
        batches: batches.map((b) => ({ uploadIdentifier: b.uploadIdentifier, ...summaryBody(b.summary), ...(b.report ? { report: b.report } : {}) })),
        notifications: notes,
      },
      () => {
        const parts = batches.map((batch) => {
          // A batch whose files processing refused did not succeed, whatever its transfer did: the
          // headline says what the exit code says (1).
          const refused = (batch.report?.totals.failed ?? 0) > 0 && batch.summary.status === 'succeeded';
          return summaryText(refused ? { ...batch.summary, status: 'failed' } : batch.summary, deps.store.reopenFlags) + (batch.report ? `\n${renderText(batch.report)}` : '');
        });
        for (const n of notes) parts.push(`notification: ${visible(n.title ?? '')}: ${safeText(n.message ?? '')}${run.ack ? ' (marked read)' : ''}\n`);
        if (result.creditsExhausted) parts.push('\nSTOPPED: the tenant ran out of processing credits; top up and run again (files already sent are not sent twice).\n');
        if (result.timedOut) parts.push(`\nprocessing did not end within ${run.timeoutText ?? 'the timeout'}; run the same command again (or \`${watch}\`) to wait on.\n`);
        return parts.join('');
      },
    );
    return code;
  } finally {
    await deps.close();
  }
}


async function batchNotifications(client: FerryClient, uploadIds: string[], ack: boolean) {
  const wanted = new Set(uploadIds);
  const found = [];
  for await (const n of client.notifications.list()) {
    if (!Object.values(n.resourceIdentifiers ?? {}).some((v) => wanted.has(v))) continue;
    found.push(n);
    if (ack && !n.isRead) await client.notifications.markRead(n.objectIdentifier);
  }
  return found;
}

/** The word for the exit code of an upload job: the same words every --json answer uses. */
function statusFor(code: number, result: UploadResult): string {
  if (code === EXIT.ok) return 'succeeded';
  if (code === EXIT.timeout) return 'timeout';
  if (code === EXIT.noCredits) return 'exhausted';
  if (code === EXIT.limit) return 'limit';
  if (code === EXIT.aborted) return result.batches.at(-1)?.summary.status ?? 'aborted';
  return 'failed';
}

function exitFor(result: UploadResult): number {
  if (result.creditsExhausted) return EXIT.noCredits;
  if (result.timedOut) return EXIT.timeout;
  const last = result.batches.at(-1);
  if (!last) return EXIT.failed;
  if (last.summary.status === 'aborted' || last.summary.status === 'interrupted') return EXIT.aborted;
  // At its window: the batch stays open, and the next run continues it.
  if (last.summary.status === 'limit') return EXIT.limit;
  const failedUploads = result.batches.some((b) => b.summary.counts.failed > 0);
  const failedProcessing = Object.values(result.remainingFailures).some((n) => n > 0);
  return failedUploads || failedProcessing ? EXIT.failed : EXIT.ok;
}

/** One line redrawn on a TTY, a line per poll elsewhere. */
export function liveDisplay(): { onPoll: (d: Pick<PlaybookDocumentUploadDetails, 'processingDocumentCount' | 'completedDocumentCount' | 'failedDocumentCount' | 'totalDocumentCount'>) => void; stop: () => void } {
  let line: StatusLine | undefined;
  return {
    onPoll: (d) => {
      line ??= new StatusLine();
      line.update(`processing ${d.processingDocumentCount ?? 0}  completed ${d.completedDocumentCount ?? 0}  failed ${d.failedDocumentCount ?? 0}  of ${d.totalDocumentCount ?? 0}`);
    },
    stop: () => line?.stop(),
  };
}

