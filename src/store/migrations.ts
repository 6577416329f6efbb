// Schema versions of the checkpoint store. Append new steps; never edit a shipped one.
import type Database from 'better-sqlite3';

const STEPS: readonly string[] = [
  // 1: runs, items, remote folders, locks.
  `CREATE TABLE runs (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     job TEXT NOT NULL,
     job_key TEXT NOT NULL,
     params TEXT NOT NULL,
     status TEXT NOT NULL,
     started_at TEXT NOT NULL,
     ended_at TEXT,
     counts TEXT NOT NULL,
     bytes INTEGER NOT NULL DEFAULT 0,
     upload_id TEXT,
     errors TEXT NOT NULL DEFAULT '[]'
   );
   CREATE INDEX runs_by_job ON runs (job, id);
   -- Items and folders refer to their job by a small integer: lookups per file stay cheap.
   CREATE TABLE jobs (
     id INTEGER PRIMARY KEY,
     job_key TEXT NOT NULL UNIQUE
   );
   CREATE TABLE items (
     job_id INTEGER NOT NULL,
     source_key TEXT NOT NULL,
     size INTEGER NOT NULL DEFAULT 0,
     mtime_ms INTEGER NOT NULL DEFAULT 0,
     sha256 TEXT,
     state TEXT NOT NULL,
     remote_id TEXT,
     superseded_ids TEXT NOT NULL DEFAULT '[]',
     upload_id TEXT,
     parent_id TEXT,
     run_id INTEGER,
     attempts INTEGER NOT NULL DEFAULT 0,
     last_error TEXT,
     updated_at TEXT NOT NULL,
     PRIMARY KEY (job_id, source_key)
   ) WITHOUT ROWID;
   CREATE INDEX items_by_state ON items (job_id, state);
   CREATE INDEX items_by_remote_id ON items (job_id, remote_id);
   CREATE TABLE folders (
     job_id INTEGER NOT NULL,
     rel_path TEXT NOT NULL,
     remote_id TEXT NOT NULL,
     PRIMARY KEY (job_id, rel_path)
   ) WITHOUT ROWID;
   CREATE TABLE locks (
     job_key TEXT PRIMARY KEY,
     run_id INTEGER NOT NULL,
     pid INTEGER NOT NULL,
     host TEXT NOT NULL,
     acquired_at TEXT NOT NULL
   );`,
  // 2: a lock belongs to one acquisition (token), not to a run id that another process could
  // resume; the holder's process start time tells a live holder from a reused pid.
  `ALTER TABLE locks ADD COLUMN token TEXT NOT NULL DEFAULT '';
   ALTER TABLE locks ADD COLUMN process_start TEXT;`,
  // 3: digests of groups of unchanged items (the files of one folder, in chunks), so that a rerun
  // over an unchanged folder skips the per-item lookups. A digest vouches for its items only while
  // none of them changes: every write to an item drops the digests of its folder, by trigger, so
  // that no code path can forget to. `folder` is the key up to and including its last '/'.
  `CREATE TABLE group_digests (
     job_id INTEGER NOT NULL,
     folder TEXT NOT NULL,
     chunk INTEGER NOT NULL,
     digest TEXT NOT NULL,
     PRIMARY KEY (job_id, folder, chunk)
   ) WITHOUT ROWID;
   CREATE TRIGGER items_insert_drops_digest AFTER INSERT ON items BEGIN
     DELETE FROM group_digests WHERE job_id = NEW.job_id AND folder = rtrim(NEW.source_key, replace(NEW.source_key, '/', ''));
   END;
   CREATE TRIGGER items_update_drops_digest AFTER UPDATE ON items BEGIN
     DELETE FROM group_digests WHERE job_id = OLD.job_id AND folder = rtrim(OLD.source_key, replace(OLD.source_key, '/', ''));
     DELETE FROM group_digests WHERE job_id = NEW.job_id AND folder = rtrim(NEW.source_key, replace(NEW.source_key, '/', ''));
   END;
   CREATE TRIGGER items_delete_drops_digest AFTER DELETE ON items BEGIN
     DELETE FROM group_digests WHERE job_id = OLD.job_id AND folder = rtrim(OLD.source_key, replace(OLD.source_key, '/', ''));
   END;`,
  // 4: destinations listed on the service (a cold start, or --resync): a store that has never
  // listed a destination and holds nothing for it lists it before deciding anything.
  `CREATE TABLE listings (
     job_id INTEGER PRIMARY KEY,
     listed_at TEXT NOT NULL,
     documents INTEGER NOT NULL
   );`,
  // 5: what a job was told about an entry it skipped (an older document at the same path, say):
  // told once by name, then counted, not repeated line for line on every incremental run.
  `CREATE TABLE notices (
     job_id INTEGER NOT NULL,
     source_key TEXT NOT NULL,
     reason TEXT NOT NULL,
     first_run INTEGER NOT NULL,
     PRIMARY KEY (job_id, source_key, reason)
   ) WITHOUT ROWID;`,
  // 6: an item written touches its table and one small index only. Indexes over every item by
  // state and by remote id put each insert at a random place in two more B-trees: adopting a
  // listing of a million cost 37 us an item and grew with the store, 5.5 us without them. Only
  // uploads in flight are looked up by state; lookups by remote id (a report's failed documents,
  // a handful) read the job's items instead.
  `DROP INDEX items_by_state;
   DROP INDEX items_by_remote_id;
   CREATE INDEX items_uploading ON items (job_id, source_key) WHERE state = 'uploading';`,
  // 7: the triggers of step 3 run their DELETE only for a job that has a digest at all. A job
  // without one (a cold start adopting a listing, a first mirror) paid for a folder name cut out
  // of every key it wrote and a search that found nothing: adopting 10,000 rows took 46-48 ms
  // with it, 37-41 with the probe alone (medians of 8 rounds, twice).
  `DROP TRIGGER items_insert_drops_digest;
   DROP TRIGGER items_update_drops_digest;
   DROP TRIGGER items_delete_drops_digest;
   CREATE TRIGGER items_insert_drops_digest AFTER INSERT ON items
   WHEN EXISTS (SELECT 1 FROM group_digests WHERE job_id = NEW.job_id) BEGIN
     DELETE FROM group_digests WHERE job_id = NEW.job_id AND folder = rtrim(NEW.source_key, replace(NEW.source_key, '/', ''));
   END;
   CREATE TRIGGER items_update_drops_digest AFTER UPDATE ON items
   WHEN EXISTS (SELECT 1 FROM group_digests WHERE job_id IN (OLD.job_id, NEW.job_id)) BEGIN
     DELETE FROM group_digests WHERE job_id = OLD.job_id AND folder = rtrim(OLD.source_key, replace(OLD.source_key, '/', ''));
     DELETE FROM group_digests WHERE job_id = NEW.job_id AND folder = rtrim(NEW.source_key, replace(NEW.source_key, '/', ''));
   END;
   CREATE TRIGGER items_delete_drops_digest AFTER DELETE ON items
   WHEN EXISTS (SELECT 1 FROM group_digests WHERE job_id = OLD.job_id) BEGIN
     DELETE FROM group_digests WHERE job_id = OLD.job_id AND folder = rtrim(OLD.source_key, replace(OLD.source_key, '/', ''));
   END;`,
  // 8: the tokens of every dead holder a lock was taken over from, in a chain: a holder killed
  // after taking over a dead one's lock, but before its lease removed that one's claim from the
  // service, hands both on, so that the next run need not wait out the older claim's TTL.
  `ALTER TABLE locks ADD COLUMN dead_tokens TEXT NOT NULL DEFAULT '[]';`,
  // 9: the identity of what a document carries beside its content (a manifest row's metadata and
  // settings, src/manifest): a changed row is a changed file. NULL where no row applied.
  `ALTER TABLE items ADD COLUMN attrs TEXT;`,
  // 10: one name for an item whose intent is written and whose outcome is not: "in flight" (it was
  // also called "uploading", a third name for the same thing). The partial index follows the word.
  `DROP INDEX items_uploading;
   UPDATE items SET state = 'in-flight' WHERE state = 'uploading';
   CREATE INDEX items_in_flight ON items (job_id, source_key) WHERE state = 'in-flight';`,
];

export const SCHEMA_VERSION = STEPS.length;

/**
 * Brings the database to the current version; refuses one written by a newer ferry. The version
 * is read and raised inside one IMMEDIATE transaction: two processes opening a new store at the
 * same moment (overlapping cron runs) would otherwise both create its tables.
 */
export function migrate(db: Database.Database): void {
  db.transaction(() => {
    const current = db.pragma('user_version', { simple: true }) as number;
    if (current > STEPS.length) {
      throw new Error(`this checkpoint store has schema version ${current}, newer than this ferry understands (${STEPS.length}); upgrade ferry`);
    }
    for (let v = current; v < STEPS.length; v++) {
      db.exec(STEPS[v] as string);
      db.pragma(`user_version = ${v + 1}`);
    }
  }).immediate();
}
