// The checkpoint store on SQLite (better-sqlite3, WAL). Intents are committed one by one before
// their request leaves; results and "seen" marks are batched into transactions, since losing
// them in a crash only means the item is settled against the service on the next run.
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { hostname } from 'node:os';
import { migrate } from './migrations.js';
import type {
  CheckpointStore,
  ItemRecord,
  ItemState,
  LockHolder,
  RunCounts,
  RunRecord,
  RunStatus,
  StartRun,
} from './types.js';

export interface SqliteStoreOptions {
  /** Batched writes are flushed at least this often (default 200 ms) and at every `flush()`. */
  flushIntervalMs?: number;
  /** ...or when this many are waiting (default 500). */
  maxPending?: number;
  now?: () => Date;
}

const EMPTY_COUNTS: RunCounts = { discovered: 0, uploaded: 0, skipped: 0, failed: 0, reconciled: 0 };

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
  job_key: string;
  source_key: string;
  size: number;
  mtime_ms: number;
  sha256: string | null;
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
  private readonly timer: NodeJS.Timeout;
  private readonly maxPending: number;
  private readonly now: () => Date;
  private readonly s;

  constructor(path: string, opts: SqliteStoreOptions = {}) {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    // NORMAL in WAL mode: a commit survives the process being killed (only an OS crash may lose it).
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('busy_timeout = 5000');
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
      reopenRun: db.prepare("UPDATE runs SET status = 'running', ended_at = NULL WHERE id = ?"),
      getLock: db.prepare('SELECT run_id AS runId, pid, host, acquired_at AS acquiredAt FROM locks WHERE job_key = ?'),
      putLock: db.prepare('INSERT OR REPLACE INTO locks (job_key, run_id, pid, host, acquired_at) VALUES (?, ?, ?, ?, ?)'),
      dropLock: db.prepare('DELETE FROM locks WHERE job_key = ? AND run_id = ?'),
      getItem: db.prepare('SELECT * FROM items WHERE job_key = ? AND source_key = ?'),
      intent: db.prepare(
        `INSERT INTO items (job_key, source_key, size, mtime_ms, sha256, state, upload_id, parent_id, run_id, attempts, updated_at, seen_run)
         VALUES (@jobKey, @sourceKey, @size, @mtimeMs, @sha256, 'uploading', @uploadId, @parentId, @runId, 1, @now, @runId)
         ON CONFLICT (job_key, source_key) DO UPDATE SET
           size = @size, mtime_ms = @mtimeMs, sha256 = @sha256, state = 'uploading', upload_id = @uploadId,
           parent_id = @parentId, run_id = @runId, attempts = attempts + 1, updated_at = @now, seen_run = @runId`,
      ),
      uploaded: db.prepare(
        `UPDATE items SET state = 'uploaded', last_error = NULL, size = @size, mtime_ms = @mtimeMs, sha256 = @sha256, parent_id = @parentId,
           superseded_ids = CASE WHEN remote_id IS NOT NULL AND remote_id <> @remoteId
             THEN json_insert(superseded_ids, '$[#]', remote_id) ELSE superseded_ids END,
           remote_id = @remoteId, updated_at = @now
         WHERE job_key = @jobKey AND source_key = @sourceKey`,
      ),
      failed: db.prepare(
        `INSERT INTO items (job_key, source_key, size, mtime_ms, state, run_id, attempts, last_error, updated_at, seen_run)
         VALUES (@jobKey, @sourceKey, @size, @mtimeMs, 'failed', @runId, 1, @error, @now, @runId)
         ON CONFLICT (job_key, source_key) DO UPDATE SET
           state = CASE WHEN remote_id IS NOT NULL AND state <> 'uploading' THEN state ELSE 'failed' END,
           last_error = @error, updated_at = @now, seen_run = @runId`,
      ),
      inFlight: db.prepare("SELECT * FROM items WHERE job_key = ? AND state = 'uploading' ORDER BY source_key"),
      items: db.prepare('SELECT * FROM items WHERE job_key = ? ORDER BY source_key'),
      seen: db.prepare('UPDATE items SET seen_run = ? WHERE job_key = ? AND source_key = ?'),
      unseen: db.prepare("SELECT * FROM items WHERE job_key = ? AND (seen_run IS NULL OR seen_run <> ?) AND remote_id IS NOT NULL ORDER BY source_key"),
      getFolder: db.prepare('SELECT remote_id FROM folders WHERE job_key = ? AND rel_path = ?').pluck(),
      setFolder: db.prepare('INSERT OR REPLACE INTO folders (job_key, rel_path, remote_id) VALUES (?, ?, ?)'),
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

  acquireLock(jobKey: string, runId: number): { ok: true } | { ok: false; holder: LockHolder } {
    // IMMEDIATE: two processes racing for the lock are serialised by SQLite itself.
    const take = this.db.transaction((): { ok: true } | { ok: false; holder: LockHolder } => {
      const holder = this.s.getLock.get(jobKey) as LockHolder | undefined;
      if (holder && holder.runId !== runId && isAlive(holder)) return { ok: false, holder };
      this.s.putLock.run(jobKey, runId, process.pid, hostname(), this.stamp());
      return { ok: true };
    });
    return take.immediate();
  }

  releaseLock(jobKey: string, runId: number): void {
    this.s.dropLock.run(jobKey, runId);
  }

  getItem(jobKey: string, sourceKey: string): ItemRecord | undefined {
    if (this.dirty.has(itemKey(jobKey, sourceKey))) this.flush();
    const row = this.s.getItem.get(jobKey, sourceKey) as ItemRow | undefined;
    return row && toItem(row);
  }

  recordIntent(
    jobKey: string,
    sourceKey: string,
    intent: { size: number; mtimeMs: number; sha256: string | null; uploadId: string; parentId: string | null; runId: number },
  ): void {
    // Written at once, never batched: the intent must be on disk before the request leaves.
    this.flush();
    this.s.intent.run({ jobKey, sourceKey, ...intent, now: this.stamp() });
  }

  recordUploaded(jobKey: string, sourceKey: string, result: { remoteId: string; size: number; mtimeMs: number; sha256: string | null; parentId: string | null }): void {
    const now = this.stamp();
    this.enqueue(itemKey(jobKey, sourceKey), () => this.s.uploaded.run({ jobKey, sourceKey, ...result, now }));
  }

  recordFailed(jobKey: string, sourceKey: string, failure: { error: string; size?: number; mtimeMs?: number; runId: number }): void {
    const now = this.stamp();
    this.enqueue(itemKey(jobKey, sourceKey), () =>
      this.s.failed.run({ jobKey, sourceKey, size: failure.size ?? 0, mtimeMs: failure.mtimeMs ?? 0, error: failure.error, runId: failure.runId, now }),
    );
  }

  inFlight(jobKey: string): ItemRecord[] {
    this.flush();
    return (this.s.inFlight.all(jobKey) as ItemRow[]).map(toItem);
  }

  *items(jobKey: string, states?: ItemState[]): IterableIterator<ItemRecord> {
    this.flush();
    for (const row of this.s.items.iterate(jobKey) as IterableIterator<ItemRow>) {
      if (!states || states.includes(row.state)) yield toItem(row);
    }
  }

  markSeen(jobKey: string, sourceKey: string, runId: number): void {
    this.enqueue(itemKey(jobKey, sourceKey), () => this.s.seen.run(runId, jobKey, sourceKey));
  }

  *unseen(jobKey: string, runId: number): IterableIterator<ItemRecord> {
    this.flush();
    for (const row of this.s.unseen.iterate(jobKey, runId) as IterableIterator<ItemRow>) yield toItem(row);
  }

  getFolder(jobKey: string, relPath: string): string | undefined {
    return (this.s.getFolder.get(jobKey, relPath) as string | undefined) ?? undefined;
  }

  setFolder(jobKey: string, relPath: string, remoteId: string): void {
    this.s.setFolder.run(jobKey, relPath, remoteId);
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

function toItem(row: ItemRow): ItemRecord {
  return {
    jobKey: row.job_key,
    sourceKey: row.source_key,
    size: row.size,
    mtimeMs: row.mtime_ms,
    sha256: row.sha256,
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

/** A lock holder on this host whose process is gone left a stale lock. Other hosts are trusted. */
function isAlive(holder: LockHolder): boolean {
  if (holder.host !== hostname()) return true;
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
