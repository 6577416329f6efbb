// The migrate job: projects (with their folder trees and documents) and playbooks from one tenant
// into another, often in another region. A composition: the id map and the target's metadata
// (src/tenants, src/playbooks), the project source and destination under the transfer engine
// (exactly once, every document accounted for), the replay import for playbooks, all inside one
// run of the runner under one lock per pair of tenants. Resumable at any point: what is mapped is
// reused, what was in flight is settled on the target first.
import type { BandwidthLimit } from '../src/sync/bandwidth.js';
import type { LimitSettings } from '../src/runner/limits.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { DEFAULT_CONCURRENCY } from '../src/runner/adaptive.js';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { FerryClient } from '../src/api/client.js';
import { ConfigurationError } from '../src/api/errors.js';
import type { Playbook, Project } from '../src/api/types.js';
import { exportPlaybook } from '../src/playbooks/export.js';
import { IdMap } from '../src/mapping/id-map.js';
import { openArchive } from '../src/playbooks/read.js';
import { replayImport } from '../src/playbooks/replay.js';
import type { AdaptiveConcurrency } from '../src/runner/adaptive.js';
import { awaitListed, type Listed } from '../src/api/listed.js';
import { noteError, noteProblem, runJob, listedProof, type JobContext, type JobSummary } from '../src/runner/job.js';
import { Bandwidth } from '../src/sync/bandwidth.js';
import { describeTarget, hostOf } from '../src/api/target.js';
import { serviceLease, tenantLeaseTarget, type LeaseSettings } from '../src/backends/project/lease-use.js';
import { DEFAULT_STATS_MS, Progress, StatusLine, type Display, type ProgressState } from '../src/runner/progress.js';
import { formatBytes } from '../src/text.js';
import { CARRIED_PAGE_SIZE, ProjectSource } from '../src/backends/project/source.js';
import type { RunCounts } from '../src/store/types.js';
import { transfer } from '../src/sync/engine.js';
import { awaitBatch, refusalText, waitedOutcome, type AwaitedBatch, type ProcessingOutcome } from '../src/report/processing.js';
import { addChecks, type ContentCheckCounts } from '../src/backends/content-check.js';
import { ProjectDestination } from '../src/backends/project/destination.js';
import { TargetMetadata, type MetadataMapping } from '../src/mapping/metadata.js';
import { copyOptions, copyProject } from '../src/tenants/projects.js';
import { projectCounterparts, resolveCounterparts } from '../src/tenants/counterparts.js';
import {
  NOT_CARRIED,
  checkPair,
  checkSelection,
  definitionsUsed,
  documentsKey,
  migrateJobKey,
  readIdMap,
  selectPlaybooks,
  selectProjects,
  type MigrateSelection,
  type PairDeps,
} from '../src/tenants/selection.js';
import { shareOf } from '../src/tenants/shard.js';
import { Verification, type Difference, type VerifyCounts } from '../src/tenants/verify.js';

export interface MigrateOptions extends MigrateSelection {
  mapping?: MetadataMapping | undefined;
  /** The run's window (--max-duration, --max-transfer, --max-files, --cutoff-mode). */
  limits?: LimitSettings | undefined;
  /** Copy into a same-named target project that no earlier migration of it made. */
  intoExisting?: boolean | undefined;
  concurrency?: number | undefined;
  /** --bwlimit: most content bytes per second, every transfer of the run together. */
  bwlimit?: BandwidthLimit | undefined;
  /** The lease on the target tenant's migrations from this source (--wait-lock, --lock-ttl, --no-lock). */
  lock?: LeaseSettings | undefined;
  /** --wait: after the copies, wait this long for the target to process them, then say what it refused. */
  waitMs?: number | undefined;
  /** What the run records of its settings for `ferry jobs resume` (src/settings/resume.ts). */
  record?: Record<string, unknown> | undefined;
  /** Continue this run (`ferry jobs resume`) rather than start a new one. */
  resumeRunId?: number | undefined;
}

export interface MigrateDeps extends PairDeps {
  concurrency?: AdaptiveConcurrency | undefined;
  /** What the run (or the verification) shows while it runs (none when not given). */
  display?: Display | undefined;
}

