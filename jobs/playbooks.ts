// The playbook jobs: export to archives, verify archives. Each is one run under the job lock, and
// its summary accounts for every playbook (exported, skipped or failed, each with its reason) and
// every sub-resource written.
import { createReadStream } from 'node:fs';
import { mkdir, readFile, readdir, rename, rm, stat } from 'node:fs/promises';
import { writeWhole } from '../src/backends/own-files.js';
import { isUuid } from '../src/ids.js';
import { ConfigurationError } from '../src/api/errors.js';
import { join, resolve } from 'node:path';
import type { FerryClient } from '../src/api/client.js';
import type { Playbook } from '../src/api/types.js';
import { exportPlaybook, findPlaybook, type ExportResult } from '../src/playbooks/export.js';
import { safeSegment } from '../src/playbooks/format.js';
import { ArchiveRejectedError, openArchive } from '../src/playbooks/read.js';
import { IdMap } from '../src/mapping/id-map.js';
import { replayImport, type ReplayMapping } from '../src/playbooks/replay.js';
import { serverImport } from '../src/playbooks/server-import.js';
import { canonicalJson, countParts } from '../src/playbooks/format.js';
import { createHash, randomBytes } from 'node:crypto';
import { toKeep, type RetentionRules } from '../src/playbooks/retention.js';
import { noteError, runJob, type JobContext, type JobSummary } from '../src/runner/job.js';
import type { CheckpointStore } from '../src/store/types.js';
import { describeTarget } from '../src/api/target.js';
import { serviceLease, tenantLeaseTarget, type LeaseSettings } from '../src/backends/project/lease-use.js';
import { sha256Of } from '../src/sync/checksum.js';

export interface PlaybookDeps {
  client: FerryClient;
  store: CheckpointStore;
}

export interface ExportOptions {
  ids: string[];
  /** Every playbook of the organization (POST /playbooks/search/all). */
  all: boolean;
  /** A .zip file for one playbook, or a folder (created) for any number. */
  out: string;
  /** Told of each playbook as it is done (progress). */
  onDone?: ((result: ExportResult) => void) | undefined;
}

export async function exportPlaybooks(opts: ExportOptions, deps: PlaybookDeps): Promise<JobSummary> {
  const { client, store } = deps;
  const out = resolve(opts.out);
  const jobKey = `playbooks-export|${client.transport.address.baseUrl}|${out}`;
  return runJob({ store, job: 'playbooks-export', jobKey, params: { ids: opts.ids, all: opts.all, out }, target: client.target, pages: [client.transport.pages] }, async (ctx) => {
    const playbooks = await selectPlaybooks(client, opts, ctx);
    const toFile = out.toLowerCase().endsWith('.zip') && playbooks.length === 1 && !opts.all;
    if (!toFile) await mkdir(out, { recursive: true });
    const archives: ExportResult[] = [];
    const parts: Record<string, number> = {};
    for (const playbook of playbooks) {
      if (ctx.signal.aborted) break;
      const path = toFile ? out : join(out, archiveName(playbook));
      try {
        const result = await exportPlaybook(client, playbook, path, ctx.signal);
        archives.push(result);
        for (const [k, n] of Object.entries(result.parts)) parts[k] = (parts[k] ?? 0) + n;
        ctx.counts.uploaded++;
        ctx.bytes += result.bytes;
        opts.onDone?.(result);
      } catch (err) {
        if (ctx.signal.aborted) break;
        failItem(ctx, playbook.objectIdentifier, err);
      }
    }
    return { archives, parts };
  });
}

/** `<name>-<id>.zip`: readable, and unique by the id. */
export function archiveName(playbook: Pick<Playbook, 'objectIdentifier' | 'name'>): string {
  return `${safeSegment(playbook.name, 'playbook')}-${playbook.objectIdentifier}.zip`;
}

async function selectPlaybooks(client: FerryClient, opts: Pick<ExportOptions, 'ids' | 'all'>, ctx: JobContext): Promise<Playbook[]> {
  const found: Playbook[] = [];
  if (opts.all) {
    for await (const p of client.playbooks.searchAll()) {
      ctx.counts.discovered++;
      found.push(p);
    }
    return found;
  }
  for (const id of opts.ids) {
    ctx.counts.discovered++;
    try {
      found.push(await findPlaybook(client, id));
    } catch (err) {
      // A name that names none or two is the command's to fix (exit 2), not an item that failed.
      if (!isUuid(id) && err instanceof ConfigurationError) throw err;
      failItem(ctx, id, err);
    }
  }
  return found;
}

