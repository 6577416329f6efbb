// The migrate job: projects (with their folder trees and documents) and playbooks from one tenant
// into another, often in another region. A composition: the id map and the target's metadata
// (src/tenants, src/playbooks), the project source and destination under the transfer engine
// (exactly once, every document accounted for), the replay import for playbooks, all inside one
// run of the runner under one lock per pair of tenants. Resumable at any point: what is mapped is
// reused, what was in flight is settled on the target first.
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { FerryClient } from '../src/api/client.js';
import { ConfigurationError, NotFoundError } from '../src/api/errors.js';
import type { Playbook, Project } from '../src/api/types.js';
import { exportPlaybook, findPlaybook } from '../src/playbooks/export.js';
import { IdMap } from '../src/playbooks/id-map.js';
import { openArchive } from '../src/playbooks/read.js';
import { replayImport } from '../src/playbooks/replay.js';
import type { AdaptiveConcurrency } from '../src/runner/adaptive.js';
import { noteError, runJob, type JobContext, type JobSummary } from '../src/runner/job.js';
import { Progress, type ProgressState } from '../src/runner/progress.js';
import { ProjectSource } from '../src/sources/project.js';
import type { CheckpointStore, RunCounts } from '../src/store/types.js';
import { transfer } from '../src/sync/engine.js';
import { decide } from '../src/sync/plan.js';
import { ProjectDestination } from '../src/sync/destinations/project.js';
import { metadataEntry, TargetMetadata, type MetadataMapping } from '../src/tenants/metadata.js';
import { copyOptions, copyProject } from '../src/tenants/projects.js';
import { Verification, type Difference, type VerifyCounts } from '../src/tenants/verify.js';

export interface MigrateSelection {
  projects?: string[] | undefined;
  allProjects?: boolean | undefined;
  playbooks?: string[] | undefined;
  allPlaybooks?: boolean | undefined;
}

export interface MigrateOptions extends MigrateSelection {
  mapping?: MetadataMapping | undefined;
  concurrency?: number | undefined;
  progress?: boolean | undefined;
}

export interface MigrateDeps {
  from: FerryClient;
  to: FerryClient;
  store: CheckpointStore;
  concurrency?: AdaptiveConcurrency | undefined;
}

export const JOB = 'migrate';

/** What the interface cannot recreate in another tenant: said in every plan and report. */
export const NOT_CARRIED = [
  { what: 'assistants and their messages', why: 'the interface can neither list nor create assistants; their conversations stay in the source tenant' },
  { what: 'notifications', why: 'they belong to users of the source tenant and cannot be created through the interface' },
  { what: 'documents without content', why: 'a document with no url (a failed upload record) has no bytes to carry; each is listed as a skipped item' },
];

/** One pair of tenants, one job: its items, its id map, its lock. */
export function migrateJobKey(from: FerryClient, to: FerryClient): string {
  const side = (c: FerryClient) => `${c.transport.address.baseUrl}#${c.transport.tokens.identity}`;
  return `migrate|${side(from)}|${side(to)}`;
}

function documentsKey(jobKey: string, sourceProject: string): string {
  return `${jobKey}|documents|${sourceProject}`;
}

/** The id map of a migration (projects, options, playbooks and their parts), read only. */
function readIdMap(store: CheckpointStore, jobKey: string): IdMap {
  return new IdMap(store, `${jobKey}|ids`, 0, '');
}

export async function selectProjects(from: FerryClient, sel: MigrateSelection): Promise<Project[]> {
  if (sel.allProjects) return from.projects.list().all();
  const out: Project[] = [];
  for (const id of sel.projects ?? []) {
    try {
      out.push(await from.projects.get(id));
    } catch (err) {
      if (err instanceof NotFoundError) throw new ConfigurationError(`--projects: the source has no project ${id} (or this application cannot see it)`);
      throw err;
    }
  }
  return out;
}