export { NOT_CARRIED, migrateJobKey, type MigrateSelection };
export { planMigration, type MigrationPlan } from '../src/tenants/plan.js';

export const JOB = 'migrate';

export interface ProjectReport {
  source: string;
  target: string | null;
  name: string | null;
  outcome: 'created' | 'reconciled' | 'existing' | 'failed';
  documents: RunCounts;
  bytes: number;
  durationMs?: number;
  /** What the target's processing did with the documents copied into it (migrate --wait). */
  processing?: ProcessingOutcome;
  folders?: unknown;
  deletedAtSource?: unknown;
  /** The documents' content checked against the source's sha256 (content-check.ts). */
  contentCheck?: ContentCheckCounts;
  error?: string;
}

interface PlaybookReport {
  source: string;
  target: string | null;
  name: string | null;
  outcome: 'created' | 'reconciled' | 'existing' | 'failed';
  parts?: Record<string, number>;
  error?: string;
}

export async function migrate(opts: MigrateOptions, deps: MigrateDeps): Promise<JobSummary> {
  checkSelection(opts);
  checkPair(deps, opts);
  const { from, to, store } = deps;
  const jobKey = migrateJobKey(from, to);
  const projects = shareOf(await selectProjects(from, opts), opts.shard);
  const playbooks = shareOf(await selectPlaybooks(from, opts), opts.shard);
  const selected = { projects: projects.map((p) => p.objectIdentifier), playbooks: playbooks.map((p) => p.objectIdentifier) };
  // The settings it keeps for `ferry jobs resume` (the profiles, the selection as asked), and what that came to here.
  const params = opts.record
    ? { ...opts.record, sourceUrl: from.transport.address.baseUrl, targetUrl: to.transport.address.baseUrl, selected }
    : { from: from.transport.address.baseUrl, to: to.transport.address.baseUrl, ...selected, ...(opts.shard ? { shard: `${opts.shard.index}/${opts.shard.count}` } : {}) };
  // One migration from this source (or shard of it) into the target at a time, whatever store
  // each uses: the lease is held on the target, where the writes go.
  const fromHost = hostOf(from.transport.address.baseUrl);
  const leasePath = `migrate/${fromHost}${opts.shard ? `/shard-${opts.shard.index}-of-${opts.shard.count}` : ''}`;
  const lease = serviceLease(to, tenantLeaseTarget(leasePath, JOB, `migrations from ${fromHost}${opts.shard ? ` (shard ${opts.shard.index}/${opts.shard.count})` : ''} into ${describeTarget(to.target)}`), opts.lock);
  return runJob({ store, job: JOB, jobKey, params, target: to.target, resumeRunId: opts.resumeRunId, lease, pages: [from.transport.pages, to.transport.pages], limits: opts.limits }, async (ctx) => {
    const ids = new IdMap(store, `${jobKey}|ids`, ctx.run.id, ctx.uploadId, ctx.writeGate);
    // Reads only, before any write: the target projects earlier runs made (whatever store they
    // used) are found again; a same-named project that is not theirs stops the run here.
    await adoptCounterparts(projects, to, ids, opts.intoExisting === true, listedProof(ctx));
    const target = new TargetMetadata(to, ids, opts.mapping);
    // Reads only, before any write: a definition the target lacks stops the migration here.
    const used = await definitionsUsed(from, projects, playbooks, opts.mapping);
    await target.resolve(used.values);
    const options = { definitions: used.definitions.length, options: 0, created: 0, ...(used.unknownNames.length ? { mapNamesNotFound: used.unknownNames } : {}) };
    if (used.unknownNames.length) {
      to.transport.logger.warn({ names: used.unknownNames }, '--map names organization metadata the source shows on none of its projects or playbooks: their options are not carried (name them by id to carry them)');
    }
    for (const def of used.definitions) {
      await ctx.writeGate?.();
      const copied = await copyOptions(from, def, target);
      options.options += copied.options;
      options.created += copied.created;
    }

    const bandwidth = opts.bwlimit ? new Bandwidth(opts.bwlimit) : undefined;
    const state: ProgressState = { counts: ctx.counts, bytes: 0, bytesPlanned: 0, itemsPlanned: 0, discovering: true, ...(bandwidth ? { bwlimit: () => bandwidth.rate } : {}) };
    // The census (on a terminal): each project, its documents, each playbook, as the run counts
    // them, so that the live line has a bar and an ETA. The documents are counted by the project's
    // analytics (one request each), not by listing the source a second time: a large tenant is
    // listed once, by the copy itself. A service whose analytics cannot be read shows no total.
    const census = async function* (signal: AbortSignal) {
      for (const project of projects) {
        if (signal.aborted) return;
        yield { kind: 'project' };
        const { documentCount } = await from.projects.analytics(project.objectIdentifier, { signal });
        for (let i = 0; i < (documentCount ?? 0); i++) yield { kind: 'document' };
      }
      for (const _ of playbooks) yield { kind: 'playbook' };
    };
    const progress = new Progress(state, { enabled: deps.display?.progress === true, intervalMs: deps.display?.statsIntervalMs, census });
    const projectReports: ProjectReport[] = [];
    const playbookReports: PlaybookReport[] = [];
    try {
      for (const project of projects) {
        // Stopped, or at its window: nothing more is started (no target project made); the next run carries on.
        if (ctx.signal.aborted || ctx.limits?.reached) break;
        projectReports.push(await migrateProject(project, { ...deps, ids, target, ctx, state, jobKey, maxConcurrency: opts.concurrency, bandwidth }));
      }
      for (const playbook of playbooks) {
        if (ctx.signal.aborted || ctx.limits?.reached) break;
        playbookReports.push(await migratePlaybook(playbook, { from, to, ids, ctx, mapping: opts.mapping }));
      }
    } finally {
      progress.stop();
    }
    const processing = opts.waitMs !== undefined && !ctx.signal.aborted ? await awaitTargetProcessing(to, projectReports, opts.waitMs, ctx, store.reopenFlags) : undefined;
    // Each side named by host, client id and profile, not by an address alone (several tenants share one).
    const contentCheck = addChecks(projectReports.map((p) => p.contentCheck));
    return { from: describeTarget(from.target), to: describeTarget(to.target), options, projects: projectReports, playbooks: playbookReports, notCarried: NOT_CARRIED, uploadIdentifier: ctx.uploadId, ...(contentCheck ? { contentCheck } : {}), ...(processing ? { processing } : {}) };
  });
}

