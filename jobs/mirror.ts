// The mirror job: a folder tree or a zip into a project's documents, exactly once, incrementally.
// A composition: a source (folder or zip), the project destination and the transfer engine,
// inside one run of the runner (lock, signals, record).
import type { LimitSettings } from '../src/runner/limits.js';
import { resolve } from 'node:path';
import { stat } from 'node:fs/promises';
import type { FerryClient } from '../src/api/client.js';
import { closing, openSource, type Source } from '../src/backends/index.js';
import type { SourceEntry } from '../src/sync/types.js';
import { tapped } from '../src/sync/tap.js';
import { Manifest, ManifestOverlay, overlayOf, separatorsNote, unmatchedWarning, type ManifestOutcome } from '../src/manifest/index.js';
import type { CheckpointStore } from '../src/store/types.js';
import { AdaptiveConcurrency } from '../src/runner/adaptive.js';
import type { ItemRetryOptions } from '../src/runner/item-retry.js';
import { noteProblem, runJob, listedProof, type JobContext, type JobSummary } from '../src/runner/job.js';
import { awaitListed, type Listed } from '../src/api/listed.js';
import { awaitRunBatch, countBatch } from '../src/report/processing.js';
import { Progress, type Display, type ProgressState } from '../src/runner/progress.js';
import { sizeAgeFilter, type SizeAgeLimits } from '../src/sync/filters.js';
import type { FilterRule } from '../src/sync/patterns.js';
import { Bandwidth } from '../src/sync/bandwidth.js';
import { adoptInventory, isCold, planTransfer, transfer, type PlannedItem, type TransferPlan } from '../src/sync/engine.js';
import { openScratchStore } from '../src/store/index.js';
import { ProjectDestination } from '../src/backends/project/destination.js';
import { projectLeaseTarget, serviceLease, type LeaseSettings } from '../src/backends/project/lease-use.js';
import type { OptionValues, SENDING_SETTINGS } from '../src/settings/declared.js';

/**
 * A mirror's options: each setting it declares (SENDING_SETTINGS in src/settings/declared.ts) by
 * its typed value, under its name (`to`, `bwlimit` as a timetable, `minAge` in ms…), and what
 * jobs/definition.ts makes of the others (the patterns, the lease, the window); then what only
 * code gives (a job's own batch, retries of failed documents, the progress display).
 */
export interface MirrorOptions extends SizeAgeLimits, Omit<OptionValues<typeof SENDING_SETTINGS>, 'source' | 'project'> {
  source: string;
  project: string;
  include?: string[] | undefined;
  exclude?: string[] | undefined;
  /** The rules of a --filter-from file, in order (sync/patterns.ts). */
  rules?: FilterRule[] | undefined;
  /** Use this batch id (the upload job passes its playbook document upload). */
  uploadIdentifier?: string | undefined;
  itemRetry?: Partial<ItemRetryOptions> | undefined;
  /** Resume this run. */
  resumeRunId?: number | undefined;
  /** What the run records of its settings for `ferry jobs resume` (src/settings/resume.ts; jobs/definition.ts makes it). */
  record?: Record<string, unknown> | undefined;
  /** The run's job kind in the checkpoint store (default `mirror`; the upload job says `upload`). */
  job?: string | undefined;
  /** Upload exactly these files (relative keys) again, whatever the checkpoint says: retries of failed documents. */
  only?: ReadonlySet<string> | undefined;
  /**
   * Find an entry on the service before uploading it when the store may not know it (the default):
   * the upload job says false, its batch having to hold every file it waits for and reports on.
   */
  findPresent?: boolean | undefined;
  /** The lease on the project's folder, held on the service (--wait-lock, --lock-ttl, --no-lock). */
  lock?: LeaseSettings | undefined;
  /** The run's window (--max-duration, --max-transfer, --max-files, --cutoff-mode). */
  limits?: LimitSettings | undefined;
  /** --wait: after its uploads, wait this long for the service to process them, then report what it refused. */
  waitMs?: number | undefined;
  /**
   * Without --wait: after its uploads, count (two requests) how many of them the service is still
   * processing and has refused so far, for the summary to say (the command line asks for it).
   */
  countProcessing?: boolean | undefined;
}

export interface MirrorDeps {
  client: FerryClient;
  store: CheckpointStore;
  /** The adaptive limiter the client reports its retries to (see `mirrorRetryListener`). */
  concurrency?: AdaptiveConcurrency;
  /** What the run shows while it runs (none when not given). */
  display?: Display | undefined;
}

/** The engine's plan, and the folders the project would gain. */
export interface MirrorPlan extends TransferPlan {
  foldersToCreate: number;
  /** What the source asks to be told of how it was read (names in a code page it was not told). */
  notes: string[];
  /** What the manifest did, when the run has one. */
  manifest?: ManifestOutcome;
}