export async function selectPlaybooks(from: FerryClient, sel: MigrateSelection): Promise<Playbook[]> {
  if (sel.allPlaybooks) return from.playbooks.searchAll().all();
  const out: Playbook[] = [];
  for (const id of sel.playbooks ?? []) out.push(await findPlaybook(from, id));
  return out;
}

export function checkSelection(sel: MigrateSelection): void {
  if (sel.allProjects && sel.projects?.length) throw new ConfigurationError('--projects and --all-projects cannot be given together');
  if (sel.allPlaybooks && sel.playbooks?.length) throw new ConfigurationError('--playbooks and --all-playbooks cannot be given together');
  if (!sel.allProjects && !sel.projects?.length && !sel.allPlaybooks && !sel.playbooks?.length) {
    throw new ConfigurationError('nothing to migrate: name --projects ID,... or --all-projects, and/or --playbooks ID,... or --all-playbooks');
  }
}

/** Every organization metadata definition the selection uses, read at the source. */
async function definitionsUsed(from: FerryClient, projects: Project[], playbooks: Playbook[]) {
  const values = projects.flatMap((p) => (p.metadataValues ?? []).map(metadataEntry));
  for (const p of playbooks) for await (const v of from.playbookMetadata.list(p.objectIdentifier)) values.push(metadataEntry(v));
  const definitions = new Map<string, { sourceId: string; name: string | null }>();
  for (const v of values) if (v.organizationMetadataIdentifier) definitions.set(v.organizationMetadataIdentifier, { sourceId: v.organizationMetadataIdentifier, name: v.organizationMetadataName });
  return { values, definitions: [...definitions.values()] };
}

interface ProjectReport {
  source: string;
  target: string | null;
  name: string | null;
  outcome: 'created' | 'reconciled' | 'existing' | 'failed';
  documents: RunCounts;
  bytes: number;
  folders?: unknown;
  deletedAtSource?: unknown;
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
  const { from, to, store } = deps;
  const jobKey = migrateJobKey(from, to);
  const projects = await selectProjects(from, opts);
  const playbooks = await selectPlaybooks(from, opts);
  const params = { from: from.transport.address.baseUrl, to: to.transport.address.baseUrl, projects: projects.map((p) => p.objectIdentifier), playbooks: playbooks.map((p) => p.objectIdentifier) };
  return runJob({ store, job: JOB, jobKey, params }, async (ctx) => {
    const ids = new IdMap(store, `${jobKey}|ids`, ctx.run.id, ctx.uploadId);
    const target = new TargetMetadata(to, ids, opts.mapping);
    // Reads only, before any write: a definition the target lacks stops the migration here.
    const used = await definitionsUsed(from, projects, playbooks);
    await target.resolve(used.values);
    const options = { definitions: used.definitions.length, options: 0, created: 0 };
    for (const def of used.definitions) {
      const copied = await copyOptions(from, def, target);
      options.options += copied.options;
      options.created += copied.created;
    }

    const state: ProgressState = { counts: ctx.counts, bytes: 0, bytesPlanned: 0, itemsPlanned: 0, discovering: true };
    const progress = new Progress(state, { enabled: opts.progress !== false });
    const projectReports: ProjectReport[] = [];
    const playbookReports: PlaybookReport[] = [];
    try {
      for (const project of projects) {
        if (ctx.signal.aborted) break;
        projectReports.push(await migrateProject(project, { ...deps, ids, target, ctx, state, jobKey, maxConcurrency: opts.concurrency }));
      }
      for (const playbook of playbooks) {
        if (ctx.signal.aborted) break;
        playbookReports.push(await migratePlaybook(playbook, { from, to, ids, ctx, mapping: opts.mapping }));
      }
    } finally {
      progress.stop();
    }
    return { from: params.from, to: params.to, options, projects: projectReports, playbooks: playbookReports, notCarried: NOT_CARRIED };
  });
}

