// The pull job: a project's documents into a local folder, exactly once, incrementally. A
// composition: the project source, the local-folder destination and the transfer engine, inside
// one run of the runner (lock, signals, record).
import type { LimitSettings } from '../src/runner/limits.js';
import { resolve } from 'node:path';
import type { FerryClient } from '../src/api/client.js';
import type { AdaptiveConcurrency } from '../src/runner/adaptive.js';
import { noteProblem, runJob, type JobSummary } from '../src/runner/job.js';
import { Progress, type Display, type ProgressState } from '../src/runner/progress.js';
import { sizeAgeFilter, type SizeAgeLimits } from '../src/sync/filters.js';
import type { JOB_SETTINGS, OptionValues } from '../src/settings/declared.js';
import type { FilterRule } from '../src/sync/patterns.js';
import { Bandwidth } from '../src/sync/bandwidth.js';
import { CARRIED_PAGE_SIZE, ProjectSource } from '../src/backends/project/source.js';
import type { CheckpointStore } from '../src/store/types.js';
import { planTransfer, transfer, type PlannedItem, type TransferPlan } from '../src/sync/engine.js';
import { LocalFolderDestination } from '../src/backends/local/destination.js';
import { ManifestWriter } from '../src/manifest/write.js';

/**
 * A pull's options: each setting it declares (JOB_SETTINGS.pull in src/settings/declared.ts) by its
 * typed value, under its name (`bwlimit` as a timetable, `minAge` in ms…), and what
 * jobs/definition.ts makes of the others (the patterns, the window); then what only code gives.
 */
export interface PullOptions extends SizeAgeLimits, Omit<OptionValues<(typeof JOB_SETTINGS)['pull']>, 'pullProject' | 'dir'> {
  project: string;
  dir: string;
  /** The run's window (--max-duration, --max-transfer, --max-files, --cutoff-mode). */
  limits?: LimitSettings | undefined;
  include?: string[] | undefined;
  exclude?: string[] | undefined;
  /** The rules of a --filter-from file, in order (sync/patterns.ts). */
  rules?: FilterRule[] | undefined;
  /** Tell the file system's case rule instead of probing it. */
  caseInsensitive?: boolean | undefined;
}

export interface PullDeps {
  client: FerryClient;
  store: CheckpointStore;
  concurrency?: AdaptiveConcurrency;
  /** What the run shows while it runs (none when not given). */
  display?: Display | undefined;
}

export const JOB = 'pull';

export function pullJobKey(baseUrl: string, opts: Pick<PullOptions, 'project' | 'from' | 'dir'>): string {
  const from = (opts.from ?? '').split('/').filter((s) => s !== '' && s !== '.').join('/');
  return `pull|${baseUrl}|${opts.project}|${from}|${resolve(opts.dir)}`;
}

function parts(opts: PullOptions, deps: PullDeps, jobKey: string, dryRun = false) {
  const source = new ProjectSource(deps.client, opts.project, { from: opts.from, include: opts.include, exclude: opts.exclude, rules: opts.rules, pageSize: CARRIED_PAGE_SIZE, carryControl: true });
  const destination = new LocalFolderDestination({
    root: resolve(opts.dir),
    store: deps.store,
    jobKey,
    caseInsensitive: opts.caseInsensitive,
    localNames: opts.localNames,
    overwriteChanged: opts.overwriteChanged,
    backupDir: opts.backupDir !== undefined ? resolve(opts.backupDir) : undefined,
    ignoreChecksum: opts.ignoreChecksum,
    dryRun,
    logger: deps.client.transport.logger,
  });
  return { source, destination };
}

export async function pull(opts: PullOptions, deps: PullDeps): Promise<JobSummary> {
  const jobKey = pullJobKey(deps.client.transport.address.baseUrl, opts);
  const { source: listing, destination } = parts(opts, deps, jobKey);
  // Both ends are checked before the run starts: an unusable project or folder is not a run.
  await listing.prepare();
  await destination.prepare();
  const writer = opts.manifestOut ? new ManifestWriter(resolve(opts.manifestOut), (key) => destination.localOf(key)) : undefined;
  await writer?.open();
  const source = writer ? writer.tap(listing) : listing;
  const params = { project: opts.project, dir: resolve(opts.dir), from: opts.from, include: opts.include, exclude: opts.exclude, ...(opts.rules ? { rules: opts.rules } : {}) };
  return runJob({ store: deps.store, job: JOB, jobKey, params, target: deps.client.target, pages: [deps.client.transport.pages], limits: opts.limits }, async (ctx) => {
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
        progress: state,
        deletionNote: 'reported only: ferry never deletes local files',
        filter: sizeAgeFilter(opts),
        bandwidth,
      });
      // Written only from a listing read to its end: a stopped pull's would miss files.
      const manifest = writer && ctx.walk === 'done' && !ctx.signal.aborted ? await writer.finish() : undefined;
      if (writer && !manifest) noteProblem(ctx, '(manifest)', `the manifest ${writer.file} was not written: the run stopped before it had listed every document`);
      return { project: opts.project, dir: resolve(opts.dir), ...extra, ...(manifest ? { manifest } : {}) };
    } finally {
      progress.stop();
      destination.close();
      await writer?.dispose();
    }
  });
}

/** What a pull would download, writing nothing. */
export async function planPull(opts: PullOptions, deps: PullDeps, onItem?: (item: PlannedItem) => void): Promise<TransferPlan> {
  const jobKey = pullJobKey(deps.client.transport.address.baseUrl, opts);
  const { source, destination } = parts(opts, deps, jobKey, true);
  await source.prepare();
  return planTransfer({ source, destination: { prepare: () => destination.prepare(), ensureFolder: async () => undefined, place: (entry) => destination.place(entry) }, store: deps.store, jobKey, onItem, filter: sizeAgeFilter(opts) });
}