function failItem(ctx: JobContext, key: string, err: unknown): void {
  ctx.counts.failed++;
  noteError(ctx, key, (err as Error).message ?? String(err));
}

export interface VerifyOutcome {
  path: string;
  ok: boolean;
  error?: string;
  /** The entry at fault, when one is. */
  entry?: string;
  playbook?: { objectIdentifier: string; name: string | null };
  entries?: number;
  /** Moved aside by a backup that replaced it (damaged): reported, not bad. */
  quarantined?: { was: string; why: string; at: string };
}

/** Every .zip under a folder (a backup folder has one per playbook), temporary files left out. */
async function zipsUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await zipsUnder(path)));
    else if (entry.isFile() && entry.name.toLowerCase().endsWith('.zip')) out.push(path);
  }
  return out;
}

/**
 * Checks a file, or every .zip under a folder, against its manifest. A backup folder's index is
 * checked against the disk too: an archive it lists must be there, with the sha256 it recorded and
 * the playbook it names. Reads only.
 */
export async function verifyArchives(target: string): Promise<VerifyOutcome[]> {
  const info = await stat(target);
  const paths = info.isDirectory() ? await zipsUnder(target) : [target];
  // A folder without index.json reads as an empty index: its archives are checked on their own.
  const listed = info.isDirectory() ? await readIndex(target) : undefined;
  const byPath = new Map((listed?.backups ?? []).map((b) => [join(target, b.file), b]));
  const outcomes: VerifyOutcome[] = [];
  for (const path of paths) {
    try {
      const archive = await openArchive(path);
      const recorded = byPath.get(path);
      const mismatch = recorded ? await againstIndex(target, recorded, archive.manifest.playbook.objectIdentifier) : undefined;
      if (mismatch) outcomes.push({ path, ok: false, error: mismatch, playbook: archive.manifest.playbook });
      else outcomes.push({ path, ok: true, playbook: archive.manifest.playbook, entries: archive.manifest.entries.length });
    } catch (err) {
      if (!(err instanceof ArchiveRejectedError)) throw err;
      outcomes.push({ path, ok: false, error: err.message, ...(err.entry ? { entry: err.entry } : {}) });
    }
  }
  const present = new Set(paths);
  for (const [path, b] of byPath) {
    if (!present.has(path)) outcomes.push({ path, ok: false, error: `${INDEX_FILE} lists this backup of playbook ${b.playbookIdentifier}, but it is not on disk` });
  }
  // Archives a backup moved aside: said as such, with why; the backup that replaced them stands for them.
  for (const q of listed?.quarantined ?? []) {
    outcomes.push({ path: join(target, q.file), ok: true, playbook: { objectIdentifier: q.playbookIdentifier, name: q.name }, quarantined: { was: q.was, why: q.why, at: q.quarantinedAt } });
  }
  return outcomes;
}

/** What is wrong with an archive against its index entry (the playbook it holds, size, sha256), or undefined. */
async function againstIndex(dir: string, recorded: BackupEntry, playbook: string): Promise<string | undefined> {
  if (playbook !== recorded.playbookIdentifier) return `${INDEX_FILE} records this file as a backup of playbook ${recorded.playbookIdentifier}, but it holds playbook ${playbook}`;
  const broken = await damaged(dir, recorded);
  return broken && `${broken}, against what ${INDEX_FILE} recorded`;
}

/** Why the archive an index entry names cannot stand for it any more (missing, changed), or undefined. */
async function damaged(out: string, recorded: BackupEntry): Promise<string | undefined> {
  const path = join(out, recorded.file);
  const st = await stat(path).catch(() => undefined);
  if (!st?.isFile()) return 'it is not on disk';
  if (st.size !== recorded.bytes) return `it holds ${st.size} bytes, ${recorded.bytes} were written`;
  const sha256 = await sha256Of(createReadStream(path)).catch((err: NodeJS.ErrnoException) => `unreadable (${err.code ?? err.message})`);
  if (sha256 !== recorded.sha256) return sha256.startsWith('unreadable') ? `it is ${sha256}` : 'its sha256 is not the one written (changed or swapped)';
  return undefined;
}