interface ProjectWork extends MigrateDeps {
  ids: IdMap;
  target: TargetMetadata;
  ctx: JobContext;
  state: ProgressState;
  jobKey: string;
  maxConcurrency: number | undefined;
}

/** The project itself (an item), then its tree and documents through the engine. */
async function migrateProject(project: Project, w: ProjectWork): Promise<ProjectReport> {
  const { ctx } = w;
  const report: ProjectReport = { source: project.objectIdentifier, target: null, name: project.name, outcome: 'failed', documents: zeroCounts(), bytes: 0 };
  ctx.counts.discovered++;
  let targetId: string;
  try {
    const made = await copyProject(w.to, project, w.ids, w.target);
    targetId = made.id;
    report.target = targetId;
    report.outcome = made.outcome;
    if (made.outcome === 'created') ctx.counts.uploaded++;
    else ctx.counts.reconciled++;
  } catch (err) {
    if (err instanceof ConfigurationError) throw err;
    failItem(ctx, `project ${project.name ?? ''} (${project.objectIdentifier})`, err);
    report.error = (err as Error).message;
    return report;
  }
  // What the engine adds from here on are the project's documents.
  const before = { ...ctx.counts };
  const bytesBefore = ctx.bytes;
  const docsKey = documentsKey(w.jobKey, project.objectIdentifier);
  const extra = await transfer({
    source: new ProjectSource(w.from, project.objectIdentifier),
    destination: new ProjectDestination({ client: w.to, store: w.store, project: targetId, jobKey: docsKey, base: '' }),
    store: w.store,
    jobKey: docsKey,
    ctx,
    concurrency: w.concurrency,
    maxConcurrency: w.maxConcurrency,
    progress: w.state,
    deletionNote: 'documents migrated earlier and no longer at the source: reported only, ferry never deletes on the target',
  });
  for (const k of Object.keys(ctx.counts)) report.documents[k] = (ctx.counts[k] ?? 0) - (before[k] ?? 0);
  report.bytes = ctx.bytes - bytesBefore;
  report.folders = extra.folders;
  report.deletedAtSource = extra.deletedLocally;
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
    const sub: JobContext = { ...ctx, counts: zeroCounts(), errors: [] };
    const result = await replayImport(archive, w.to, w.ids, sub, w.mapping);
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
  return { discovered: 0, uploaded: 0, skipped: 0, failed: 0, reconciled: 0 };
}

// ---------------------------------------------------------------- the plan (--dry-run)

export interface MigrationPlan {
  from: string;
  to: string;
  projects: {
    source: string;
    name: string | null;
    /** The target project, when an earlier run made it. */
    target: string | null;
    folders: number;
    documents: number;
    bytes: number;
    /** Documents already copied by an earlier run (unchanged since). */
    alreadyCopied: number;
    notCarried: { key: string; reason: string }[];
    notCarriedCount: number;
  }[];
  playbooks: { source: string; name: string | null; target: string | null }[];
  options: { definitions: number; options: number; missingOnTarget: number };
  /** What stops the migration before it writes anything (a definition the target lacks). */
  blockers: string[];
  notCarried: typeof NOT_CARRIED;
  totals: { projects: number; folders: number; documents: number; bytes: number; alreadyCopied: number; notCarried: number; playbooks: number };
}

const MAX_LISTED = 100;

