// The life of one run: record it, hold the job's lock, stop cleanly on a signal, and finish with
// a status and summary whatever happened inside.
import { randomUUID } from 'node:crypto';
import type { Target } from '../api/client.js';
import { AuthenticationError, FerryError, PermissionDeniedError } from '../api/errors.js';
import type { CheckpointStore, RunCounts, RunRecord, RunStatus } from '../store/types.js';
import { takeLock, type HeldLock } from './lock.js';
import { awaitListed, type Listed } from '../api/listed.js';
import { hasLimits, RunLimits, type LimitReached, type LimitSettings } from './limits.js';
import { formatBytes, formatDuration } from '../text.js';
import { LeaseError, LeaseHeldError, LeaseLostError, NO_LAG, systemClock, type HeldLease } from './lease.js';
import { ListingLagError, type ListingLagWatch } from '../api/listing-lag.js';
import type { PageWatch } from '../api/paging.js';
import { stopOnSignals } from './signals.js';
import { writeStderr } from './terminal.js';
import { layout, outputWidth } from './layout.js';

export { LockedError } from './lock.js';

/** The job cannot go on at all (authentication, permission, the service refused it). */
export class JobAbortedError extends FerryError {}

/** What failed: an item (counted in `failed`) or the job itself (key "(job)"). */
export interface JobError {
  key: string;
  error: string;
}

/** Said, not failed: an item skipped with its reason, a name stored otherwise, a warning. */
export interface JobProblem {
  key: string;
  reason: string;
}

/**
 * The kind of a skip's reason, from a bounded set (a metric's label never holds a name): a
 * symbolic link, a path twice in an archive, an entry gone at the source since it was listed, or
 * anything else (what is unchanged is no skip: RunCounts.unchanged).
 */
export function skipKind(reason: string): string {
  if (/symbolic link/i.test(reason)) return 'symlink';
  if (/twice|more than once|duplicate/i.test(reason)) return 'duplicate';
  if (/gone|deleted|no longer|not found/i.test(reason)) return 'gone';
  return 'other';
}

/** Problems kept in memory per run; beyond this they are only counted (memory stays flat). */
export const MAX_KEPT_ERRORS = 1_000;

/** Records a problem of the run, keeping at most MAX_KEPT_ERRORS of them. */
export function noteError(ctx: JobContext, key: string, error: string): void {
  if (ctx.errors.length < MAX_KEPT_ERRORS) ctx.errors.push({ key, error });
  else ctx.errorsDropped = (ctx.errorsDropped ?? 0) + 1;
}

/** Records what the run says about an item without it failing, kept as errors are. */
export function noteProblem(ctx: JobContext, key: string, reason: string): void {
  if (reason.startsWith('skipped: ')) {
    const kind = skipKind(reason);
    (ctx.skippedByReason ??= {})[kind] = (ctx.skippedByReason[kind] ?? 0) + 1;
  }
  if (ctx.problems.length < MAX_KEPT_ERRORS) ctx.problems.push({ key, reason });
  else ctx.problemsDropped = (ctx.problemsDropped ?? 0) + 1;
}

export interface JobContext {
  run: RunRecord;
  uploadId: string;
  signal: AbortSignal;
  counts: RunCounts;
  errors: JobError[];
  problems: JobProblem[];
  bytes: number;
  /** Errors and problems beyond MAX_KEPT_ERRORS, counted only. */
  errorsDropped?: number;
  problemsDropped?: number;
  /**
   * The walk of the source by a transfer (src/sync/engine.ts): `walking` until its last entry was
   * read. A run stopped while walking counted only part of its source, and says so.
   */
  walk?: 'walking' | 'done';
  /** Items being written right now (what a first Ctrl-C waits for). */
  inFlight?: number;
  /**
   * Proof that the run's listings show every earlier run's writes (src/api/listed.ts): its
   * lease's, or the bound waited at the start of a run without one. Every decision that reads
   * absence from a listing asks for it (listedProof). None for a run that holds no lease use
   * at all: it writes nothing to the service.
   */
  listed?: Listed;
  /** The run's window (--max-duration, --max-transfer, --max-files): the engine asks it before each item starts. */
  limits?: RunLimits;
  /** Set by a job whose run must not count as finished (e.g. processing not over yet): resumable. */
  unfinished?: string;
  /**
   * Documents the run wrote whole that the service's processing refused afterwards (mirror --wait):
   * the run fails, its counts stand (each was uploaded once and is not sent again).
   */
  refused?: number;
  /**
   * Awaited before every write to the destination (a document, a folder, a batch): throws when
   * the run no longer holds its lease on the service (LeaseLostError), so it writes nothing more.
   */
  writeGate?: () => Promise<void>;
  /** Synchronously, at the last moment a write leaves: whether it still may (see CallOptions.fence). */
  writeFence?: () => boolean;
  /** Failed items by the mark of their failure (src/marks.ts), where it is known (the engine's). */
  failedByMark?: Record<string, number>;
  /** Items skipped with a reason, by kind of reason (skipKind): a bounded set, for metrics. */
  skippedByReason?: Record<string, number>;
}