export interface ImportOptions {
  file: string;
  mode: 'server' | 'replay';
  mapping?: ReplayMapping | undefined;
  /** Longest wait for a server-side import (default 10 minutes). */
  timeoutMs?: number | undefined;
  /** The lease on the target tenant's imports of this playbook (--wait-lock, --lock-ttl, --no-lock). */
  lock?: LeaseSettings | undefined;
}

/**
 * Imports one archive into the client's tenant. The archive is checked whole first: a bad one is
 * refused (exit 2) before anything is created. Importing the same archive into the same tenant
 * again resumes or, when it is done, finds everything in place and creates nothing.
 */
export async function importArchive(opts: ImportOptions, deps: PlaybookDeps): Promise<JobSummary> {
  const { client, store } = deps;
  const archive = await openArchive(resolve(opts.file));
  const contentKey = createHash('sha256').update(canonicalJson(archive.manifest.entries)).digest('hex');
  const target = client.transport.address.baseUrl;
  const jobKey = `playbooks-import|${opts.mode}|${target}|${contentKey}`;
  const parts = countParts(archive.playbook);
  const from = archive.manifest.playbook.objectIdentifier;
  const lease = serviceLease(client, tenantLeaseTarget(`playbook/${from}`, 'playbooks-import', `imports of playbook ${from} into ${describeTarget(client.target)}`), opts.lock);
  return runJob({ store, job: 'playbooks-import', jobKey, params: { file: archive.path, mode: opts.mode, playbook: archive.manifest.playbook }, target: client.target, lease, pages: [client.transport.pages] }, async (ctx) => {
    await ctx.writeGate?.();
    const ids = new IdMap(store, jobKey, ctx.run.id, ctx.uploadId, ctx.writeGate);
    const source = { ...archive.manifest.source, playbook: archive.manifest.playbook };
    if (opts.mode === 'replay') {
      ctx.counts.discovered = Object.values(parts).reduce((a, b) => a + b, 0);
      const result = await replayImport(archive, client, ids, ctx, opts.mapping);
      return { mode: 'replay', source, parts, ...result };
    }
    ctx.counts.discovered = 1;
    const result = await serverImport(archive, client, ids, contentKey, { timeoutMs: opts.timeoutMs ?? 600_000, signal: ctx.signal });
    if (result.succeeded) {
      if (result.outcome === 'created') ctx.counts.uploaded++;
      else ctx.counts.reconciled++;
    } else failItem(ctx, archive.manifest.playbook.objectIdentifier, new Error(`the service refused the import: ${result.message ?? 'no reason given'}`));
    return { mode: 'server', source, parts, ...result };
  });
}

/** What a restore from a backup folder takes for one playbook: its newest good archive, and the newer ones passed over. */
export interface RestoreChoice {
  playbookIdentifier: string;
  name: string | null;
  /** The archive to import (absolute), or none when no backup of the playbook is whole. */
  file?: string;
  exportedAt?: string;
  /** Newer archives of the playbook that were not whole, each with why. */
  passedOver: { file: string; why: string }[];
}

/**
 * For each playbook a backup folder holds, the newest archive that is whole: on disk with the
 * size and sha256 its index recorded, holding that playbook, and read whole by the archive checks.
 * Reads only. A folder without an index is not a backup folder (exit 2, naming what to give).
 */
export async function newestGoodBackups(folder: string): Promise<RestoreChoice[]> {
  const out = resolve(folder);
  if (!(await stat(join(out, INDEX_FILE)).catch(() => undefined))?.isFile()) {
    throw new ConfigurationError(`${folder} is a folder without ${INDEX_FILE}: not one \`ferry playbooks backup\` wrote; give one archive (.zip), or the backup folder`);
  }
  const index = await readIndex(out);
  const choices: RestoreChoice[] = [];
  for (const [playbookIdentifier, newestFirst] of backupsByPlaybook(index)) {
    const choice: RestoreChoice = { playbookIdentifier, name: newestFirst[0]?.name ?? null, passedOver: [] };
    for (const b of newestFirst) {
      const why = (await damaged(out, b)) ?? (await unreadable(join(out, b.file), playbookIdentifier));
      if (why === undefined) {
        choice.file = join(out, b.file);
        choice.exportedAt = b.exportedAt;
        break;
      }
      choice.passedOver.push({ file: b.file, why });
    }
    choices.push(choice);
  }
  return choices;
}

