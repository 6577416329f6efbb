// The upload job: a tree uploaded as one playbook document upload (a batch), driven to its end.
// Each batch is one run: the files go through the mirror engine (exactly once, resumable) with
// the batch id on every document, the batch is marked complete, and its details are polled until
// nothing is processing. A run that stops anywhere (crash, signal, timeout) is continued by the
// next `ferry upload` of the same job, or by `ferry jobs resume`: in-flight uploads are settled,
// nothing is sent twice, and the wait goes on. Failed files can be retried into new batches.
import { poll, ProcessingTimeoutError } from '../src/runner/poll.js';
import { basename } from 'node:path';
import type { FerryClient } from '../src/api/client.js';
import type { OCRStrategy, PlaybookDocumentUploadDetails, UploadFailedReason } from '../src/api/types.js';
import { runJob, type JobSummary, type LeaseUse } from '../src/runner/job.js';
import type { HeldLease } from '../src/runner/lease.js';
import { projectLeaseTarget, serviceLease } from '../src/backends/project/lease-use.js';
import { takeLock, type HeldLock } from '../src/runner/lock.js';
import { buildReport, type BatchReport } from '../src/report/model.js';
import { mirrorJobKey, mirrorParams, mirrorInRun, normaliseRemotePath, open, type MirrorDeps, type MirrorOptions } from './mirror.js';
import { closing } from '../src/backends/index.js';
import { sizeAgeFilter } from '../src/sync/filters.js';
import { DEFAULT_PROCESSING_WAIT_MS } from '../src/settings/declared.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry-policy.js';

export const JOB = 'upload';

export interface UploadOptions extends Omit<MirrorOptions, 'uploadIdentifier' | 'job' | 'only'> {
  playbook: string;
  /** The batch's name (default: the source folder's name and the date). */
  name?: string | undefined;
  /** Wait for processing to end (default true). */
  wait?: boolean | undefined;
  /** Longest wait for processing, ms (default 1 hour). */
  timeoutMs?: number | undefined;
  retryFailed?: boolean | undefined;
  policy?: RetryPolicy | undefined;
  /** Told of every poll of the batch's details (live display). */
  onPoll?: ((details: PlaybookDocumentUploadDetails) => void) | undefined;
  /** First poll interval, ms (default 1 s; doubles up to 15 s). */
  firstPollMs?: number | undefined;
}

export interface BatchOutcome {
  uploadIdentifier: string;
  summary: JobSummary;
  report: BatchReport | undefined;
}

export interface UploadResult {
  batches: BatchOutcome[];
  /** Set when processing did not end in time. */
  timedOut: boolean;
  /** Set when the tenant ran out of credits: the job stopped. */
  creditsExhausted: boolean;
  /** Files left failed after all retries, by reason. */
  remainingFailures: Record<string, number>;
}

export { ProcessingTimeoutError };

export async function upload(opts: UploadOptions, deps: MirrorDeps): Promise<UploadResult> {
  const { client, store } = deps;
  const jobKey = uploadJobKey(client.transport.address.baseUrl, opts);
  // Held for the whole job, all rounds: a second `ferry upload` (or mirror) of the same tree into
  // the same place is refused before it can pick a run to resume or create a batch.
  const lock = takeLock(store, jobKey);
  let lease: HeldLease | undefined;
  try {
    // The lease on the service too, for all rounds: a batch is a write, made under it.
    const use = serviceLease(client, projectLeaseTarget(opts.project, normaliseRemotePath(opts.to), JOB), opts.lock);
    if ('acquire' in use) {
      lease = await use.acquire(lock);
      lease.start();
    }
    return await uploadRounds(opts, deps, jobKey, lock, lease ? { held: lease } : use);
  } finally {
    await lease?.release();
    lock.release();
  }
}