/**
 * migrate --wait: the run's batch in each target project it copied documents into, waited for
 * in turn within one deadline; each refused document is one of the run's errors, named by its
 * project and path. The copies stand either way: none is sent again by a rerun.
 */
async function awaitTargetProcessing(to: FerryClient, projects: ProjectReport[], waitMs: number, ctx: JobContext, reopen: string): Promise<ProcessingOutcome> {
  const deadline = Date.now() + waitMs;
  const awaited: AwaitedBatch[] = [];
  for (const p of projects) {
    const copied = p.documents.uploaded ?? 0;
    if (!p.target || copied === 0 || ctx.signal.aborted) continue;
    const batch = await awaitBatch({ client: to, project: p.target, uploadIdentifier: ctx.uploadId, expected: copied }, { timeoutMs: deadline - Date.now(), signal: ctx.signal });
    p.processing = waitedOutcome([batch]);
    const where = p.name ?? p.source;
    if (batch.timeout) noteProblem(ctx, '(processing)', `project ${where} (${p.target}): ${batch.timeout}: \`ferry watch --project ${p.target} --upload ${ctx.uploadId}${reopen}\` waits on, \`ferry report --project ${p.target} --upload ${ctx.uploadId}${reopen}\` says what it refused`);
    for (const f of batch.report.failedFiles) noteError(ctx, `${where}/${f.localPath ?? f.name}`, refusalText(batch.report, f));
    awaited.push(batch);
  }
  ctx.refused = awaited.reduce((n, b) => n + b.report.failedFiles.length, 0);
  return waitedOutcome(awaited);
}

interface ProjectWork extends MigrateDeps {
  ids: IdMap;
  target: TargetMetadata;
  ctx: JobContext;
  state: ProgressState;
  jobKey: string;
  maxConcurrency: number | undefined;
  bandwidth: Bandwidth | undefined;
}