/** Why an archive cannot be restored as a backup of `playbook` (refused by the archive checks, another playbook's), or undefined. */
async function unreadable(path: string, playbook: string): Promise<string | undefined> {
  try {
    const held = (await openArchive(path)).manifest.playbook.objectIdentifier;
    return held === playbook ? undefined : `it holds playbook ${held}`;
  } catch (err) {
    if (err instanceof ArchiveRejectedError) return err.message;
    throw err;
  }
}

/** The index's backups of each playbook, newest first: what a backup, a restore and retention read. */
function backupsByPlaybook(index: BackupIndex): Map<string, BackupEntry[]> {
  const by = new Map<string, BackupEntry[]>();
  for (const b of index.backups) by.set(b.playbookIdentifier, [...(by.get(b.playbookIdentifier) ?? []), b]);
  for (const list of by.values()) list.sort((a, b) => Date.parse(b.exportedAt) - Date.parse(a.exportedAt));
  return by;
}

/** One archive the backup folder holds, as its index records it. */
export interface BackupEntry {
  playbookIdentifier: string;
  name: string | null;
  /** Relative to the backup folder. */
  file: string;
  exportedAt: string;
  bytes: number;
  sha256: string;
  contentSha256: string;
}

export interface BackupIndex {
  format: 'ferry-playbook-backups';
  version: 1;
  backups: BackupEntry[];
  /** Archives found damaged and replaced: moved aside, kept, no longer backups (nor counted by retention). */
  quarantined?: QuarantinedEntry[];
}

export interface QuarantinedEntry extends BackupEntry {
  /** Where it was when it was a backup. */
  was: string;
  why: string;
  quarantinedAt: string;
}

/** A damaged archive's new name: beside where it was, plainly marked, no longer a `.zip`. */
export const QUARANTINE_SUFFIX = '.quarantined';

async function quarantine(out: string, entry: BackupEntry, why: string, now: Date): Promise<QuarantinedEntry> {
  const file = `${entry.file}${QUARANTINE_SUFFIX}`;
  await rename(join(out, entry.file), join(out, file));
  return { ...entry, file, was: entry.file, why, quarantinedAt: now.toISOString() };
}

export const INDEX_FILE = 'index.json';

export interface BackupOptions extends RetentionRules {
  out: string;
  /** The time this backup is taken (tests move it; default now). */
  now?: Date | undefined;
  onDone?: ((playbook: string, outcome: 'written' | 'unchanged') => void) | undefined;
  /** The lease on backups of this tenant into this folder (--wait-lock, --lock-ttl, --no-lock). */
  lock?: LeaseSettings | undefined;
}

/**
 * Exports every playbook into `out/<name>-<id>/<time>.zip`, keeping a new archive only when its
 * content differs from the playbook's newest backup (the manifest's entries compared by sha256),
 * then prunes each playbook's archives by the retention rules. `out/index.json` says what is where.
 */
