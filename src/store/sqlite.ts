// The checkpoint store on SQLite (better-sqlite3, WAL). Intents are committed one by one before
// their request leaves; results are batched into transactions, since losing
// them in a crash only means the item is settled against the service on the next run.
import Database from 'better-sqlite3';
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { hostname } from 'node:os';
import { migrate } from './migrations.js';
import { pidAlive } from '../processes.js';
import type {
  CheckpointStore,
  Intent,
  ItemFingerprint,
  ItemRecord,
  ItemState,
  LockHolder,
  RunCounts,
  RunRecord,
  RunStatus,
  StartRun,
  WrittenItem,
} from './types.js';

export interface SqliteStoreOptions {
  /** The words (shell-quoted, each after a space) a later command needs to open this store again: '' for its profile's default store. */
  reopenFlags?: string;
  /** Batched writes are flushed at least this often (default 200 ms) and at every `flush()`. */
  flushIntervalMs?: number;
  /** ...or when this many are waiting (default 500). */
  maxPending?: number;
  now?: () => Date;
}

const EMPTY_COUNTS: RunCounts = { discovered: 0, uploaded: 0, unchanged: 0, skipped: 0, failed: 0, reconciled: 0 };

/**
 * Rows adopted per statement: a statement per row spent a third of an adoption stepping and binding
 * (10,000 rows through adopt(): 11.2 us a row with one, 8.2 with 50; medians of 12 rounds).
 */
const ADOPT_ROWS = 50;

/** Adopts `rows` items as uploaded (positional parameters: binding by name costs twice as much). */
function adoptStatement(db: Database.Database, rows: number): Database.Statement {
  const row = "(?, ?, ?, ?, ?, 'uploaded', ?, ?, 0, ?, ?)";
  return db.prepare(
    `INSERT INTO items (job_id, source_key, size, mtime_ms, sha256, state, remote_id, parent_id, attempts, updated_at, attrs)
     VALUES ${Array<string>(rows).fill(row).join(', ')}
     ON CONFLICT (job_id, source_key) DO UPDATE SET
       state = 'uploaded', last_error = NULL, size = excluded.size, mtime_ms = excluded.mtime_ms, sha256 = excluded.sha256,
       remote_id = excluded.remote_id, parent_id = excluded.parent_id, updated_at = excluded.updated_at, attrs = excluded.attrs`,
  );
}

interface RunRow {
  id: number;
  job: string;
  job_key: string;
  params: string;
  status: RunStatus;
  started_at: string;
  ended_at: string | null;
  counts: string;
  bytes: number;
  upload_id: string | null;
  errors: string;
}

interface ItemRow {
  source_key: string;
  size: number;
  mtime_ms: number;
  sha256: string | null;
  attrs?: string | null;
  state: ItemState;
  remote_id: string | null;
  superseded_ids: string;
  upload_id: string | null;
  parent_id: string | null;
  run_id: number | null;
  attempts: number;
  last_error: string | null;
  updated_at: string;
}

export class SqliteCheckpointStore implements CheckpointStore {
  private readonly db: Database.Database;
  private readonly pending: (() => void)[] = [];
  /** Items with a batched write not yet on disk; reading one of them flushes first. */
  private readonly dirty = new Set<string>();
  private readonly jobIds = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;
  private readonly maxPending: number;
  private readonly now: () => Date;
  private readonly s;

  readonly reopenFlags: string;

