// The mirror job: a folder tree or a zip into a project's documents, exactly once, incrementally.
// Composed from a source (what to read), the checkpoint store (what was done), the runner
// (how many at once, retries, lock, signals) and the client (the service).
import { posix, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import type { FerryClient } from '../src/api/client.js';
import { AuthenticationError, ConfigurationError, ConnectionError, PermissionDeniedError, RateLimitError, ServerError, TimeoutError } from '../src/api/errors.js';
import type { CoordinateExtractionStrategy, Document, OCREngine, OCRStrategy } from '../src/api/types.js';
import type { RetryInfo } from '../src/api/transport.js';
import { openSource, type FileEntry, type Source, type SourceEntry } from '../src/sources/index.js';
import type { CheckpointStore } from '../src/store/types.js';
import { AdaptiveConcurrency } from '../src/runner/adaptive.js';
import { runPool } from '../src/runner/pool.js';
import { DEFAULT_ITEM_RETRY, withItemRetries, type ItemRetryOptions } from '../src/runner/retry.js';
import { JobAbortedError, noteError, runJob, type JobContext, type JobSummary } from '../src/runner/job.js';
import { Progress, type ProgressState } from '../src/runner/progress.js';
import { decide } from '../src/sync/plan.js';
import { RemoteFolders } from '../src/sync/remote-folders.js';
import { BatchIndex, RELATIVE_PATH_KEY, fileName, findLanded } from '../src/sync/settle.js';
import { sha256Of } from '../src/sync/checksum.js';
import { SeenSet } from '../src/sync/seen.js';

export interface MirrorOptions {
  source: string;
  project: string;
  /** Remote folder path under the project root (`--to`). */
  to?: string | undefined;
  include?: string[] | undefined;
  exclude?: string[] | undefined;
  followSymlinks?: boolean | undefined;
  /** Largest number of uploads at once; adaptive concurrency works below it. */
  concurrency?: number | undefined;
  checksum?: boolean | undefined;
  ocrEngine?: OCREngine | undefined;
  ocrStrategy?: OCRStrategy | undefined;
  coordinateExtractionStrategy?: CoordinateExtractionStrategy | undefined;
  /** Extra key/value metadata on every document. */
  metadata?: Record<string, string> | undefined;
  /** Use this batch id (the upload job passes its playbook document upload). */
  uploadIdentifier?: string | undefined;
  itemRetry?: Partial<ItemRetryOptions> | undefined;
  /** Progress display (default: on). */
  progress?: boolean | undefined;
  /** Resume this run. */
  resumeRunId?: number | undefined;
  /** The run's job kind in the checkpoint store (default `mirror`; the upload job says `upload`). */
  job?: string | undefined;
  /** Upload exactly these files (relative keys) again, whatever the checkpoint says: retries of failed documents. */
  only?: ReadonlySet<string> | undefined;
}

export interface MirrorDeps {
  client: FerryClient;
  store: CheckpointStore;
  /** The adaptive limiter the client reports its retries to (see `mirrorRetryListener`). */
  concurrency?: AdaptiveConcurrency;
}

export interface MirrorPlan {
  new: number;
  changed: number;
  unchanged: number;
  deletedLocally: number;
  foldersToCreate: number;
  bytes: number;
  problems: { key: string; reason: string }[];
}

export const JOB = 'mirror';

/** Superseded documents listed in a summary; the rest are counted. */
const MAX_LISTED = 1_000;

/** Files looked up in the checkpoint store per query. */
const LOOKUP_BATCH = 256;

export function mirrorJobKey(baseUrl: string, opts: Pick<MirrorOptions, 'source' | 'project' | 'to'>): string {
  return `mirror|${baseUrl}|${opts.project}|${normaliseRemotePath(opts.to)}|${resolve(opts.source)}`;
}

/** Hands the client's throttling signals to the adaptive limiter. */
export function mirrorRetryListener(concurrency: AdaptiveConcurrency): (info: RetryInfo) => void {
  return (info) => {
    if (info.status === 429 || info.status === 503) concurrency.throttled();
  };
}

export async function mirror(opts: MirrorOptions, deps: MirrorDeps): Promise<JobSummary> {
  const source = await open(opts);
  const jobKey = mirrorJobKey(deps.client.transport.address.baseUrl, opts);
  return runJob({ store: deps.store, job: opts.job ?? JOB, jobKey, params: mirrorParams(opts), resumeRunId: opts.resumeRunId, uploadId: opts.uploadIdentifier }, (ctx) =>
    transfer(opts, deps, source, ctx),
  );
}

/** The mirror's work inside a run that someone else started (the mirror job itself, or the upload job). */
export async function transfer(opts: MirrorOptions, deps: MirrorDeps, source: Source, ctx: JobContext): Promise<Record<string, unknown>> {
  const { client, store } = deps;
  const jobKey = mirrorJobKey(client.transport.address.baseUrl, opts);
  const concurrency = deps.concurrency ?? new AdaptiveConcurrency({ max: opts.concurrency ?? 8 });
  const retry = { ...DEFAULT_ITEM_RETRY, ...opts.itemRetry };
  const folders = new RemoteFolders(client, opts.project, store, jobKey, normaliseRemotePath(opts.to));
  await checkProject(client, opts.project);

  // Before anything new is sent, settle what earlier runs left in flight.
  const reconciled = await settleInFlight(client, store, opts.project, jobKey, ctx);

  const state: ProgressState = { counts: ctx.counts, bytes: 0, bytesPlanned: 0, itemsPlanned: 0, discovering: true };
  const progress = new Progress(state, { enabled: opts.progress !== false });
  const superseded: { key: string; previous: string; current: string }[] = [];
  let supersededCount = 0;
  const seen = new SeenSet();
  const claimed = new Set<string>();
  let fatal: unknown;
  const fail = (key: string, err: unknown, entry?: FileEntry) => {
    ctx.counts.failed++;
    const error = (err as Error).message ?? String(err);
    noteError(ctx, key, error);
    store.recordFailed(jobKey, key, { error, runId: ctx.run.id, ...(entry ? { size: entry.size, mtimeMs: entry.mtimeMs } : {}) });
  };

  // Files are looked up in the checkpoint store a batch at a time: on a rerun over a large,
  // unchanged tree that lookup is nearly all the work there is.
  const uploads = async function* (): AsyncIterable<FileEntry> {
    let batch: FileEntry[] = [];
    for await (const entry of source.entries(ctx.signal)) {
      if (entry.kind === 'file') {
        batch.push(entry);
        if (batch.length >= LOOKUP_BATCH) {
          yield* considerFiles(batch);
          batch = [];
        }
      } else await considerOther(entry);
    }
    yield* considerFiles(batch);
    state.discovering = false;
  };

  const considerOther = async (entry: Exclude<SourceEntry, FileEntry>): Promise<void> => {
    if (entry.kind === 'dir') return folders.ensure(entry.key);
    // Every entry found is counted, what cannot be mirrored too: discovered = what the source holds.
    if (opts.only && !opts.only.has(entry.key)) return;
    ctx.counts.discovered++;
    if (entry.outcome === 'failed') fail(entry.key, new Error(entry.reason));
    else {
      ctx.counts.skipped++;
      noteError(ctx, entry.key, `skipped: ${entry.reason}`);
    }
  };

  const considerFiles = async function* (files: FileEntry[]): AsyncIterable<FileEntry> {
    if (files.length === 0) return;
    const known = store.fingerprints(jobKey, files.map((f) => f.key));
    for (const entry of files) {
      seen.add(entry.key);
      if (opts.only && !opts.only.has(entry.key)) continue;
      ctx.counts.discovered++;
      const sha = opts.checksum ? await sha256Of(entry.open()) : undefined;
      const decision = opts.only ? 'changed' : decide({ size: entry.size, mtimeMs: entry.mtimeMs, sha256: sha }, known.get(entry.key));
      if (decision === 'unchanged') {
        if (!reconciled.has(entry.key)) ctx.counts.skipped++;
        continue;
      }
      state.itemsPlanned++;
      state.bytesPlanned += entry.size;
      yield sha ? ({ ...entry, sha256: sha } as FileEntry) : entry;
    }
  };

  const uploadOne = async (entry: FileEntry & { sha256?: string }) => {
    const placement = await folders.place(entry.key);
    const name = fileName(entry.key);
    const metadata = { ...opts.metadata, ...(placement.flattenedPath ? { [RELATIVE_PATH_KEY]: placement.flattenedPath } : {}) };
    const previous = store.fingerprint(jobKey, entry.key)?.remoteId ?? null;
    const wanted = { name, parentId: placement.parentId, size: entry.size, relativePath: placement.flattenedPath, notId: previous };
    store.recordIntent(jobKey, entry.key, { size: entry.size, mtimeMs: entry.mtimeMs, sha256: entry.sha256 ?? null, uploadId: ctx.uploadId, parentId: placement.parentId, runId: ctx.run.id });
    const started = Date.now();
    const doc: Document = await client.documents.upload(
      opts.project,
      entry.path ? { path: entry.path, size: entry.size, filename: name } : { open: () => entry.open() as Readable, size: entry.size, filename: name },
      {
        documentUploadIdentifier: ctx.uploadId,
        ...(placement.parentId ? { parentObjectIdentifier: placement.parentId } : {}),
        source: 'local',
        ...(opts.ocrEngine ? { ocrEngine: opts.ocrEngine } : {}),
        ...(opts.ocrStrategy ? { ocrStrategy: opts.ocrStrategy } : {}),
        ...(opts.coordinateExtractionStrategy ? { coordinateExtractionStrategy: opts.coordinateExtractionStrategy } : {}),
        ...(Object.keys(metadata).length ? { metadata } : {}),
      },
      // No abort signal: on SIGINT/SIGTERM an upload under way is let finish and recorded.
      { didItLand: () => findLanded(client, opts.project, ctx.uploadId, wanted, claimed) },
    );
    concurrency.succeeded(Date.now() - started);
    const id = doc.objectIdentifier as string;
    claimed.add(id);
    store.recordUploaded(jobKey, entry.key, { remoteId: id, size: entry.size, mtimeMs: entry.mtimeMs, sha256: entry.sha256 ?? null, parentId: placement.parentId });
    if (previous && previous !== id) {
      // Listed up to a cap (the checkpoint store keeps every superseded id per file).
      supersededCount++;
      if (superseded.length < MAX_LISTED) superseded.push({ key: entry.key, previous, current: id });
    }
    ctx.counts.uploaded++;
    ctx.bytes += entry.size;
    state.bytes = ctx.bytes;
  };

  try {
    await runPool(
      uploads(),
      async (entry) => {
        try {
          await withItemRetries(
            async () => {
              try {
                await uploadOne(entry);
              } catch (err) {
                if (err instanceof RateLimitError || (err instanceof ServerError && err.status === 503)) concurrency.throttled();
                throw err;
              }
            },
            retry,
            ctx.signal,
          );
        } catch (err) {
          if (err instanceof AuthenticationError || err instanceof PermissionDeniedError) {
            // Every other item would fail the same way: stop the job.
            fatal ??= err;
            throw err;
          }
          if (ctx.signal.aborted) return; // interrupted mid-upload: the intent stays, the next run settles it
          fail(entry.key, err, entry);
        }
      },
      { concurrency, signal: ctx.signal },
    );
  } catch (err) {
    throw fatal ?? err;
  } finally {
    progress.stop();
    store.flush();
  }

  let deletedLocally = 0;
  const deletedSample: string[] = [];
  if (!ctx.signal.aborted && !opts.only) {
    for (const key of store.uploadedKeys(jobKey)) {
      if (seen.has(key)) continue;
      deletedLocally++;
      if (deletedSample.length < 20) deletedSample.push(key);
    }
  }
  return {
    uploadIdentifier: ctx.uploadId,
    source: source.description,
    project: opts.project,
    folders: folders.stats,
    superseded,
    supersededCount,
    deletedLocally: { count: deletedLocally, sample: deletedSample, note: 'reported only: ferry never deletes remote documents' },
  };
}

/** What a run would do, touching nothing: no upload, no folder, no checkpoint write. */
export async function planMirror(opts: MirrorOptions, deps: MirrorDeps): Promise<MirrorPlan> {
  const source = await open(opts);
  const { client, store } = deps;
  const jobKey = mirrorJobKey(client.transport.address.baseUrl, opts);
  await checkProject(client, opts.project);
  const folders = new RemoteFolders(client, opts.project, store, jobKey, normaliseRemotePath(opts.to), true);
  const plan: MirrorPlan = { new: 0, changed: 0, unchanged: 0, deletedLocally: 0, foldersToCreate: 0, bytes: 0, problems: [] };
  const seen = new SeenSet();
  for await (const entry of source.entries()) {
    if (entry.kind === 'problem') {
      plan.problems.push({ key: entry.key, reason: entry.reason });
      continue;
    }
    if (entry.kind === 'dir') {
      await folders.ensure(entry.key);
      continue;
    }
    seen.add(entry.key);
    const sha = opts.checksum ? await sha256Of(entry.open()) : undefined;
    const decision = decide({ size: entry.size, mtimeMs: entry.mtimeMs, sha256: sha }, store.fingerprint(jobKey, entry.key));
    if (decision === 'unchanged') plan.unchanged++;
    else {
      if (decision === 'changed') plan.changed++;
      else plan.new++;
      plan.bytes += entry.size;
      await folders.place(entry.key);
    }
  }
  for (const key of store.uploadedKeys(jobKey)) if (!seen.has(key)) plan.deletedLocally++;
  plan.foldersToCreate = folders.stats.created;
  return plan;
}

export async function open(opts: MirrorOptions): Promise<Source> {
  if (/\.zip$/i.test(opts.source) && (opts.include?.length || opts.exclude?.length)) {
    throw new ConfigurationError('--include and --exclude apply to folders; a .zip source is mirrored whole');
  }
  return openSource(opts.source, {
    ...(opts.include ? { include: opts.include } : {}),
    ...(opts.exclude ? { exclude: opts.exclude } : {}),
    followSymlinks: opts.followSymlinks === true,
  });
}

async function checkProject(client: FerryClient, project: string): Promise<void> {
  try {
    await client.projects.get(project);
  } catch (err) {
    if (err instanceof AuthenticationError || err instanceof PermissionDeniedError) throw err;
    if (err instanceof ConnectionError || err instanceof TimeoutError) {
      // Say which host, not which project: the project was never asked about.
      throw new JobAbortedError(`the service cannot be reached at ${originOf(err.url)}: ${err.message}; check the address (FERRY_BASE_URL or the profile) and the network`);
    }
    throw new JobAbortedError(`project ${project} cannot be used: ${(err as Error).message}`);
  }
}

/** Items whose upload was started but not recorded as done: found on the service, or sent again. */
async function settleInFlight(client: FerryClient, store: CheckpointStore, project: string, jobKey: string, ctx: JobContext): Promise<Set<string>> {
  const settled = new Set<string>();
  const inFlight = store.inFlight(jobKey);
  if (inFlight.length === 0) return settled;
  const indexes = new Map<string, BatchIndex>();
  for (const item of inFlight) {
    if (!item.uploadId) continue;
    let index = indexes.get(item.uploadId);
    if (!index) {
      index = await BatchIndex.load(client, project, item.uploadId);
      indexes.set(item.uploadId, index);
    }
    const wanted = { name: posix.basename(item.sourceKey), parentId: item.parentId, size: item.size, notId: item.remoteId };
    const doc = index.claim({ ...wanted, relativePath: undefined }) ?? index.claim({ ...wanted, relativePath: item.sourceKey });
    if (doc?.objectIdentifier) {
      store.recordUploaded(jobKey, item.sourceKey, { remoteId: doc.objectIdentifier, size: item.size, mtimeMs: item.mtimeMs, sha256: item.sha256, parentId: item.parentId });
      ctx.counts.reconciled++;
      settled.add(item.sourceKey);
    }
    // Not found: it never arrived, and the walk will upload it as a retry.
  }
  store.flush();
  return settled;
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

function normaliseRemotePath(to: string | undefined): string {
  return (to ?? '').split('/').filter((s) => s !== '' && s !== '.').join('/');
}

/** A run's parameters as recorded: what `ferry jobs resume` needs, nothing secret. */
export function mirrorParams(opts: MirrorOptions): Record<string, unknown> {
  const { itemRetry: _r, progress: _p, resumeRunId: _id, only, ...rest } = opts;
  const params: Record<string, unknown> = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined));
  if (only) params.only = [...only];
  return params;
}
