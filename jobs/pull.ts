// The pull job: a project's documents into a local folder, exactly once, incrementally. A
// composition: the project source, the local-folder destination and the transfer engine, inside
// one run of the runner (lock, signals, record).
import { resolve } from 'node:path';
import type { FerryClient } from '../src/api/client.js';
import type { AdaptiveConcurrency } from '../src/runner/adaptive.js';
import { runJob, type JobSummary } from '../src/runner/job.js';
import { Progress, type ProgressState } from '../src/runner/progress.js';
import { sizeAgeFilter, type SizeAgeLimits } from '../src/sync/filters.js';
import type { FilterRule } from '../src/sync/patterns.js';
import { Bandwidth } from '../src/sync/bandwidth.js';
import { CARRIED_PAGE_SIZE, ProjectSource } from '../src/backends/project/source.js';
import type { CheckpointStore } from '../src/store/types.js';
import { planTransfer, transfer, type PlannedItem, type TransferPlan } from '../src/sync/engine.js';
import { LocalFolderDestination } from '../src/backends/local/destination.js';

export interface PullOptions extends SizeAgeLimits {
  project: string;
  dir: string;
  /** Folder under the project root to pull ('' or absent: the whole project). */
  from?: string | undefined;
  include?: string[] | undefined;
  exclude?: string[] | undefined;
  /** The rules of a --filter-from file, in order (sync/patterns.ts). */
  rules?: FilterRule[] | undefined;
  concurrency?: number | undefined;
  /** --bwlimit: most content bytes per second, every transfer of the run together. */
  bwlimit?: number | undefined;
  progress?: boolean | undefined;
  /** Off a terminal, one progress record this often (default 30 s). */
  statsIntervalMs?: number | undefined;
  /** Tell the file system's case rule instead of probing it. */
  caseInsensitive?: boolean | undefined;
}

export interface PullDeps {
  client: FerryClient;
  store: CheckpointStore;
  concurrency?: AdaptiveConcurrency;
}

export const JOB = 'pull';

export function pullJobKey(baseUrl: string, opts: Pick<PullOptions, 'project' | 'from' | 'dir'>): string {
  const from = (opts.from ?? '').split('/').filter((s) => s !== '' && s !== '.').join('/');
  return `pull|${baseUrl}|${opts.project}|${from}|${resolve(opts.dir)}`;
}

function parts(opts: PullOptions, deps: PullDeps, jobKey: string, dryRun = false) {
  const source = new ProjectSource(deps.client, opts.project, { from: opts.from, include: opts.include, exclude: opts.exclude, rules: opts.rules, pageSize: CARRIED_PAGE_SIZE });
  const destination = new LocalFolderDestination({ root: resolve(opts.dir), store: deps.store, jobKey, caseInsensitive: opts.caseInsensitive, dryRun });
  return { source, destination };
}

export async function pull(opts: PullOptions, deps: PullDeps): Promise<JobSummary> {
  const jobKey = pullJobKey(deps.client.transport.address.baseUrl, opts);
  const { source, destination } = parts(opts, deps, jobKey);
  // Both ends are checked before the run starts: an unusable project or folder is not a run.
  await source.prepare();
  await destination.prepare();
  const params = { project: opts.project, dir: resolve(opts.dir), from: opts.from, include: opts.include, exclude: opts.exclude, ...(opts.rules ? { rules: opts.rules } : {}) };
  return runJob({ store: deps.store, job: JOB, jobKey, params, target: deps.client.target, pages: [deps.client.transport.pages] }, async (ctx) => {
    const state: ProgressState = { counts: ctx.counts, bytes: 0, bytesPlanned: 0, itemsPlanned: 0, discovering: true };
    const progress = new Progress(state, { enabled: opts.progress !== false, intervalMs: opts.statsIntervalMs, census: (signal) => source.entries(signal) });
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
        bandwidth: opts.bwlimit ? new Bandwidth(opts.bwlimit) : undefined,
      });
      return { project: opts.project, dir: resolve(opts.dir), ...extra };
    } finally {
      progress.stop();
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