/** Told of every run of this process as it ends: what a run's metrics read (src/runner/metrics.ts). */
export interface RunObserver {
  /** Awaited before the run's summary is returned (so that what it adds to the summary is printed). */
  finished?(summary: JobSummary): void | Promise<void>;
}

/** A run under way, as an observer sees it: its live counts, and what it works on. */
export interface LiveRun {
  job: string;
  params: Record<string, unknown>;
  target: Target | undefined;
  ctx: JobContext;
}

const observers = new Set<RunObserver>();
const live = new Set<LiveRun>();

/** Observes every run from now on; returns the function that stops it. */
export function observeRuns(observer: RunObserver): () => void {
  observers.add(observer);
  return () => observers.delete(observer);
}

/** The runs of this process under way now. */
export function liveRuns(): LiveRun[] {
  return [...live];
}

/**
 * The run's lease on the service: taken here (and released at the end), held already by the caller
 * (a job of several runs), or not used (`--no-lock`, said in the summary).
 */
export type LeaseUse = ({ acquire: (lock: Pick<HeldLock, 'token' | 'replaced'>) => Promise<HeldLease> } | { held: HeldLease } | { off: string }) & {
  /** The destination service's listing lag, bounded (its writes are decided from its listings). */
  listingLag?: ListingLagWatch;
};

export interface JobSummary {
  job: string;
  runId: number;
  status: RunStatus;
  counts: RunCounts;
  bytes: number;
  durationMs: number;
  errors: JobError[];
  problems: JobProblem[];
  [extra: string]: unknown;
}

export interface RunJobOptions {
  store: CheckpointStore;
  job: string;
  jobKey: string;
  params: Record<string, unknown>;
  /** Resume this run instead of starting a new one. */
  resumeRunId?: number | undefined;
  /** Batch id to use; otherwise the resumed run's, otherwise a new one. */
  uploadId?: string | undefined;
  /** Errors kept in the summary and the run record (the rest are counted). */
  maxErrors?: number;
  onSignal?: (sig: NodeJS.Signals) => void;
  /** The tenant the job writes to, named in its summary. */
  target?: Target | undefined;
  /** The job's lock when the caller already holds it (a job of several runs); else taken here. */
  lock?: HeldLock | undefined;
  /** The lease on the destination, held on the service (see LeaseUse). */
  lease?: LeaseUse | undefined;
  /** The page watches of the services the run lists: a capped page met during the run is said once, as a warning. */
  pages?: readonly PageWatch[] | undefined;
  /** The run's window: at a time, a volume or a count it starts nothing new (status `limit`), and the next run carries on. */
  limits?: LimitSettings | undefined;
}

