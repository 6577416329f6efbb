// What a source holds, counted as it is walked once: files, folders and bytes, by extension, the
// largest files, the deepest and longest paths, what was skipped and which names are refused.
// Memory stays flat whatever the source's size: the tallies are bounded (a few hundred
// extensions, a few top lists), and the one thing kept per file, its size and key for the
// duplicate search, goes to a scratch SQLite file (./duplicates.ts reads it).
import type Database from 'better-sqlite3';
import type { FileEntry, SourceEntry } from '../sync/types.js';
import { openScratchDb, type ScratchDb } from '../store/scratch-db.js';

/** Extensions tallied one by one; past this many, the rest are counted together as `(other)`. */
const MAX_EXTENSIONS = 500;
/** Entries named in each top list. */
const TOP = 10;
/** Skipped or refused entries named (the rest counted). */
const NAMED = 100;
/** Distinct skip reasons kept apart (the rest under one). */
const MAX_REASONS = 50;
const INSERT_BATCH = 1_000;

export interface ExtensionTally {
  extension: string;
  files: number;
  bytes: number;
  empty: number;
  largest: { path: string; size: number };
}

export interface PathFigure {
  path: string;
  value: number;
}

export interface ReasonTally {
  reason: string;
  count: number;
  examples: string[];
}

export interface CensusFigures {
  files: number;
  folders: number;
  bytes: number;
  emptyFiles: number;
  byExtension: ExtensionTally[];
  largest: PathFigure[];
  /** By folders above the file. */
  deepest: PathFigure[];
  /** By bytes of the path (UTF-8), as the service and file systems limit them. */
  longest: PathFigure[];
  skipped: ReasonTally[];
  skippedCount: number;
  refused: { path: string; reason: string }[];
  refusedCount: number;
}

/** The extension a path's last name carries, lower case; `(none)` without one. */
export function extensionOf(path: string): string {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  return dot > 0 && dot < name.length - 1 ? name.slice(dot + 1).toLowerCase() : '(none)';
}

/** Keeps the `size` largest by value, smallest dropped first (a short sorted list: inserts are rare once full). */
class Top {
  readonly items: PathFigure[] = [];
  constructor(private readonly size = TOP) {}
  offer(path: string, value: number): void {
    if (this.items.length === this.size && value <= this.items[this.items.length - 1]!.value) return;
    let i = this.items.findIndex((x) => x.value < value);
    if (i < 0) i = this.items.length;
    this.items.splice(i, 0, { path, value });
    if (this.items.length > this.size) this.items.pop();
  }
}

export class Census {
  private files = 0;
  private folders = 0;
  private bytes = 0;
  private emptyFiles = 0;
  private readonly extensions = new Map<string, ExtensionTally>();
  private readonly largest = new Top();
  private readonly deepest = new Top(5);
  private readonly longest = new Top(5);
  private readonly skipped = new Map<string, ReasonTally>();
  private skippedCount = 0;
  private readonly refused: { path: string; reason: string }[] = [];
  private refusedCount = 0;
  private pending: FileEntry[] = [];
  private readonly insert: Database.Statement;
  private readonly flushBatch: (entries: FileEntry[]) => void;

  /** The sizes and keys of the non-empty files (and their path on disk, when they have one). */
  readonly db: Database.Database;

  private constructor(private readonly scratch: ScratchDb) {
    const db = scratch.db;
    this.db = db;
    this.insert = db.prepare('INSERT INTO files (size, key, path) VALUES (?, ?, ?)');
    this.flushBatch = db.transaction((entries: FileEntry[]) => {
      for (const e of entries) this.insert.run(e.size, e.key, e.path ?? null);
    });
  }

  static async open(): Promise<Census> {
    const scratch = await openScratchDb('scan');
    scratch.db.exec('CREATE TABLE files (id INTEGER PRIMARY KEY, size INTEGER NOT NULL, key TEXT NOT NULL, path TEXT, sha256 TEXT)');
    return new Census(scratch);
  }

  add(entry: SourceEntry): void {
    if (entry.kind === 'dir') {
      this.folders++;
      return;
    }
    if (entry.kind === 'problem') {
      if (entry.outcome === 'skipped') this.skip(entry.key, entry.reason);
      else {
        this.refusedCount++;
        if (this.refused.length < NAMED) this.refused.push({ path: entry.key, reason: entry.reason });
      }
      return;
    }
    this.files++;
    this.bytes += entry.size;
    const ext = this.extension(extensionOf(entry.key));
    ext.files++;
    ext.bytes += entry.size;
    if (entry.size === 0) {
      this.emptyFiles++;
      ext.empty++;
    }
    if (entry.size > ext.largest.size || ext.files === 1) ext.largest = { path: entry.key, size: entry.size };
    this.largest.offer(entry.key, entry.size);
    this.deepest.offer(entry.key, countSlashes(entry.key));
    this.longest.offer(entry.key, Buffer.byteLength(entry.key));
    if (entry.size > 0) {
      this.pending.push(entry);
      if (this.pending.length >= INSERT_BATCH) this.flush();
    }
  }

  /** An entry the source gave that is skipped for a reason the scan meets itself (gone since it was listed). */
  skip(path: string, reason: string): void {
    this.skippedCount++;
    let tally = this.skipped.get(reason);
    if (!tally) {
      if (this.skipped.size >= MAX_REASONS) tally = this.skipped.get('(other reasons)') ?? { reason: '(other reasons)', count: 0, examples: [] };
      else tally = { reason, count: 0, examples: [] };
      this.skipped.set(tally.reason, tally);
    }
    tally.count++;
    if (tally.examples.length < 3) tally.examples.push(path);
  }

  /** Writes what is pending to the scratch file (before the duplicate search reads it). */
  flush(): void {
    if (this.pending.length) this.flushBatch(this.pending);
    this.pending = [];
  }

  figures(): CensusFigures {
    return {
      files: this.files,
      folders: this.folders,
      bytes: this.bytes,
      emptyFiles: this.emptyFiles,
      byExtension: [...this.extensions.values()].sort((a, b) => b.bytes - a.bytes || b.files - a.files || a.extension.localeCompare(b.extension)),
      largest: this.largest.items,
      deepest: this.deepest.items,
      longest: this.longest.items,
      skipped: [...this.skipped.values()].sort((a, b) => b.count - a.count),
      skippedCount: this.skippedCount,
      refused: this.refused,
      refusedCount: this.refusedCount,
    };
  }

  async close(): Promise<void> {
    await this.scratch.close();
  }

  private extension(name: string): ExtensionTally {
    const key = this.extensions.has(name) || this.extensions.size < MAX_EXTENSIONS ? name : '(other)';
    let tally = this.extensions.get(key);
    if (!tally) {
      tally = { extension: key, files: 0, bytes: 0, empty: 0, largest: { path: '', size: 0 } };
      this.extensions.set(key, tally);
    }
    return tally;
  }
}

function countSlashes(key: string): number {
  let n = 0;
  for (let i = key.indexOf('/'); i >= 0; i = key.indexOf('/', i + 1)) n++;
  return n;
}