  constructor(path: string, opts: SqliteStoreOptions = {}) {
    this.reopenFlags = opts.reopenFlags ?? '';
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.db = new Database(path);
    // First: a second process opening the same new store waits rather than failing.
    this.db.pragma('busy_timeout = 5000');
    walMode(this.db);
    // NORMAL in WAL mode: a commit survives the process being killed (only an OS crash may lose it).
    this.db.pragma('synchronous = NORMAL');
    // A rerun looks up every file: a 16 MiB page cache holds the hot part of the item index, the
    // OS's file cache the rest. No mmap: its pages count in the process's RSS and grew it with
    // the store (a million items: a 580 MB file, 256 MiB of it mapped).
    this.db.pragma('cache_size = -16384');
    migrate(this.db);
    this.now = opts.now ?? (() => new Date());
    this.maxPending = opts.maxPending ?? 500;
    this.timer = setInterval(() => this.flush(), opts.flushIntervalMs ?? 200);
    this.timer.unref();
    const db = this.db;
    this.s = {
      insertRun: db.prepare(
        `INSERT INTO runs (job, job_key, params, status, started_at, counts, bytes, upload_id, errors)
         VALUES (?, ?, ?, 'running', ?, ?, 0, ?, '[]')`,
      ),
      getRun: db.prepare('SELECT * FROM runs WHERE id = ?'),
      updateRun: db.prepare('UPDATE runs SET counts = ?, bytes = ?, errors = ? WHERE id = ?'),
      finishRun: db.prepare('UPDATE runs SET status = ?, ended_at = ?, counts = ?, bytes = ?, errors = ? WHERE id = ?'),
      markInterrupted: db.prepare("UPDATE runs SET status = 'interrupted', ended_at = ? WHERE id = ? AND status = 'running'"),
      reopenRun: db.prepare("UPDATE runs SET status = 'running', ended_at = NULL WHERE id = ?"),
      getLock: db.prepare('SELECT run_id AS runId, pid, host, acquired_at AS acquiredAt, token, process_start AS processStart, dead_tokens AS deadTokens FROM locks WHERE job_key = ?'),
      putLock: db.prepare('INSERT OR REPLACE INTO locks (job_key, run_id, pid, host, acquired_at, token, process_start, dead_tokens) VALUES (?, ?, ?, ?, ?, ?, ?, ?)'),
      setLockRun: db.prepare('UPDATE locks SET run_id = ? WHERE job_key = ? AND token = ?'),
      dropLock: db.prepare('DELETE FROM locks WHERE job_key = ? AND token = ?'),
      getItem: db.prepare('SELECT * FROM items WHERE job_id = ? AND source_key = ?'),
      fingerprint: db.prepare('SELECT state, remote_id, size, mtime_ms, sha256, attrs FROM items WHERE job_id = ? AND source_key = ?').raw(),
      intent: db.prepare(
        `INSERT INTO items (job_id, source_key, size, mtime_ms, sha256, attrs, state, upload_id, parent_id, run_id, attempts, updated_at)
         VALUES (@jobId, @sourceKey, @size, @mtimeMs, @sha256, @attrs, 'in-flight', @uploadId, @parentId, @runId, 1, @now)
         ON CONFLICT (job_id, source_key) DO UPDATE SET
           size = @size, mtime_ms = @mtimeMs, sha256 = @sha256, attrs = @attrs, state = 'in-flight', upload_id = @uploadId,
           parent_id = @parentId, run_id = @runId, attempts = attempts + 1, updated_at = @now`,
      ),
      // An upsert: destinations that need no intent (a local folder) record results only.
      uploaded: db.prepare(
        `INSERT INTO items (job_id, source_key, size, mtime_ms, sha256, attrs, state, remote_id, parent_id, attempts, updated_at)
         VALUES (@jobId, @sourceKey, @size, @mtimeMs, @sha256, @attrs, 'uploaded', @remoteId, @parentId, 1, @now)
         ON CONFLICT (job_id, source_key) DO UPDATE SET
           state = 'uploaded', last_error = NULL, size = @size, mtime_ms = @mtimeMs, sha256 = @sha256, attrs = @attrs, parent_id = @parentId,
           superseded_ids = CASE WHEN remote_id IS NOT NULL AND remote_id <> @remoteId
             THEN json_insert(superseded_ids, '$[#]', remote_id) ELSE superseded_ids END,
           remote_id = @remoteId, updated_at = @now`,
      ),
      sameContent: db.prepare("UPDATE items SET mtime_ms = @mtimeMs, sha256 = @sha256, updated_at = @now WHERE job_id = @jobId AND source_key = @sourceKey AND state = 'uploaded'"),
      failed: db.prepare(
        `INSERT INTO items (job_id, source_key, size, mtime_ms, state, run_id, attempts, last_error, updated_at)
         VALUES (@jobId, @sourceKey, @size, @mtimeMs, 'failed', @runId, 1, @error, @now)
         ON CONFLICT (job_id, source_key) DO UPDATE SET
           state = CASE WHEN remote_id IS NOT NULL AND state <> 'in-flight' THEN state ELSE 'failed' END,
           last_error = @error, updated_at = @now`,
      ),
      // Named: without statistics the planner walks every item of the job in key order instead.
      inFlight: db.prepare("SELECT * FROM items INDEXED BY items_in_flight WHERE job_id = ? AND state = 'in-flight' ORDER BY source_key"),
      byRemoteIds: db.prepare('SELECT remote_id, source_key FROM items WHERE job_id = ? AND remote_id IN (SELECT value FROM json_each(?))').raw(),
      uploadedKeys: db.prepare("SELECT source_key FROM items WHERE job_id = ? AND state = 'uploaded'").pluck(),
      writtenPage: db.prepare("SELECT source_key, remote_id, size, mtime_ms FROM items WHERE job_id = ? AND state = 'uploaded' AND source_key > ? ORDER BY source_key LIMIT ?").raw(),
      drifted: db.prepare("UPDATE items SET state = 'failed', last_error = ?, updated_at = ? WHERE job_id = ? AND source_key = ? AND state = 'uploaded'"),
      fingerprints: db
        .prepare('SELECT source_key, state, remote_id, size, mtime_ms, sha256, attrs FROM items WHERE job_id = ? AND source_key IN (SELECT value FROM json_each(?))')
        .raw(),
      uploadedCount: db.prepare("SELECT count(*) FROM items WHERE job_id = ? AND state = 'uploaded'").pluck(),
      hasUploaded: db.prepare("SELECT 1 FROM items WHERE job_id = ? AND state = 'uploaded' LIMIT 1").pluck(),
      getDigest: db.prepare('SELECT digest FROM group_digests WHERE job_id = ? AND folder = ? AND chunk = ?').pluck(),
      setDigest: db.prepare('INSERT OR REPLACE INTO group_digests (job_id, folder, chunk, digest) VALUES (?, ?, ?, ?)'),
      listedAt: db.prepare('SELECT listed_at FROM listings WHERE job_id = ?').pluck(),
      notice: db.prepare('INSERT INTO notices (job_id, source_key, reason, first_run) VALUES (?, ?, ?, ?) ON CONFLICT DO UPDATE SET first_run = first_run RETURNING first_run').pluck(),
      setListed: db.prepare('INSERT OR REPLACE INTO listings (job_id, listed_at, documents) VALUES (?, ?, ?)'),
      adopt: adoptStatement(db, 1),
      adoptRows: adoptStatement(db, ADOPT_ROWS),
      forgetUploaded: db.prepare("DELETE FROM items WHERE job_id = ? AND state = 'uploaded'"),
      getFolder: db.prepare('SELECT remote_id FROM folders WHERE job_id = ? AND rel_path = ?').pluck(),
      setFolder: db.prepare('INSERT OR REPLACE INTO folders (job_id, rel_path, remote_id) VALUES (?, ?, ?)'),
      jobId: db.prepare('SELECT id FROM jobs WHERE job_key = ?').pluck(),
      addJob: db.prepare('INSERT INTO jobs (job_key) VALUES (?)'),
    };
  }