/** Maps every selected project that has no target yet to the target project an earlier run made, if any. */
async function adoptCounterparts(projects: Project[], to: FerryClient, ids: IdMap, intoExisting: boolean, listed: Listed): Promise<void> {
  const { found, blockers } = await resolveCounterparts(to, projects, ids, intoExisting, listed);
  if (blockers.length) throw new ConfigurationError(`${blockers.join('; ')}. Nothing was written.`);
  for (const [source, target] of found) ids.adopt('project', source, target);
}

/** The project itself (an item), then its tree and documents through the engine. */
async function migrateProject(project: Project, w: ProjectWork): Promise<ProjectReport> {
  const { ctx } = w;
  const report: ProjectReport = { source: project.objectIdentifier, target: null, name: project.name, outcome: 'failed', documents: zeroCounts(), bytes: 0 };
  ctx.counts.discovered++;
  let targetId: string;
  let madeNow = false;
  try {
    await ctx.writeGate?.();
    const made = await copyProject(w.to, project, w.ids, w.target);
    targetId = made.id;
    report.target = targetId;
    report.outcome = made.outcome;
    if (made.outcome === 'created') ctx.counts.uploaded++;
    else ctx.counts.reconciled++;
    madeNow = made.outcome === 'created';
  } catch (err) {
    if (err instanceof ConfigurationError) throw err;
    failItem(ctx, `project ${project.name ?? ''} (${project.objectIdentifier})`, err);
    report.error = (err as Error).message;
    return report;
  }
  // What the engine adds from here on are the project's documents.
  const started = Date.now();
  const before = { ...ctx.counts };
  const bytesBefore = ctx.bytes;
  const docsKey = documentsKey(w.jobKey, project.objectIdentifier);
  // Each project's listing adds to what is planned: no ETA until this one is listed too.
  w.state.discovering = true;
  const extra = await transfer({
    source: new ProjectSource(w.from, project.objectIdentifier, { skipFailed: true, pageSize: CARRIED_PAGE_SIZE }),
    destination: new ProjectDestination({ client: w.to, store: w.store, project: targetId, jobKey: docsKey, base: '', markers: 'origin', madeByThisRun: madeNow, listed: listedProof(ctx) }),
    store: w.store,
    jobKey: docsKey,
    ctx,
    concurrency: w.concurrency,
    maxConcurrency: w.maxConcurrency,
    bandwidth: w.bandwidth,
    progress: w.state,
    deletionNote: 'documents migrated earlier and no longer at the source: reported only, ferry never deletes on the target',
  });
  for (const k of Object.keys(ctx.counts)) report.documents[k] = (ctx.counts[k] ?? 0) - (before[k] ?? 0);
  report.bytes = ctx.bytes - bytesBefore;
  report.durationMs = Date.now() - started;
  report.folders = extra.folders;
  report.deletedAtSource = extra.deletedLocally;
  if (extra.contentCheck) report.contentCheck = extra.contentCheck as ContentCheckCounts;
  return report;
}

