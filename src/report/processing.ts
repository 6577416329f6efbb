// After a run's uploads: what the service's processing did with the documents of its batch, in
// one project (a mirror's) or in several (a migration's, one batch per target project). Waited
// for (--wait) or counted once at the end; either way said in the run's summary as `processing`.
import type { FerryClient } from '../api/client.js';
import type { CheckpointStore } from '../store/types.js';
import { refusalOf } from '../api/refusal.js';
import { ProcessingTimeoutError } from '../runner/poll.js';
import { noteError, noteProblem, type JobContext } from '../runner/job.js';
import { projectBatchReport, tallyProjectBatch, waitForProjectBatch, type BatchReport, type FailedFile, type ProjectBatchTally } from './model.js';

/** What the service's processing did with a run's documents, in its summary. */
export interface ProcessingOutcome {
  documents: number;
  completed: number;
  refused: number;
  processing: number;
  failedReasonSummary: Record<string, number>;
  /** The wait ran out first (exit 5): the next `ferry watch` or `report` goes on. */
  timedOut: boolean;
  /** False when counted at the end of the run without waiting (the counts are a snapshot). */
  waited: boolean;
}

/** One batch of a run: the documents it uploaded under one uploadObjectIdentifier into one project. */
export interface RunBatch {
  client: FerryClient;
  project: string;
  uploadIdentifier: string;
  /** Documents the run uploaded into it: a listing that shows fewer is waited on. */
  expected: number;
  /** Joins refused documents to local paths (a mirror's store); else their identity metadata. */
  store?: CheckpointStore | undefined;
  jobKey?: string | undefined;
}

export interface AwaitedBatch {
  report: BatchReport;
  /** Set when the wait ran out: what was still processing. */
  timeout?: string;
}

/**
 * Waits until the service has processed a batch (every document the run uploaded listed, none in
 * progress) or `timeoutMs` runs out; the report is made from the wait's last listing, not a second one.
 */
export async function awaitBatch(batch: RunBatch, opts: { timeoutMs: number; signal?: AbortSignal | undefined }): Promise<AwaitedBatch> {
  let tally: ProjectBatchTally;
  let timeout: string | undefined;
  try {
    tally = await waitForProjectBatch(batch.client, batch.project, batch.uploadIdentifier, { timeoutMs: Math.max(0, opts.timeoutMs), expected: batch.expected, signal: opts.signal });
  } catch (err) {
    if (!(err instanceof ProcessingTimeoutError)) throw err;
    timeout = err.message;
    tally = await tallyProjectBatch(batch.client, batch.project, batch.uploadIdentifier);
  }
  const report = projectBatchReport(tally, { project: batch.project, uploadIdentifier: batch.uploadIdentifier, store: batch.store, jobKey: batch.jobKey });
  return { report, ...(timeout ? { timeout } : {}) };
}

/**
 * A run's own batch waited for (mirror --wait): a timeout is one of its problems, naming the
 * commands that wait on and report; each refused file one of its errors. The uploads stand
 * either way: a refused document is not sent again by a rerun.
 */
export async function awaitRunBatch(batch: RunBatch, timeoutMs: number, ctx: JobContext): Promise<ProcessingOutcome> {
  const awaited = await awaitBatch(batch, { timeoutMs, signal: ctx.signal });
  const again = batch.store?.reopenFlags ?? '';
  if (awaited.timeout) noteProblem(ctx, '(processing)', `${awaited.timeout}: \`ferry watch --run ${ctx.run.id}${again}\` waits on, \`ferry report --run ${ctx.run.id}${again}\` says what it refused`);
  for (const f of awaited.report.failedFiles) noteError(ctx, f.localPath ?? f.name, refusalText(awaited.report, f));
  ctx.refused = awaited.report.failedFiles.length;
  return waitedOutcome([awaited]);
}

/** A refused file's error line: the reason, what it means and what to do about it. */
export function refusalText(report: BatchReport, file: FailedFile): string {
  const why = report.reasons.find((r) => r.reason === file.reason);
  return `refused by the service's processing: ${file.reason}${why ? ` (${why.meaning}; ${why.action})` : ''}`;
}

/** The outcome of the batches a run waited for, added up. */
export function waitedOutcome(batches: readonly AwaitedBatch[]): ProcessingOutcome {
  const outcome: ProcessingOutcome = { documents: 0, completed: 0, refused: 0, processing: 0, failedReasonSummary: {}, timedOut: false, waited: true };
  for (const { report, timeout } of batches) {
    outcome.documents += report.totals.files;
    outcome.completed += report.totals.completed;
    outcome.refused += report.totals.failed;
    outcome.processing += report.totals.processing;
    for (const r of report.reasons) outcome.failedReasonSummary[r.reason] = (outcome.failedReasonSummary[r.reason] ?? 0) + r.count;
    if (timeout) outcome.timedOut = true;
  }
  outcome.failedReasonSummary = Object.fromEntries(Object.entries(outcome.failedReasonSummary).sort(([a], [b]) => a.localeCompare(b)));
  return outcome;
}

/**
 * Without a wait: how many of a batch's documents the service is still processing and has refused
 * so far (two requests), or undefined from a service whose lists say no totalCount.
 */
export async function countBatch(batch: RunBatch): Promise<ProcessingOutcome | undefined> {
  const query = (indexingStatus: 'inProgress' | 'failed') => ({ uploadObjectIdentifier: batch.uploadIdentifier, indexingStatus, flattenList: true, hidePackagedFiles: false });
  const inProgress = (await batch.client.documents.list(batch.project, query('inProgress')).page(1, 1)).totalCount;
  if (inProgress === undefined) return undefined;
  // The refused are read, not only counted: each refusal is said with its reason (the few there
  // are; a batch is refused whole rarely, and then its reasons are what the user needs).
  const failedReasonSummary: Record<string, number> = {};
  let refused = 0;
  for await (const doc of batch.client.documents.list(batch.project, query('failed'))) {
    const reason = refusalOf(doc) ?? 'unknown';
    failedReasonSummary[reason] = (failedReasonSummary[reason] ?? 0) + 1;
    refused++;
  }
  // A refused document the service still lists as in progress counts once, as refused: the parts add up to the documents.
  const documents = batch.expected;
  const processing = Math.min(inProgress, Math.max(0, documents - refused));
  const sorted = Object.fromEntries(Object.entries(failedReasonSummary).sort(([a], [b]) => a.localeCompare(b)));
  return { documents, completed: Math.max(0, documents - processing - refused), refused, processing, failedReasonSummary: sorted, timedOut: false, waited: false };
}