  startRun(run: StartRun): RunRecord {
    const info = this.s.insertRun.run(run.job, run.jobKey, JSON.stringify(run.params), this.stamp(), JSON.stringify(EMPTY_COUNTS), run.uploadId);
    return this.mustGetRun(Number(info.lastInsertRowid));
  }

  reopenRun(runId: number): RunRecord {
    this.mustGetRun(runId);
    this.s.reopenRun.run(runId);
    return this.mustGetRun(runId);
  }

  updateRun(runId: number, patch: Partial<Pick<RunRecord, 'counts' | 'bytes' | 'errors'>>): void {
    const run = this.mustGetRun(runId);
    this.s.updateRun.run(JSON.stringify(patch.counts ?? run.counts), patch.bytes ?? run.bytes, JSON.stringify(patch.errors ?? run.errors), runId);
  }

  finishRun(runId: number, status: RunStatus, patch: Partial<Pick<RunRecord, 'counts' | 'bytes' | 'errors'>> = {}): RunRecord {
    this.flush();
    const run = this.mustGetRun(runId);
    this.s.finishRun.run(status, this.stamp(), JSON.stringify(patch.counts ?? run.counts), patch.bytes ?? run.bytes, JSON.stringify(patch.errors ?? run.errors), runId);
    // Fold the write-ahead log into the database at the end of a run: the next run's lookups
    // then read the table directly instead of searching a long log first.
    this.db.pragma('wal_checkpoint(PASSIVE)');
    return this.mustGetRun(runId);
  }