export async function runJob(
  opts: RunJobOptions,
  body: (ctx: JobContext) => Promise<Record<string, unknown> | void>,
): Promise<JobSummary> {
  const started = Date.now();
  const { store } = opts;
  // The window is counted from here: waiting for the lease is part of the night too.
  const limits = hasLimits(opts.limits) ? new RunLimits(opts.limits) : undefined;
  // The lock comes first: a run that is alive elsewhere is neither started beside nor resumed.
  const lock = opts.lock ?? takeLock(store, opts.jobKey);
  // Then the lease on the service, which other stores and other machines see. Held by another
  // run: refused (exit 4), no run recorded. Not to be had for another reason (the service cannot
  // be reached, the token is refused): the run is recorded, and aborted with that reason.
  let lease: HeldLease | undefined;
  let leaseFailure: unknown;
  try {
    lease = await leaseOf(opts.lease, lock);
  } catch (err) {
    if (err instanceof LeaseHeldError || err instanceof LeaseError) {
      if (!opts.lock) lock.release();
      throw err;
    }
    leaseFailure = err;
  }
  const ownsLease = opts.lease !== undefined && 'acquire' in opts.lease;
  let run: RunRecord;
  try {
    run = opts.resumeRunId !== undefined ? store.reopenRun(opts.resumeRunId) : store.startRun({ job: opts.job, jobKey: opts.jobKey, params: opts.params, uploadId: opts.uploadId ?? randomUUID() });
    lock.attach(run.id);
  } catch (err) {
    if (ownsLease) await lease?.release();
    if (!opts.lock) lock.release();
    throw err;
  }
  // First signal: say so at once, with what is still under way, then let the job wind down.
  const stop = stopOnSignals((sig) => {
    writeStderr(`${layout(`ferry: ${sig} received: stopping, no new work is started; ${ctx.inFlight ?? 0} in flight finish first (${sig === 'SIGINT' ? 'Ctrl-C' : sig} again exits at once)`, outputWidth(process.stderr))}\n`);
    opts.onSignal?.(sig);
  });
  const ctx: JobContext = {
    run,
    uploadId: opts.uploadId ?? run.uploadId ?? randomUUID(),
    signal: stop.signal,
    counts: { discovered: 0, uploaded: 0, unchanged: 0, skipped: 0, failed: 0, reconciled: 0 },
    errors: [],
    problems: [],
    bytes: 0,
    ...writeChecks(lease, opts.lease?.listingLag),
    ...(limits ? { limits: limits.start() } : {}),
  };
  const tallies = (opts.pages ?? []).map((w) => w.tally());
  const liveRun: LiveRun = { job: opts.job, params: opts.params, target: opts.target, ctx };
  live.add(liveRun);
  if (opts.lease && 'off' in opts.lease) noteProblem(ctx, '(lease)', `warning: no lease held on the service (${opts.lease.off}): a run from another store or machine at the same moment may write the same files twice`);
  // Counts reach the store every few seconds, so a run killed outright still shows its progress.
  const persist = setInterval(() => store.updateRun(run.id, { counts: ctx.counts, bytes: ctx.bytes }), 2_000);
  persist.unref();
  let status: RunStatus = 'succeeded';
  let extra: Record<string, unknown> = {};
  let fatal: unknown;
  try {
    if (leaseFailure !== undefined) throw leaseFailure;
    // No lease under a listing lag: what earlier runs wrote is listed only the bound after they
    // ended; the run's first decision from a listing waits for it (a lease's claim waits instead).
    if (lease) ctx.listed = lease.listed;
    else if (opts.lease && 'off' in opts.lease) ctx.listed = await awaitListed(opts.lease.listingLag ?? NO_LAG, systemClock.now(), systemClock, stop.signal);
    extra = (await body(ctx)) ?? {};
    if (stop.reason()) status = 'interrupted';
    else if (ctx.unfinished) {
      status = 'interrupted';
      ctx.errors.unshift({ key: '(job)', error: ctx.unfinished });
    } else if (ctx.counts.failed > 0 || (ctx.refused ?? 0) > 0) status = 'failed';
    else if (limits?.reached) status = 'limit';
    if (limits?.reached) noteProblem(ctx, '(limit)', limitSaid(limits.reached));
  } catch (err) {
    fatal = err;
    status = stop.reason() ? 'interrupted' : 'aborted';
    ctx.errors.unshift({ key: '(job)', error: (err as Error).message });
  } finally {
    clearInterval(persist);
    stop.dispose();
    limits?.dispose();
    if (ownsLease) await lease?.release();
    // The release's last look may have shown the service listing later than the bound since the
    // last write: the run's writes stand, but the next run's decisions would not hold. Said, exit 3.
    const lagged = opts.lease?.listingLag?.exceeded;
    if (lagged && status === 'succeeded') {
      status = 'aborted';
      ctx.errors.unshift({ key: '(job)', error: lagged.message });
    }
    for (const t of tallies) {
      const said = t.end();
      if (said) noteProblem(ctx, '(service)', said);
    }
    // Stopped or aborted: what was discovered and did not end is said as such, so the counts add up.
    const c = ctx.counts;
    const open = c.discovered - c.uploaded - c.reconciled - c.unchanged - c.skipped - c.failed;
    if (status !== 'succeeded' && status !== 'failed' && open > 0) c.interrupted = open;
    // The run record keeps both, problems after errors, as lines (ferry jobs show).
    const kept = [...ctx.errors.map((e) => `${e.key}: ${e.error}`), ...ctx.problems.map((p) => `${p.key}: ${p.reason}`)];
    store.finishRun(run.id, status, { counts: ctx.counts, bytes: ctx.bytes, errors: kept.slice(0, opts.maxErrors ?? 100) });
    if (!opts.lock) lock.release();
  }
  const shown = opts.maxErrors ?? 100;
  const notShown = (kept: number, dropped = 0) => Math.max(0, kept - shown) + dropped;
  const summary: JobSummary = {
    job: opts.job,
    runId: run.id,
    status,
    counts: ctx.counts,
    bytes: ctx.bytes,
    durationMs: Date.now() - started,
    errors: ctx.errors.slice(0, shown),
    problems: ctx.problems.slice(0, shown),
    ...(opts.target ? { target: opts.target } : {}),
    ...(limits?.reached ? { limit: limits.reached } : {}),
    // Stopped before the source was read to its end: `discovered` is what was looked at, not what there is.
    ...(ctx.walk === 'walking' && status !== 'succeeded' && status !== 'failed' ? { walkStopped: true } : {}),
    ...(lease ? { lease: lease.report() } : opts.lease && 'off' in opts.lease ? { lease: { off: opts.lease.off } } : {}),
    ...(opts.lease?.listingLag ? { listingLag: opts.lease.listingLag.report() } : {}),
    ...(ctx.failedByMark ? { failedByMark: ctx.failedByMark } : {}),
    ...(ctx.skippedByReason ? { skippedByReason: ctx.skippedByReason } : {}),
    ...(notShown(ctx.errors.length, ctx.errorsDropped) ? { errorsNotShown: notShown(ctx.errors.length, ctx.errorsDropped) } : {}),
    ...(notShown(ctx.problems.length, ctx.problemsDropped) ? { problemsNotShown: notShown(ctx.problems.length, ctx.problemsDropped) } : {}),
    ...extra,
  };
  live.delete(liveRun);
  for (const o of observers) await o.finished?.(summary);
  if (fatal !== undefined && !(fatal instanceof AuthenticationError || fatal instanceof PermissionDeniedError || fatal instanceof JobAbortedError || fatal instanceof LeaseLostError || fatal instanceof ListingLagError)) {
    // Not an expected way for a job to end: let the caller report it, the run is recorded.
    (fatal as { summary?: JobSummary }).summary = summary;
    throw fatal;
  }
  return summary;
}