/** What a migration would do, writing nothing on either side. */
export async function planMigration(opts: MigrateOptions, deps: MigrateDeps): Promise<MigrationPlan> {
  checkSelection(opts);
  const { from, to, store } = deps;
  const jobKey = migrateJobKey(from, to);
  const ids = readIdMap(store, jobKey);
  const projects = await selectProjects(from, opts);
  const playbooks = await selectPlaybooks(from, opts);
  const plan: MigrationPlan = {
    from: from.transport.address.baseUrl,
    to: to.transport.address.baseUrl,
    projects: [],
    playbooks: playbooks.map((p) => ({ source: p.objectIdentifier, name: p.name, target: ids.get('playbook', p.objectIdentifier) ?? null })),
    options: { definitions: 0, options: 0, missingOnTarget: 0 },
    blockers: [],
    notCarried: NOT_CARRIED,
    totals: { projects: projects.length, folders: 0, documents: 0, bytes: 0, alreadyCopied: 0, notCarried: 0, playbooks: playbooks.length },
  };
  const used = await definitionsUsed(from, projects, playbooks);
  plan.options.definitions = used.definitions.length;
  const target = new TargetMetadata(to, ids, opts.mapping);
  try {
    await target.resolve(used.values);
    for (const def of used.definitions) {
      const onTarget = target.definition({ organizationMetadataIdentifier: def.sourceId, organizationMetadataName: def.name });
      for await (const o of from.organizationMetadataOptions.list(def.sourceId)) {
        plan.options.options++;
        if (!o.name || !onTarget.options.has(o.name.toLocaleLowerCase('en-US'))) plan.options.missingOnTarget++;
      }
    }
  } catch (err) {
    if (!(err instanceof ConfigurationError)) throw err;
    plan.blockers.push(err.message);
  }
  for (const project of projects) {
    const docsKey = documentsKey(jobKey, project.objectIdentifier);
    const p: MigrationPlan['projects'][number] = { source: project.objectIdentifier, name: project.name, target: ids.get('project', project.objectIdentifier) ?? null, folders: 0, documents: 0, bytes: 0, alreadyCopied: 0, notCarried: [], notCarriedCount: 0 };
    for await (const entry of new ProjectSource(from, project.objectIdentifier).entries()) {
      if (entry.kind === 'dir') p.folders++;
      else if (entry.kind === 'problem') {
        p.notCarriedCount++;
        if (p.notCarried.length < MAX_LISTED) p.notCarried.push({ key: entry.key, reason: entry.reason });
      } else {
        p.documents++;
        p.bytes += entry.size;
        if (decide({ size: entry.size, mtimeMs: entry.mtimeMs, sha256: entry.marker }, store.fingerprint(docsKey, entry.key)) === 'unchanged') p.alreadyCopied++;
      }
    }
    plan.projects.push(p);
    plan.totals.folders += p.folders;
    plan.totals.documents += p.documents;
    plan.totals.bytes += p.bytes;
    plan.totals.alreadyCopied += p.alreadyCopied;
    plan.totals.notCarried += p.notCarriedCount;
  }
  return plan;
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
 * map, or by name when this store never ran the migration (a unique name only).
 */
export async function verifyMigration(opts: MigrateSelection & { concurrency?: number | undefined }, deps: MigrateDeps & { signal?: AbortSignal }): Promise<VerifyReport> {
  checkSelection(opts);
  const { from, to, store } = deps;
  const ids = readIdMap(store, migrateJobKey(from, to));
  const projects = await selectProjects(from, opts);
  const playbooks = await selectPlaybooks(from, opts);
  const v = new Verification(from, to, opts.concurrency ?? 8);
  const targetProjects = projects.some((p) => !ids.get('project', p.objectIdentifier)) ? await to.projects.list().all() : [];
  for (const p of projects) {
    const byName = targetProjects.filter((t) => t.name === p.name);
    await v.project(p, ids.get('project', p.objectIdentifier) ?? (byName.length === 1 ? byName[0]?.objectIdentifier : undefined), deps.signal);
  }
  const targetPlaybooks = playbooks.some((p) => !ids.get('playbook', p.objectIdentifier)) ? await to.playbooks.searchAll().all() : [];
  for (const p of playbooks) {
    const byName = targetPlaybooks.filter((t) => t.name === p.name);
    await v.playbook(p, ids.get('playbook', p.objectIdentifier) ?? (byName.length === 1 ? byName[0]?.objectIdentifier : undefined), deps.signal);
  }
  return { from: from.transport.address.baseUrl, to: to.transport.address.baseUrl, counts: v.counts, differences: v.differences, differenceCount: v.differenceCount };
}