  getRun(runId: number): RunRecord | undefined {
    const row = this.s.getRun.get(runId) as RunRow | undefined;
    return row && toRun(row);
  }

  listRuns(filter: { job?: string; limit?: number } = {}): RunRecord[] {
    const rows = this.db
      .prepare(`SELECT * FROM runs ${filter.job ? 'WHERE job = @job' : ''} ORDER BY id DESC LIMIT @limit`)
      .all({ job: filter.job, limit: filter.limit ?? 50 }) as RunRow[];
    return rows.map(toRun);
  }

  acquireLock(jobKey: string, token: string, runId = 0): { ok: true; replaced?: readonly string[] } | { ok: false; holder: LockHolder } {
    // IMMEDIATE: two processes racing for the lock are serialised by SQLite itself.
    const take = this.db.transaction((): { ok: true; replaced?: readonly string[] } | { ok: false; holder: LockHolder } => {
      const holder = this.s.getLock.get(jobKey) as (LockHolder & { token: string; processStart: string | null; deadTokens: string }) | undefined;
      if (holder && holder.token === token) {
        this.s.setLockRun.run(runId, jobKey, token);
        return { ok: true };
      }
      if (holder && isAlive(holder)) return { ok: false, holder: { runId: holder.runId, pid: holder.pid, host: holder.host, acquiredAt: holder.acquiredAt } };
      // A holder that died (kill -9, power loss) never finished its run: say so.
      if (holder) this.s.markInterrupted.run(this.stamp(), holder.runId);
      // The dead holder, and every dead one it had taken over from (newest first, a bounded chain).
      const dead = holder ? [holder.token, ...deadTokensOf(holder.deadTokens)].slice(0, MAX_DEAD_TOKENS) : [];
      this.s.putLock.run(jobKey, runId, process.pid, hostname(), this.stamp(), token, processStart(process.pid), JSON.stringify(dead));
      return holder ? { ok: true, replaced: dead } : { ok: true };
    });
    return take.immediate();
  }

  releaseLock(jobKey: string, token: string): void {
    this.s.dropLock.run(jobKey, token);
  }

  getItem(jobKey: string, sourceKey: string): ItemRecord | undefined {
    if (this.dirty.has(itemKey(jobKey, sourceKey))) this.flush();
    const row = this.s.getItem.get(this.jobId(jobKey), sourceKey) as ItemRow | undefined;
    return row && toItem(jobKey, row);
  }

  fingerprint(jobKey: string, sourceKey: string): ItemFingerprint | undefined {
    if (this.dirty.has(itemKey(jobKey, sourceKey))) this.flush();
    const row = this.s.fingerprint.get(this.jobId(jobKey), sourceKey) as [ItemState, string | null, number, number, string | null, string | null] | undefined;
    return row && { state: row[0], remoteId: row[1], size: row[2], mtimeMs: row[3], sha256: row[4], attrs: row[5] };
  }

