// Sorting more rows than memory should hold: rows go into a throwaway SQLite file in the temporary
// folder, and come back in key order through SQLite's own external merge sort. What `ferry ls`
// sorts a project's listing with: a million documents in order, memory flat.
import { openScratchDbSync } from './scratch-db.js';

const BATCH = 1_000;

export class SpillSort<T> {
  private readonly scratch = openScratchDbSync('sort');
  private readonly db = this.scratch.db;
  private readonly insert;
  private pending: [Buffer, string, string][] = [];
  private readonly flushBatch;

  constructor() {
    this.db.exec('CREATE TABLE rows (seq INTEGER PRIMARY KEY, k BLOB NOT NULL, t TEXT NOT NULL, v TEXT NOT NULL)');
    this.insert = this.db.prepare('INSERT INTO rows (k, t, v) VALUES (?, ?, ?)');
    this.flushBatch = this.db.transaction((rows: [Buffer, string, string][]) => {
      for (const [k, t, v] of rows) this.insert.run(k, t, v);
    });
  }

  /** Adds a row; rows with equal keys come back by `tie`, then in the order added. */
  add(key: Buffer, value: T, tie = ''): void {
    this.pending.push([key, tie, JSON.stringify(value)]);
    if (this.pending.length >= BATCH) this.flush();
  }

  /** Every row added, by key (bytewise), then tie, then in the order added. */
  *sorted(): Iterable<T> {
    this.flush();
    for (const row of this.db.prepare<[], { v: string }>('SELECT v FROM rows ORDER BY k, t, seq').iterate()) yield JSON.parse(row.v) as T;
  }

  close(): void {
    this.scratch.closeSync();
  }

  private flush(): void {
    if (this.pending.length) this.flushBatch(this.pending);
    this.pending = [];
  }
}

/**
 * A path's sort key: its segments in UTF-8 joined by a zero byte, which sorts below every
 * character, so that a folder comes just before its own contents (`a/`, `a/b`, `a b`), as
 * rclone's `lsf -R` lists them.
 */
export function pathSortKey(path: string): Buffer {
  return Buffer.from(path.split('/').filter((s) => s !== '').join('\0'), 'utf8');
}
