// Named copies of the emulator's whole state, and the step that puts one back (the control API's
// snapshots, docs/emulator.md). A snapshot is a folder: the database as `VACUUM INTO` writes it,
// the blobs beside it (hard links on disk), and what it holds in `snapshot.json`. Taking one is a
// single synchronous step, so no request is half in it: the database and the blobs are copied
// between two requests, and a document's row never exists before its blob (uploads store the blob
// first). Putting one back copies its rows into the open database in one transaction, so every
// prepared statement of every part stays valid.
import type Database from 'better-sqlite3';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LEASE_RECORD_PREFIX } from '../../contract/conventions.js';
import { HttpError } from '../context.js';
import type { KeptBlobStore } from './blobs.js';

export interface SnapshotInfo {
  name: string;
  /** The emulator's clock when it was taken. */
  createdAt: string;
  /** Documents (folders left out) it holds. */
  documents: number;
  projects: number;
  /** Bytes of its database file. */
  stateBytes: number;
  /** Blobs it holds and their bytes (on disk hard links: shared with the live store until either changes). */
  blobs: number;
  blobBytes: number;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const INFO = 'snapshot.json';
const STATE = 'state.sqlite';
/** Rows that describe the emulator instance, not the service's data: kept across restores and resets. */
const INSTANCE_TABLES = new Set(['schema_migrations', 'emulator_meta']);

/** The tables that hold the service's data, in a stable order. */
export function dataTables(db: Database.Database, schema = 'main'): string[] {
  const names = db.prepare<[], string>(`SELECT name FROM ${schema}.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`).pluck().all();
  return names.filter((n) => !INSTANCE_TABLES.has(n));
}

/**
 * Runs `fill` in one transaction with foreign keys off, then checks them all before it commits.
 * Off, not deferred: SQLite copies a whole table by `INSERT … SELECT *` without looking at the
 * rows that refer to it, so a deferred check would count children inserted before their parents
 * as broken for good.
 */
export function replaceData(db: Database.Database, fill: () => void): void {
  db.pragma('foreign_keys = OFF');
  try {
    db.transaction(() => {
      for (const table of dataTables(db)) db.prepare(`DELETE FROM main.${quoted(table)}`).run();
      fill();
      const broken = db.pragma('main.foreign_key_check') as { table: string }[];
      if (broken.length) throw new HttpError(409, 'Conflict', `The state put back would leave ${broken.length} rows of ${[...new Set(broken.map((b) => b.table))].join(', ')} referring to rows it does not hold; nothing was changed.`);
    })();
  } finally {
    db.pragma('foreign_keys = ON');
  }
}

export class Snapshots {
  constructor(
    private readonly db: Database.Database,
    private readonly blobs: KeptBlobStore,
    /** Where the snapshots' folders live: under --data, or a temporary folder removed at close. */
    private readonly root: string,
  ) {
    mkdirSync(root, { recursive: true });
    // A snapshot whose taking was cut off (the process killed) never got its info.
    for (const entry of readdirSync(root)) if (!existsSync(join(root, entry, INFO))) rmSync(join(root, entry), { recursive: true, force: true });
  }

  list(): SnapshotInfo[] {
    const found: SnapshotInfo[] = [];
    for (const entry of readdirSync(this.root, { withFileTypes: true })) {
      if (!entry.isDirectory() || !NAME.test(entry.name)) continue;
      const info = this.read(entry.name);
      if (info) found.push(info);
    }
    return found.sort((a, b) => a.name.localeCompare(b.name));
  }

  get(name: string): SnapshotInfo {
    const info = this.read(checkName(name));
    if (!info) throw new HttpError(404, 'Not Found', `No snapshot named ${JSON.stringify(name)}.`);
    return info;
  }

  /** Takes one now; a name in use is a 409 unless `replace`. Its info is written last: a folder without it is a taking cut off, never listed. */
  take(name: string, createdAt: string, replace = false): SnapshotInfo {
    const dir = join(this.root, checkName(name));
    if (!replace && existsSync(join(dir, INFO))) throw new HttpError(409, 'Conflict', `A snapshot named ${JSON.stringify(name)} exists; delete it first or send "replace": true.`);
    this.discard(dir);
    mkdirSync(dir, { recursive: true });
    try {
      this.db.prepare('VACUUM INTO ?').run(join(dir, STATE));
      const blobs = this.blobs.saveCopy(join(dir, 'blobs'));
      const count = (sql: string, ...params: (string | number)[]) => this.db.prepare<(string | number)[], number>(sql).pluck().get(...params) ?? 0;
      const info: SnapshotInfo = {
        name,
        createdAt,
        documents: count('SELECT count(*) FROM documents WHERE is_directory = 0'),
        projects: count('SELECT count(*) FROM projects WHERE removed_at IS NULL AND substr(name, 1, ?) <> ?', LEASE_RECORD_PREFIX.length, LEASE_RECORD_PREFIX),
        stateBytes: statSync(join(dir, STATE)).size,
        blobs: blobs.files,
        blobBytes: blobs.bytes,
      };
      writeFileSync(join(dir, `${INFO}.tmp`), `${JSON.stringify(info, null, 2)}\n`);
      renameSync(join(dir, `${INFO}.tmp`), join(dir, INFO));
      return info;
    } catch (error) {
      this.discard(dir);
      throw error;
    }
  }

  /**
   * Puts a snapshot's rows and blobs back in place of the present ones, synchronously. Ferry's
   * lease records in it are removed: the runs that held them are not running in the state put
   * back, and the next run must not wait out their time (docs/emulator.md, Snapshots).
   */
  restore(name: string): SnapshotInfo {
    const info = this.get(name);
    const dir = join(this.root, name);
    const db = this.db;
    db.prepare('ATTACH DATABASE ? AS snapshot').run(join(dir, STATE));
    try {
      const schema = (s: string) => db.prepare<[], string>(`SELECT part || ':' || version FROM ${s}.schema_migrations ORDER BY part, version`).pluck().all().join(',');
      if (schema('snapshot') !== schema('main')) {
        throw new HttpError(409, 'Conflict', `The snapshot ${JSON.stringify(name)} was taken by an emulator with another schema; take it again with this one.`);
      }
      replaceData(db, () => {
        for (const table of dataTables(db)) db.prepare(`INSERT INTO main.${quoted(table)} SELECT * FROM snapshot.${quoted(table)}`).run();
        db.prepare(`DELETE FROM main.projects WHERE substr(name, 1, ?) = ?`).run(LEASE_RECORD_PREFIX.length, LEASE_RECORD_PREFIX);
      });
    } finally {
      db.exec('DETACH DATABASE snapshot');
    }
    this.blobs.loadCopy(join(dir, 'blobs'));
    return info;
  }

  remove(name: string): void {
    this.get(name);
    this.discard(join(this.root, name));
  }

  private discard(dir: string): void {
    this.blobs.dropCopy(join(dir, 'blobs'));
    rmSync(dir, { recursive: true, force: true });
  }

  private read(name: string): SnapshotInfo | undefined {
    try {
      return JSON.parse(readFileSync(join(this.root, name, INFO), 'utf8')) as SnapshotInfo;
    } catch {
      return undefined;
    }
  }
}

function checkName(name: unknown): string {
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw new HttpError(400, 'Bad Request', `A snapshot name is 1 to 64 letters, digits, dots, dashes and underscores, starting with a letter or digit; not ${JSON.stringify(name)}.`);
  }
  return name;
}

function quoted(identifier: string): string {
  return `"${identifier.replace(/"/g, '""')}"`;
}