export const JOB = 'mirror';

export function mirrorJobKey(baseUrl: string, opts: Pick<MirrorOptions, 'source' | 'project' | 'to'>): string {
  return `mirror|${baseUrl}|${opts.project}|${normaliseRemotePath(opts.to)}|${resolve(opts.source)}`;
}

export async function mirror(opts: MirrorOptions, deps: MirrorDeps): Promise<JobSummary> {
  // What the run is, from its options alone, before anything is opened.
  const jobKey = mirrorJobKey(deps.client.transport.address.baseUrl, opts);
  const params = mirrorParams(opts);
  const folder = normaliseRemotePath(opts.to);
  const job = opts.job ?? JOB;
  const source = await open(opts);
  const lease = serviceLease(deps.client, projectLeaseTarget(opts.project, folder, job), opts.lock);
  return closing(source, () =>
    runJob({ store: deps.store, job, jobKey, params, target: deps.client.target, resumeRunId: opts.resumeRunId, uploadId: opts.uploadIdentifier, lease, pages: [deps.client.transport.pages], limits: opts.limits }, (ctx) =>
      mirrorInRun(opts, deps, source, ctx),
    ),
  );
}

/** The mirror's work inside a run that someone else started (the mirror job itself, or the upload job). */
export async function mirrorInRun(opts: MirrorOptions, deps: MirrorDeps, source: Source, ctx: JobContext): Promise<Record<string, unknown>> {
  const jobKey = mirrorJobKey(deps.client.transport.address.baseUrl, opts);
  const overlay = overlayOf(source);
  const destination = projectDestination(opts, deps, jobKey, listedProof(ctx), false, overlay);
  const bandwidth = opts.bwlimit ? new Bandwidth(opts.bwlimit) : undefined;
  const state: ProgressState = { counts: ctx.counts, bytes: 0, bytesPlanned: 0, itemsPlanned: 0, discovering: true, ...(bandwidth ? { bwlimit: () => bandwidth.rate } : {}) };
  const progress = new Progress(state, { enabled: deps.display?.progress === true, intervalMs: deps.display?.statsIntervalMs, census: (signal) => source.entries(signal) });
  try {
    const extra = await transfer({
      source,
      destination,
      store: deps.store,
      jobKey,
      ctx,
      concurrency: deps.concurrency,
      maxConcurrency: opts.concurrency,
      itemRetry: opts.itemRetry,
      checksum: opts.checksum,
      resync: opts.resync,
      only: opts.only,
      progress: state,
      deletionNote: 'reported only: ferry never deletes remote documents',
      filter: sizeAgeFilter(opts),
      bandwidth,
      adoptedAttributes: overlay?.adopted,
    });
    for (const { key, reason } of sourceNotes(source)) noteProblem(ctx, key, reason);
    const manifest = overlay && !ctx.signal.aborted ? overlay.outcome(source) : undefined;
    if (manifest?.unmatched.count) noteProblem(ctx, '(manifest)', unmatchedWarning(manifest.unmatched, true));
    if (manifest?.separatorsRead) noteProblem(ctx, '(manifest)', separatorsNote(manifest.separatorsRead));
    const uploaded = !ctx.signal.aborted && ctx.counts.uploaded > 0;
    const batch = { client: deps.client, project: opts.project, uploadIdentifier: ctx.uploadId, expected: ctx.counts.uploaded, store: deps.store, jobKey };
    const processing = uploaded && opts.waitMs !== undefined ? await awaitRunBatch(batch, opts.waitMs, ctx) : uploaded && opts.countProcessing ? await countBatch(batch) : undefined;
    return { uploadIdentifier: ctx.uploadId, source: source.description, project: opts.project, ...extra, ...(manifest ? { manifest } : {}), ...(processing ? { processing } : {}) };
  } finally {
    progress.stop();
  }
}

/** What a run would do, touching nothing: no upload, no folder, no checkpoint write. */
export async function planMirror(opts: MirrorOptions, deps: MirrorDeps, onItem?: (item: PlannedItem) => void, observe?: (entry: SourceEntry) => void): Promise<MirrorPlan> {
  const source = await open(opts);
  const jobKey = mirrorJobKey(deps.client.transport.address.baseUrl, opts);
  // A plan reads what the project holds as a run would: from listings that show every write made
  // before it began (waiting out the listing lag, if the service has one).
  const listed = await awaitListed(deps.client.transport.listingLag, performance.now());
  const overlay = overlayOf(source);
  const destination = projectDestination(opts, deps, jobKey, listed, true, overlay);
  // A store that knows nothing of the project plans against what the project holds, adopted into
  // a scratch store (the real one is not written), as the run itself would.
  const scratch = opts.resync || isCold(deps.store, jobKey) ? openScratchStore() : undefined;
  try {
    if (scratch) await adoptInventory(scratch.store, destination, jobKey, 'cold', undefined, undefined, overlay?.adopted);
    const plan = await planTransfer({ source: observe ? tapped(source, observe) : source, destination, store: scratch?.store ?? deps.store, jobKey, checksum: opts.checksum, onItem, filter: sizeAgeFilter(opts) });
    const manifest = overlay?.outcome(source);
    const notes = [...(source.notes?.() ?? []), ...(manifest?.unmatched.count ? [unmatchedWarning(manifest.unmatched, true)] : []), ...(manifest?.separatorsRead ? [separatorsNote(manifest.separatorsRead)] : [])];
    return { ...plan, foldersToCreate: destination.folders.stats.created, notes, ...(manifest ? { manifest } : {}) };
  } finally {
    scratch?.dispose();
    await source.close();
  }
}