/** A limit reached, as the summary says it: which, how far the run got, and that the next run carries on. */
function limitSaid(r: LimitReached): string {
  const value = r.limit === 'max-duration' ? formatDuration(r.value) : r.limit === 'max-transfer' ? formatBytes(r.value) : `${r.value} items`;
  return (
    `the run reached its ${r.limit} limit (${value}) after ${formatDuration(r.elapsedMs)}, ${r.started} items started (${formatBytes(r.startedBytes)}): nothing more was started` +
    `${r.cutoff === 'hard' ? ', and what was in flight was cut off' : ', what was in flight finished'}; the next run carries on where this one stopped`
  );
}

/** The run's proof that its listings have settled, for a decision that reads absence from one. */
export function listedProof(ctx: Pick<JobContext, 'listed'>): Listed {
  // Only a run with no lease use has none, and such a run writes nothing to the service.
  if (!ctx.listed) throw new Error('a decision from the listings of a run that took no lease and waited for no listing lag: a bug of ferry');
  return ctx.listed;
}

/**
 * What every write passes first: the lease still held (renewed when stale), and no listing seen
 * later than the bound (a run that saw one writes nothing more).
 */
function writeChecks(lease: HeldLease | undefined, lag: ListingLagWatch | undefined): Pick<JobContext, 'writeGate' | 'writeFence'> {
  if (!lease && !lag) return {};
  return {
    writeGate: async () => {
      lag?.check();
      await lease?.assertHeld();
    },
    writeFence: () => !lag?.exceeded && (lease?.fresh() ?? true),
  };
}

async function leaseOf(use: LeaseUse | undefined, lock: HeldLock): Promise<HeldLease | undefined> {
  if (!use || 'off' in use) return undefined;
  if ('held' in use) return use.held;
  const lease = await use.acquire(lock);
  lease.start();
  return lease;
}