  fingerprints(jobKey: string, sourceKeys: readonly string[]): Map<string, ItemFingerprint> {
    if (sourceKeys.some((k) => this.dirty.has(itemKey(jobKey, k)))) this.flush();
    const found = new Map<string, ItemFingerprint>();
    // One statement for the whole batch: a lookup per file would cost a round through the driver each.
    // all(), not iterate(): one call into the driver for the whole batch.
    for (const row of this.s.fingerprints.all(this.jobId(jobKey), JSON.stringify(sourceKeys)) as [string, ItemState, string | null, number, number, string | null, string | null][]) {
      found.set(row[0], { state: row[1], remoteId: row[2], size: row[3], mtimeMs: row[4], sha256: row[5], attrs: row[6] });
    }
    return found;
  }

  recordIntent(jobKey: string, sourceKey: string, intent: Intent): void {
    this.recordIntents(jobKey, [{ sourceKey, intent }]);
  }

  recordIntents(jobKey: string, intents: readonly { sourceKey: string; intent: Intent }[]): void {
    // Written at once, never left pending: the intent must be on disk before the request leaves.
    // Batched results ride along in the same transaction, one commit instead of two.
    const jobId = this.jobId(jobKey);
    const now = this.stamp();
    const batch = this.pending.splice(0);
    this.dirty.clear();
    const write = () => {
      for (const w of batch) w();
      for (const { sourceKey, intent } of intents) this.s.intent.run({ jobId, sourceKey, attrs: null, ...intent, now });
    };
    if (batch.length === 0 && intents.length === 1) write();
    else this.db.transaction(write)();
  }

  recordUploaded(jobKey: string, sourceKey: string, result: { remoteId: string; size: number; mtimeMs: number; sha256: string | null; parentId: string | null; attrs?: string | null }): void {
    const now = this.stamp();
    const jobId = this.jobId(jobKey);
    this.enqueue(itemKey(jobKey, sourceKey), () => this.s.uploaded.run({ jobId, sourceKey, attrs: null, ...result, now }));
  }

  recordSameContent(jobKey: string, sourceKey: string, seen: { mtimeMs: number; sha256: string }): void {
    const now = this.stamp();
    const jobId = this.jobId(jobKey);
    this.enqueue(itemKey(jobKey, sourceKey), () => this.s.sameContent.run({ jobId, sourceKey, ...seen, now }));
  }

  recordFailed(jobKey: string, sourceKey: string, failure: { error: string; size?: number; mtimeMs?: number; runId: number }): void {
    const now = this.stamp();
    const jobId = this.jobId(jobKey);
    this.enqueue(itemKey(jobKey, sourceKey), () =>
      this.s.failed.run({ jobId, sourceKey, size: failure.size ?? 0, mtimeMs: failure.mtimeMs ?? 0, error: failure.error, runId: failure.runId, now }),
    );
  }

  inFlight(jobKey: string): ItemRecord[] {
    this.flush();
    return (this.s.inFlight.all(this.jobId(jobKey)) as ItemRow[]).map((row) => toItem(jobKey, row));
  }

  sourceKeysByRemoteId(jobKey: string, remoteIds: readonly string[]): Map<string, string> {
    this.flush();
    const found = new Map<string, string>();
    const rows = this.s.byRemoteIds.iterate(this.jobId(jobKey), JSON.stringify(remoteIds)) as IterableIterator<[string, string]>;
    for (const [remoteId, sourceKey] of rows) found.set(remoteId, sourceKey);
    return found;
  }

  *uploadedKeys(jobKey: string): IterableIterator<string> {
    this.flush();
    yield* this.s.uploadedKeys.iterate(this.jobId(jobKey)) as IterableIterator<string>;
  }

  writtenAfter(jobKey: string, after: string, limit: number): WrittenItem[] {
    this.flush();
    const rows = this.s.writtenPage.all(this.jobId(jobKey), after, limit) as [string, string | null, number, number][];
    return rows.map(([sourceKey, remoteId, size, mtimeMs]) => ({ sourceKey, remoteId, size, mtimeMs }));
  }

  recordDrift(jobKey: string, sourceKey: string, why: string): void {
    this.flush();
    this.s.drifted.run(why, this.stamp(), this.jobId(jobKey), sourceKey);
  }