/** Exported from the source into a temporary archive, replayed into the target through the id map. */
async function migratePlaybook(playbook: Playbook, w: { from: FerryClient; to: FerryClient; ids: IdMap; ctx: JobContext; mapping: MetadataMapping | undefined }): Promise<PlaybookReport> {
  const { ctx } = w;
  ctx.counts.discovered++;
  const report: PlaybookReport = { source: playbook.objectIdentifier, target: null, name: playbook.name, outcome: 'failed' };
  const dir = await mkdtemp(join(tmpdir(), 'ferry-migrate-'));
  try {
    const path = join(dir, 'playbook.zip');
    await exportPlaybook(w.from, playbook, path, ctx.signal);
    const archive = await openArchive(path);
    // The replay counts its parts in a context of its own: the migration counts the playbook.
    const sub: JobContext = { ...ctx, counts: zeroCounts(), errors: [], problems: [] };
    await ctx.writeGate?.();
    const result = await replayImport(archive, w.to, w.ids, sub, w.mapping);
    for (const e of sub.errors) noteError(ctx, `playbook ${playbook.name ?? ''}: ${e.key}`, e.error);
    for (const p of sub.problems) noteProblem(ctx, `playbook ${playbook.name ?? ''}: ${p.key}`, p.reason);
    report.target = result.playbookIdentifier;
    report.outcome = sub.counts.uploaded > 0 ? 'created' : 'existing';
    report.parts = { created: sub.counts.uploaded, found: sub.counts.reconciled };
    if (report.outcome === 'created') ctx.counts.uploaded++;
    else ctx.counts.reconciled++;
  } catch (err) {
    if (err instanceof ConfigurationError) throw err;
    if (ctx.signal.aborted) {
      ctx.counts.discovered--; // interrupted, not failed: the next run takes it up again
      return report;
    }
    failItem(ctx, `playbook ${playbook.name ?? ''} (${playbook.objectIdentifier})`, err);
    report.error = (err as Error).message;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return report;
}

function failItem(ctx: JobContext, key: string, err: unknown): void {
  ctx.counts.failed++;
  noteError(ctx, key, (err as Error).message ?? String(err));
}

function zeroCounts(): RunCounts {
  return { discovered: 0, uploaded: 0, unchanged: 0, skipped: 0, failed: 0, reconciled: 0 };
}

// ---------------------------------------------------------------- verify

export interface VerifyReport {
  from: string;
  to: string;
  counts: VerifyCounts;
  differences: Difference[];
  differenceCount: number;
}

/**
 * Source and target compared for the selection: counterparts found through the migration's id
 * map, or, when this store never ran the migration, on the target itself (documents that name
 * their source project; else a unique name).
 */
export async function verifyMigration(opts: MigrateSelection & { concurrency?: number | undefined }, deps: MigrateDeps & { signal?: AbortSignal }): Promise<VerifyReport> {
  checkSelection(opts);
  const { from, to, store } = deps;
  const ids = readIdMap(store, migrateJobKey(from, to));
  const projects = shareOf(await selectProjects(from, opts), opts.shard);
  const playbooks = shareOf(await selectPlaybooks(from, opts), opts.shard);
  const v = new Verification(from, to, opts.concurrency ?? DEFAULT_CONCURRENCY);
  // What the comparison has reached: a live line on a terminal, a record now and then elsewhere.
  const line = deps.display?.progress === true ? new StatusLine() : undefined;
  const say = () => {
    const c = v.counts;
    line?.update(`verify: project ${c.projects}/${projects.length}  ${c.documents} documents  ${formatBytes(c.bytesHashed)} hashed  playbook ${c.playbooks}/${playbooks.length}  differences ${v.differenceCount}`);
  };
  const ticker = line ? setInterval(say, line.live ? 250 : (deps.display?.statsIntervalMs ?? DEFAULT_STATS_MS)) : undefined;
  ticker?.unref();
  if (line?.live) say();
  try {
    return await compareAll(v, projects, playbooks, ids, deps);
  } finally {
    if (ticker) clearInterval(ticker);
    line?.stop();
  }
}

async function compareAll(v: Verification, projects: Project[], playbooks: Playbook[], ids: IdMap, deps: MigrateDeps & { signal?: AbortSignal }): Promise<VerifyReport> {
  const { from, to } = deps;
  // A verification writes nothing: it reads the target as a run would, from listings that show what was written before it began.
  const listed = await awaitListed(to.transport.listingLag, performance.now());
  const targetProjects = projects.some((p) => !ids.get('project', p.objectIdentifier)) ? await to.projects.list().all() : [];
  for (const p of projects) {
    // Through this store's id map; else the target project whose documents name this one (made
    // from another store); else the only one of that name.
    let target = ids.get('project', p.objectIdentifier);
    if (!target) {
      const named = await projectCounterparts(to, p, listed, targetProjects);
      target = named.find((c) => c.evidence === 'documents name the source project')?.id ?? (named.length === 1 ? named[0]?.id : undefined);
    }
    await v.project(p, target, deps.signal);
  }
  const targetPlaybooks = playbooks.some((p) => !ids.get('playbook', p.objectIdentifier)) ? await to.playbooks.searchAll().all() : [];
  for (const p of playbooks) {
    const byName = targetPlaybooks.filter((t) => t.name === p.name);
    await v.playbook(p, ids.get('playbook', p.objectIdentifier) ?? (byName.length === 1 ? byName[0]?.objectIdentifier : undefined), deps.signal);
  }
  return { from: describeTarget(from.target), to: describeTarget(to.target), counts: v.counts, differences: v.differences, differenceCount: v.differenceCount };
}
