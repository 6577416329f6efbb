// Throwaway SQLite files: a manifest's rows, a workbook's shared strings, a census, a listing that
// check or verify compares, a sort too large for memory. One owner of how they are made: in a
// scratch folder of the process (src/scratch.ts: what a process killed with -9 left is swept by the
// next of its kind), with no journal and no syncing (nothing in them outlives the process), and
// removed whole when closed.
import Database from 'better-sqlite3';
import { rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { scratchFolder, scratchFolderSync } from '../scratch.js';

export interface ScratchDb {
  readonly db: Database.Database;
  /** Closes the database and removes its folder. */
  close(): Promise<void>;
  closeSync(): void;
}

function scratch(folder: string): ScratchDb {
  const db = new Database(join(folder, 'scratch.sqlite'));
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  return {
    db,
    close: async () => {
      db.close();
      await rm(folder, { recursive: true, force: true });
    },
    closeSync: () => {
      db.close();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/** A new scratch database of this kind (`manifest`, `workbook`, `scan`, `check`, `verify`, `sort`). */
export async function openScratchDb(kind: string): Promise<ScratchDb> {
  return scratch(await scratchFolder(kind));
}

/** The same, for a constructor that cannot wait. */
export function openScratchDbSync(kind: string): ScratchDb {
  return scratch(scratchFolderSync(kind));
}