  uploadedCount(jobKey: string): number {
    this.flush();
    return this.s.uploadedCount.get(this.jobId(jobKey)) as number;
  }

  hasUploaded(jobKey: string): boolean {
    this.flush();
    return this.s.hasUploaded.get(this.jobId(jobKey)) !== undefined;
  }

  groupDigest(jobKey: string, folder: string, chunk: number): string | undefined {
    // No flush: a pending write to one of these items can only come from an earlier group of this
    // run, and keys do not repeat within a walk.
    return (this.s.getDigest.get(this.jobId(jobKey), folder, chunk) as string | undefined) ?? undefined;
  }

  setGroupDigest(jobKey: string, folder: string, chunk: number, digest: string): void {
    const jobId = this.jobId(jobKey);
    this.enqueue(`${jobKey}\u0001${folder}`, () => this.s.setDigest.run(jobId, folder, chunk, digest));
  }

  noticeSeen(jobKey: string, sourceKey: string, reason: string, runId: number): boolean {
    const first = this.s.notice.get(this.jobId(jobKey), sourceKey, reason, runId) as number;
    return first !== runId;
  }

  listedAt(jobKey: string): string | undefined {
    return (this.s.listedAt.get(this.jobId(jobKey)) as string | undefined) ?? undefined;
  }

  recordListed(jobKey: string, documents: number): void {
    this.flush();
    this.s.setListed.run(this.jobId(jobKey), this.stamp(), documents);
  }

  adopt(jobKey: string, items: readonly { sourceKey: string; remoteId: string; size: number; mtimeMs: number; sha256: string | null; parentId: string | null; attrs?: string | null }[]): void {
    if (items.length === 0) return;
    this.flush();
    const jobId = this.jobId(jobKey);
    const now = this.stamp();
    // In key order, not the listing's: each transaction then writes neighbouring pages of the
    // item table, and an item costs the same as the store grows (a million: 4.7 us against 5.5).
    const inKeyOrder = [...items].sort((a, b) => (a.sourceKey < b.sourceKey ? -1 : a.sourceKey > b.sourceKey ? 1 : 0));
    const whole = inKeyOrder.length - (inKeyOrder.length % ADOPT_ROWS);
    // One array of every statement's parameters, filled in place: no array grown per statement.
    const args = new Array<unknown>(ADOPT_ROWS * 9);
    this.db.transaction(() => {
      for (let at = 0; at < whole; at += ADOPT_ROWS) {
        for (let k = 0, a = 0; k < ADOPT_ROWS; k++, a += 9) {
          const i = inKeyOrder[at + k] as (typeof inKeyOrder)[number];
          args[a] = jobId;
          args[a + 1] = i.sourceKey;
          args[a + 2] = i.size;
          args[a + 3] = i.mtimeMs;
          args[a + 4] = i.sha256;
          args[a + 5] = i.remoteId;
          args[a + 6] = i.parentId;
          args[a + 7] = now;
          args[a + 8] = i.attrs ?? null;
        }
        this.s.adoptRows.run(args);
      }
      for (const i of inKeyOrder.slice(whole)) this.s.adopt.run(jobId, i.sourceKey, i.size, i.mtimeMs, i.sha256, i.remoteId, i.parentId, now, i.attrs ?? null);
    })();
  }

  forgetUploaded(jobKey: string): void {
    this.flush();
    this.s.forgetUploaded.run(this.jobId(jobKey));
  }

  getFolder(jobKey: string, relPath: string): string | undefined {
    return (this.s.getFolder.get(this.jobId(jobKey), relPath) as string | undefined) ?? undefined;
  }

  setFolder(jobKey: string, relPath: string, remoteId: string): void {
    this.s.setFolder.run(this.jobId(jobKey), relPath, remoteId);
  }

  setFolders(jobKey: string, folders: readonly { relPath: string; remoteId: string }[]): void {
    if (folders.length === 0) return;
    const jobId = this.jobId(jobKey);
    this.db.transaction(() => {
      for (const f of folders) this.s.setFolder.run(jobId, f.relPath, f.remoteId);
    })();
  }