function projectDestination(opts: MirrorOptions, deps: MirrorDeps, jobKey: string, listed: Listed, dryRun: boolean, overlay: ManifestOverlay | undefined): ProjectDestination {
  return new ProjectDestination({
    listed,
    // A manifest's run compares what each document carries: on a cold start and where a warm run finds one.
    inventoryAttributes: overlay !== undefined,
    identityOf: overlay?.adopted,
    client: deps.client,
    store: deps.store,
    project: opts.project,
    jobKey,
    base: normaliseRemotePath(opts.to),
    ocrEngine: opts.ocrEngine,
    ocrStrategy: opts.ocrStrategy,
    coordinateExtractionStrategy: opts.coordinateExtractionStrategy,
    metadata: opts.metadata,
    dryRun,
    findPresent: opts.findPresent !== false,
  });
}

/**
 * The run's source: the folder, zip or tar, with the manifest's rows over its entries when the run
 * has one. The files are opened, then the manifest read whole (a bad row is exit 2 before any request).
 */
export async function open(opts: MirrorOptions): Promise<Source> {
  const files = await openFiles(opts);
  let manifest: Manifest | undefined;
  try {
    manifest = opts.manifest ? await Manifest.load(opts.manifest, { delimiter: opts.manifestDelimiter, encoding: opts.manifestEncoding, sheet: opts.manifestSheet }) : undefined;
    if (!manifest) return files;
    // The rows are checked against the folder, or the archive's listing, before anything is sent.
    if ((await stat(opts.source)).isDirectory()) await manifest.meet(opts.source, { partial: opts.manifestPartial });
    else await manifest.meetEntries(files, { partial: opts.manifestPartial, stripped: opts.stripComponents !== undefined });
    return new ManifestOverlay(manifest, { metadata: opts.metadata, ocrStrategy: opts.ocrStrategy, ocrEngine: opts.ocrEngine, coordinateExtractionStrategy: opts.coordinateExtractionStrategy }).source(files);
  } catch (err) {
    await manifest?.close();
    await files.close();
    throw err;
  }
}

async function openFiles(opts: MirrorOptions): Promise<Source> {
  return openSource(opts.source, {
    ...(opts.include ? { include: opts.include } : {}),
    ...(opts.exclude ? { exclude: opts.exclude } : {}),
    ...(opts.rules ? { rules: opts.rules } : {}),
    followSymlinks: opts.followSymlinks === true,
    archiveEncoding: opts.archiveEncoding,
    ...(opts.maxEntries !== undefined ? { archiveLimits: { maxEntries: opts.maxEntries } } : {}),
    ...(opts.stripComponents !== undefined ? { stripComponents: opts.stripComponents } : {}),
  });
}

/** What the source asks to be told of how it was read, among a run's problems under the key `(source)`. */
export function sourceNotes(source: Source): { key: string; reason: string }[] {
  return (source.notes?.() ?? []).map((reason) => ({ key: '(source)', reason }));
}

/** `--to` as a path under the project root: `/`-separated, no empty or `.` segments. */
export function normaliseRemotePath(to: string | undefined): string {
  return (to ?? '').split('/').filter((s) => s !== '' && s !== '.').join('/');
}

/**
 * A run's parameters as recorded: the settings it keeps (src/settings/resume.ts), else (a run
 * started from code, not from flags or a file) what it works on; and the files of a retry batch.
 */
export function mirrorParams(opts: MirrorOptions): Record<string, unknown> {
  const params: Record<string, unknown> = opts.record ? { ...opts.record } : { source: resolve(opts.source), ...(opts.to !== undefined ? { to: opts.to } : {}) };
  // The project as the run resolved it (an id), which report, watch and a resume find it by; the name given beside it.
  if (typeof params.project === 'string' && params.project !== opts.project) params.projectName = params.project;
  params.project = opts.project;
  if (opts.only) params.only = [...opts.only];
  return params;
}