/** The batches of one upload job, under its lock: a resumed or new batch, then retry rounds. */
async function uploadRounds(opts: UploadOptions, deps: MirrorDeps, jobKey: string, lock: HeldLock, lease: LeaseUse): Promise<UploadResult> {
  const { client, store } = deps;
  const policy = opts.policy ?? DEFAULT_RETRY_POLICY;
  const result: UploadResult = { batches: [], timedOut: false, creditsExhausted: false, remainingFailures: {} };
  // A run of this job that did not finish is continued before anything new starts.
  const unfinished = opts.resumeRunId ?? store.listRuns({ job: JOB, limit: 50 }).find((r) => r.jobKey === jobKey && (r.status === 'running' || r.status === 'interrupted' || r.status === 'limit'))?.id;
  let resumeRunId = unfinished;
  // A resumed run keeps its own batch, its retry files and its OCR setting.
  let resumed = resumeRunId !== undefined ? store.getRun(resumeRunId) : undefined;
  let only: Set<string> | undefined = onlyOf(resumed?.params);
  let ocrStrategy = ocrOf(resumed?.params) ?? opts.ocrStrategy;

  for (let round = 0; ; round++) {
    let uploadIdentifier = resumed?.uploadId ?? undefined;
    if (!uploadIdentifier) {
      const name = `${opts.name ?? `${basename(opts.source)} ${new Date().toISOString().slice(0, 10)}`}${round > 0 ? ` (retry ${round})` : ''}`;
      const fileCount = only ? only.size : await countFiles(opts);
      // Created before the run is recorded: a crash in between leaves an empty batch, never a lost file.
      if ('held' in lease) await lease.held.assertHeld();
      uploadIdentifier = (await client.documentUploads.create(opts.playbook, { name, fileCount })).objectIdentifier;
    }
    const batchId = uploadIdentifier;
    const mirrorOpts: MirrorOptions = { ...opts, ocrStrategy, record: roundRecord(opts.record, ocrStrategy), uploadIdentifier: batchId, job: JOB, findPresent: false, ...(only ? { only } : {}) };
    const source = await open(mirrorOpts);
    let report: BatchReport | undefined;
    const summary = await closing(source, () => runJob(
      { store, job: JOB, jobKey, params: { ...mirrorParams(mirrorOpts), playbook: opts.playbook }, target: client.target, resumeRunId, uploadId: batchId, lock, lease, pages: [client.transport.pages], limits: opts.limits },
      async (ctx) => {
        const extra = await mirrorInRun(mirrorOpts, deps, source, ctx);
        // Stopped, or at its window: the batch stays open, and the next run continues it.
        if (ctx.signal.aborted || ctx.limits?.reached) return extra;
        await ctx.writeGate?.();
        await client.documentUploads.complete(opts.playbook, batchId);
        if (opts.wait === false) return extra;
        const expected = ctx.counts.uploaded + ctx.counts.reconciled;
        try {
          await waitForBatch(client, opts.playbook, batchId, { timeoutMs: opts.timeoutMs ?? DEFAULT_PROCESSING_WAIT_MS, expected, onPoll: opts.onPoll, ...(opts.firstPollMs ? { firstPollMs: opts.firstPollMs } : {}) });
        } catch (err) {
          if (!(err instanceof ProcessingTimeoutError)) throw err;
          // Not finished: the next run of this job waits on, without uploading anything again.
          ctx.unfinished = err.message;
          result.timedOut = true;
        }
        report = await buildReport({ client, playbookIdentifier: opts.playbook, uploadIdentifier: batchId, project: opts.project, store, jobKey });
        return { ...extra, playbook: opts.playbook, failedReasonSummary: Object.fromEntries(report.reasons.map((r) => [r.reason, r.count])) };
      },
    ));
    resumeRunId = undefined;
    resumed = undefined;
    result.batches.push({ uploadIdentifier: batchId, summary, report });
    if (!report || summary.status === 'aborted' || summary.status === 'interrupted' || summary.status === 'limit') return result;

    result.remainingFailures = Object.fromEntries(report.reasons.map((r) => [r.reason, r.count]));
    if ((result.remainingFailures.insufficientCredits ?? 0) > 0 && policy.reasons.insufficientCredits === 'stop') {
      result.creditsExhausted = true;
      return result;
    }
    if (!opts.retryFailed || round >= policy.maxRounds) return result;
    const next = planRetry(report, policy);
    if (next.retry.size > 0) {
      only = next.retry;
      ocrStrategy = opts.ocrStrategy;
    } else if (next.fallback.size > 0 && policy.ocrFallback) {
      only = next.fallback;
      ocrStrategy = policy.ocrFallback;
    } else {
      return result;
    }
  }
}

/** Upload runs share the mirror's checkpoint items (same source, project and folder). */
export function uploadJobKey(baseUrl: string, opts: Pick<UploadOptions, 'source' | 'project' | 'to'>): string {
  return mirrorJobKey(baseUrl, opts);
}