  flush(): void {
    if (this.pending.length === 0) return;
    const batch = this.pending.splice(0);
    this.dirty.clear();
    this.db.transaction(() => {
      for (const write of batch) write();
    })();
  }

  close(): void {
    clearInterval(this.timer);
    this.flush();
    this.db.close();
  }

  private enqueue(key: string, write: () => void): void {
    this.pending.push(write);
    this.dirty.add(key);
    if (this.pending.length >= this.maxPending) this.flush();
  }

  /** The small integer items and folders use for a job key, made on first use. */
  private jobId(jobKey: string): number {
    let id = this.jobIds.get(jobKey);
    if (id === undefined) {
      id = (this.s.jobId.get(jobKey) as number | undefined) ?? Number(this.s.addJob.run(jobKey).lastInsertRowid);
      this.jobIds.set(jobKey, id);
    }
    return id;
  }

  private stamp(): string {
    return this.now().toISOString();
  }

  private mustGetRun(runId: number): RunRecord {
    const run = this.getRun(runId);
    if (!run) throw new Error(`run ${runId} does not exist in this checkpoint store`);
    return run;
  }
}

function itemKey(jobKey: string, sourceKey: string): string {
  return `${jobKey}\u0000${sourceKey}`;
}

function toRun(row: RunRow): RunRecord {
  return {
    id: row.id,
    job: row.job,
    jobKey: row.job_key,
    params: JSON.parse(row.params) as Record<string, unknown>,
    status: row.status,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    counts: { ...EMPTY_COUNTS, ...(JSON.parse(row.counts) as RunCounts) },
    bytes: row.bytes,
    uploadId: row.upload_id,
    errors: JSON.parse(row.errors) as string[],
  };
}

function toItem(jobKey: string, row: ItemRow): ItemRecord {
  return {
    jobKey,
    sourceKey: row.source_key,
    size: row.size,
    mtimeMs: row.mtime_ms,
    sha256: row.sha256,
    attrs: row.attrs ?? null,
    state: row.state,
    remoteId: row.remote_id,
    supersededIds: JSON.parse(row.superseded_ids) as string[],
    uploadId: row.upload_id,
    parentId: row.parent_id,
    runId: row.run_id,
    attempts: row.attempts,
    lastError: row.last_error,
    updatedAt: row.updated_at,
  };
}

/**
 * Switches a store to WAL. Changing the journal mode does not wait on the busy timeout: when two
 * processes open a new store at the same moment one gets SQLITE_BUSY at once, so it waits a little
 * and tries again (for up to 5 s).
 */
function walMode(db: Database.Database): void {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let attempt = 0; ; attempt++) {
    try {
      if (db.pragma('journal_mode', { simple: true }) === 'wal') return;
      db.pragma('journal_mode = WAL');
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_BUSY' || attempt >= 250) throw err;
      Atomics.wait(pause, 0, 0, 20);
    }
  }
}

/**
 * A lock holder on this host whose process is gone left a stale lock; so did one whose pid now
 * belongs to a process started at another time (pid reuse). Other hosts are trusted.
 */
/**
 * Dead holders' tokens kept on a lock: each one is a claim on the service that may still be there
 * for up to its TTL. A handful is plenty (each link is a run killed before it cleared the last).
 */
const MAX_DEAD_TOKENS = 16;

function deadTokensOf(json: string): string[] {
  try {
    const parsed: unknown = JSON.parse(json);
    return Array.isArray(parsed) ? parsed.filter((t): t is string => typeof t === 'string' && t !== '') : [];
  } catch {
    return [];
  }
}

function isAlive(holder: LockHolder & { processStart: string | null }): boolean {
  if (holder.host !== hostname()) return true;
  if (!pidAlive(holder.pid)) return false;
  const now = processStart(holder.pid);
  return holder.processStart === null || now === null || now === holder.processStart;
}

/** The kernel's start time of a process (Linux /proc), or null where it cannot be read. */
function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 22; the command name (field 2) may hold spaces, so count from its closing parenthesis.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}