export async function backupPlaybooks(opts: BackupOptions, deps: PlaybookDeps): Promise<JobSummary> {
  const { client, store } = deps;
  const out = resolve(opts.out);
  const jobKey = `playbooks-backup|${client.transport.address.baseUrl}|${out}`;
  // Two backups into one shared folder (two machines mounting it at the same path) take turns:
  // the lease is held on the tenant they read, named by the folder.
  const lease = serviceLease(client, tenantLeaseTarget(`backup${out}`, 'playbooks-backup', `backups of ${describeTarget(client.target)} into ${out}`), opts.lock);
  return runJob({ store, job: 'playbooks-backup', jobKey, params: { out, keep: opts.keep, keepDaily: opts.keepDaily, keepWeekly: opts.keepWeekly }, target: client.target, lease, pages: [client.transport.pages] }, async (ctx) => {
    await mkdir(out, { recursive: true });
    const index = await readIndex(out);
    const now = opts.now ?? new Date();
    const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
    const written: BackupEntry[] = [];
    let unchanged = 0;
    const healed: { playbook: string; file: string; why: string; quarantinedAs?: string }[] = [];
    for await (const playbook of client.playbooks.searchAll()) {
      if (ctx.signal.aborted) break;
      ctx.counts.discovered++;
      const folder = archiveName(playbook).replace(/\.zip$/, '');
      const file = `${folder}/${stamp}.zip`;
      const temp = join(out, `.${folder}.${randomBytes(6).toString('hex')}.zip`);
      try {
        await ctx.writeGate?.();
        await mkdir(join(out, folder), { recursive: true });
        const result = await exportPlaybook(client, playbook, temp, ctx.signal);
        const newest = index.backups.filter((b) => b.playbookIdentifier === playbook.objectIdentifier).sort((a, b) => Date.parse(b.exportedAt) - Date.parse(a.exportedAt))[0];
        // The newest archive must still be there, whole, before the playbook counts as backed up.
        const broken = newest ? await damaged(out, newest) : undefined;
        if (newest && broken) {
          deps.client.transport.logger.warn({ playbook: playbook.objectIdentifier }, 'the newest backup of a playbook is missing or changed on disk: a new one is written');
          // A damaged archive is moved aside, kept and plainly named, never deleted; one that is
          // gone only leaves the index. Either way it no longer counts as a backup.
          const moved = broken === 'it is not on disk' ? undefined : await quarantine(out, newest, broken, now);
          if (moved) index.quarantined = [...(index.quarantined ?? []), moved];
          index.backups = index.backups.filter((b) => b !== newest);
          healed.push({ playbook: playbook.objectIdentifier, file: newest.file, why: broken, ...(moved ? { quarantinedAs: moved.file } : {}) });
        } else if (newest && newest.contentSha256 === result.contentSha256) {
          await rm(temp, { force: true });
          ctx.counts.unchanged++;
          unchanged++;
          opts.onDone?.(playbook.objectIdentifier, 'unchanged');
          continue;
        }
        await rename(temp, join(out, file));
        const entry: BackupEntry = { playbookIdentifier: playbook.objectIdentifier, name: playbook.name, file, exportedAt: now.toISOString(), bytes: result.bytes, sha256: result.sha256, contentSha256: result.contentSha256 };
        // Written again in the same second as a damaged one: the file was replaced, so is its line.
        index.backups = index.backups.filter((b) => b.file !== file);
        index.backups.push(entry);
        written.push(entry);
        ctx.counts.uploaded++;
        ctx.bytes += result.bytes;
        opts.onDone?.(playbook.objectIdentifier, 'written');
        // The index follows every archive, so a run stopped half-way leaves no archive unknown.
        await writeIndex(out, index);
      } catch (err) {
        await rm(temp, { force: true });
        if (ctx.signal.aborted) break;
        failItem(ctx, playbook.objectIdentifier, err);
      }
    }
    const pruned = await prune(out, index, opts);
    await writeIndex(out, index);
    return { out, index: join(out, INDEX_FILE), written, unchanged, pruned, ...(healed.length ? { healed } : {}) };
  });
}

async function prune(out: string, index: BackupIndex, rules: RetentionRules): Promise<string[]> {
  const pruned: string[] = [];
  for (const backups of backupsByPlaybook(index).values()) {
    const keep = toKeep(backups, rules);
    for (const b of backups) {
      if (keep.has(b)) continue;
      await rm(join(out, b.file), { force: true });
      pruned.push(b.file);
    }
  }
  const gone = new Set(pruned);
  index.backups = index.backups.filter((b) => !gone.has(b.file));
  return pruned;
}

export async function readIndex(out: string): Promise<BackupIndex> {
  let text: string;
  try {
    text = await readFile(join(out, INDEX_FILE), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { format: 'ferry-playbook-backups', version: 1, backups: [] };
    throw err;
  }
  const index = JSON.parse(text) as BackupIndex;
  if (index.format !== 'ferry-playbook-backups' || !Array.isArray(index.backups)) throw new ArchiveRejectedError(`${join(out, INDEX_FILE)} is not a ferry backup index`);
  return index;
}

/** Written under a new temporary name, then renamed: a reader never sees half an index, and a link at its name is replaced, never followed. */
async function writeIndex(out: string, index: BackupIndex): Promise<void> {
  await writeWhole(join(out, INDEX_FILE), `${JSON.stringify(index, null, 2)}\n`);
}