/** Which failed files go into the next batch (local paths), by the policy. */
export function planRetry(report: BatchReport, policy: RetryPolicy): { retry: Set<string>; fallback: Set<string> } {
  const retry = new Set<string>();
  const fallback = new Set<string>();
  for (const file of report.failedFiles) {
    if (!file.localPath) continue;
    const action = policy.reasons[file.reason as UploadFailedReason] ?? 'never';
    if (action === 'retry') retry.add(file.localPath);
    else if (action === 'fallback' && policy.ocrFallback) fallback.add(file.localPath);
  }
  return { retry, fallback };
}

export interface WaitOptions {
  timeoutMs: number;
  /** Documents the batch should hold; lets a service that never sets dateCompleted still finish. */
  expected?: number | undefined;
  onPoll?: ((details: PlaybookDocumentUploadDetails) => void) | undefined;
  firstPollMs?: number;
  maxPollMs?: number;
}

/**
 * Whether a batch is over. The spec does not say when `dateCompleted` is set: a service may set it
 * at the PATCH while documents still process. So the counters decide: nothing processing, and
 * every document completed or failed: every one ferry sent, when it knows how many; otherwise
 * (`ferry watch`) every one the batch holds, once `dateCompleted` says no more will come.
 */
export function batchProcessed(
  details: Pick<PlaybookDocumentUploadDetails, 'processingDocumentCount' | 'completedDocumentCount' | 'failedDocumentCount' | 'totalDocumentCount' | 'dateCompleted'>,
  expected: number | undefined,
): boolean {
  if ((details.processingDocumentCount ?? 0) > 0) return false;
  const ended = (details.completedDocumentCount ?? 0) + (details.failedDocumentCount ?? 0);
  if (expected !== undefined) return ended >= expected;
  return Boolean(details.dateCompleted) && ended >= (details.totalDocumentCount ?? 0);
}

/**
 * Polls the batch's details until it is over (batchProcessed); backoff from 1 s doubling to a 15 s
 * cap. Resumable by nature: it only reads.
 */
export async function waitForBatch(client: FerryClient, playbook: string, uploadIdentifier: string, opts: WaitOptions): Promise<PlaybookDocumentUploadDetails> {
  let last: PlaybookDocumentUploadDetails | undefined;
  return poll(
    async () => {
      last = await client.documentUploads.details(playbook, uploadIdentifier);
      opts.onPoll?.(last);
      return batchProcessed(last, opts.expected) ? last : undefined;
    },
    { firstMs: opts.firstPollMs ?? 1_000, maxMs: opts.maxPollMs ?? 15_000, timeoutMs: opts.timeoutMs },
    () => new ProcessingTimeoutError(`batch ${uploadIdentifier} still had ${last?.processingDocumentCount ?? '?'} document(s) processing after ${Math.round(opts.timeoutMs / 1000)} s`),
  );
}

/** The files the batch will hold, declared when it is created: the source as the mirror opens it, its patterns and limits applied. */
async function countFiles(opts: UploadOptions): Promise<number> {
  const source = await open(opts);
  const wanted = sizeAgeFilter(opts);
  let n = 0;
  for await (const entry of source.entries()) if (entry.kind === 'file' && (!wanted || wanted(entry))) n++;
  await source.close();
  return n;
}

/** The OCR strategy a batch's run recorded (a retry round's may be the fallback's). */
function ocrOf(params: Record<string, unknown> | undefined): OCRStrategy | undefined {
  const ocr = params?.ocr;
  return ocr && typeof ocr === 'object' && 'strategy' in ocr ? (ocr.strategy as OCRStrategy) : undefined;
}

/** The run's record with the round's OCR strategy: a resumed retry batch keeps the fallback it was sent with. */
function roundRecord(record: Record<string, unknown> | undefined, ocrStrategy: OCRStrategy | undefined): Record<string, unknown> | undefined {
  if (!record || ocrStrategy === undefined) return record;
  return { ...record, ocr: { ...(record.ocr as object | undefined), strategy: ocrStrategy } };
}

function onlyOf(params: Record<string, unknown> | undefined): Set<string> | undefined {
  return Array.isArray(params?.only) ? new Set(params.only as string[]) : undefined;
}
