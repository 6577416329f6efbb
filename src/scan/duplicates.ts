// Files with the same content, as fdupes and jdupes find them: only files that share a size with
// another are read and hashed (sha256), so a tree without duplicates costs its walk and no read.
// The census's scratch file holds every non-empty file's size and key; the candidates are read
// from their path on disk, or, for an archive, by walking it once more and hashing only those.
// Empty files are not grouped: the scan counts them apart (the service refuses them).
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Census } from './census.js';
import type { Source } from '../sync/types.js';
import { sha256Of } from '../sync/checksum.js';

/** Groups named in the report, largest waste first; every group is counted. */
const NAMED_GROUPS = 20;
/** Paths named per group. */
const NAMED_PATHS = 20;

export interface DuplicateGroup {
  sha256: string;
  size: number;
  copies: number;
  /** Bytes beyond the first copy. */
  wastedBytes: number;
  paths: string[];
}

export interface DuplicateFigures {
  groups: number;
  /** Files beyond the first of each group. */
  extraCopies: number;
  wastedBytes: number;
  /** Files read because another shared their size. */
  hashedFiles: number;
  hashedBytes: number;
  largestGroups: DuplicateGroup[];
  /** Candidates gone (or unreadable) when their turn to be read came: not grouped. */
  vanished: { path: string; reason: string }[];
}

/**
 * Hashes the candidates and groups them. `reopen` walks an archive again (its entries have no path
 * on disk); a folder's candidates are read where they lie.
 */
export async function findDuplicates(census: Census, reopen: () => Promise<Source>, signal?: AbortSignal): Promise<DuplicateFigures> {
  census.flush();
  const { db } = census;
  db.exec('CREATE TABLE shared AS SELECT size FROM files GROUP BY size HAVING count(*) > 1; CREATE UNIQUE INDEX shared_size ON shared (size)');
  const out: DuplicateFigures = { groups: 0, extraCopies: 0, wastedBytes: 0, hashedFiles: 0, hashedBytes: 0, largestGroups: [], vanished: [] };
  const candidates = db.prepare('SELECT count(*) AS n, count(path) AS onDisk FROM files WHERE size IN (SELECT size FROM shared)').get() as { n: number; onDisk: number };
  if (candidates.n === 0) return out;
  const setHash = db.prepare('UPDATE files SET sha256 = ? WHERE id = ?');
  const hashed = (id: number, size: number, sha256: string) => {
    setHash.run(sha256, id);
    out.hashedFiles++;
    out.hashedBytes += size;
  };
  const vanished = (path: string, err: unknown) => out.vanished.push({ path, reason: (err as NodeJS.ErrnoException).code ?? (err as Error).message });
  if (candidates.onDisk === candidates.n) {
    await hashInPages(db, hashed, vanished, signal);
  } else {
    const byKey = db.prepare('SELECT id, size FROM files WHERE key = ? AND size IN (SELECT size FROM shared)');
    const source = await reopen();
    try {
      for await (const entry of source.entries(signal)) {
        if (entry.kind !== 'file' || entry.size === 0) continue;
        const row = byKey.get(entry.key) as { id: number; size: number } | undefined;
        if (!row || row.size !== entry.size) continue;
        try {
          hashed(row.id, row.size, await sha256Of((entry.openAsync ? await entry.openAsync() : entry.open()) as Readable));
        } catch (err) {
          vanished(entry.key, err);
        }
      }
    } finally {
      await source.close();
    }
  }
  const totals = db.prepare('SELECT count(*) AS groups, coalesce(sum(c - 1), 0) AS extra, coalesce(sum((c - 1) * size), 0) AS wasted FROM (SELECT size, count(*) AS c FROM files WHERE sha256 IS NOT NULL GROUP BY sha256, size HAVING c > 1)').get() as { groups: number; extra: number; wasted: number };
  out.groups = totals.groups;
  out.extraCopies = totals.extra;
  out.wastedBytes = totals.wasted;
  const groups = db.prepare('SELECT sha256, size, count(*) AS c FROM files WHERE sha256 IS NOT NULL GROUP BY sha256, size HAVING c > 1 ORDER BY (c - 1) * size DESC, sha256 LIMIT ?').all(NAMED_GROUPS) as { sha256: string; size: number; c: number }[];
  const pathsOf = db.prepare('SELECT key FROM files WHERE sha256 = ? ORDER BY key LIMIT ?');
  out.largestGroups = groups.map((g) => ({
    sha256: g.sha256,
    size: g.size,
    copies: g.c,
    wastedBytes: (g.c - 1) * g.size,
    paths: (pathsOf.all(g.sha256, NAMED_PATHS) as { key: string }[]).map((r) => r.key),
  }));
  return out;
}

/** Files read at once: reads of small files wait on the disk more than on the CPU. */
const READS_AT_ONCE = 8;
/** Up to this size a file is read whole in one call (no stream); larger ones are streamed. */
const READ_WHOLE_MAX = 1 << 20;

/** sha256 of a file on disk: a small one read whole (three system calls), a large one streamed. */
async function hashFile(path: string, size: number): Promise<string> {
  if (size <= READ_WHOLE_MAX) return createHash('sha256').update(await readFile(path)).digest('hex');
  return sha256Of(createReadStream(path));
}

/**
 * The candidates on disk, a page at a time: a million are never held, a page's reads go
 * READS_AT_ONCE at a time, and its hashes are written in one transaction.
 */
async function hashInPages(
  db: Census['db'],
  hashed: (id: number, size: number, sha256: string) => void,
  vanished: (path: string, err: unknown) => void,
  signal: AbortSignal | undefined,
): Promise<void> {
  const page = db.prepare('SELECT id, size, key, path FROM files WHERE id > ? AND size IN (SELECT size FROM shared) ORDER BY id LIMIT 1000');
  for (let last = 0; ; ) {
    const rows = page.all(last) as { id: number; size: number; key: string; path: string }[];
    if (rows.length === 0) return;
    const results: ({ sha256: string } | { err: unknown } | undefined)[] = new Array(rows.length);
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < rows.length; i = next++) {
        signal?.throwIfAborted();
        const row = rows[i]!;
        results[i] = await hashFile(row.path, row.size).then(
          (sha256) => ({ sha256 }),
          (err: unknown) => ({ err }),
        );
      }
    };
    await Promise.all(Array.from({ length: Math.min(READS_AT_ONCE, rows.length) }, worker));
    db.transaction(() => {
      rows.forEach((row, i) => {
        const r = results[i]!;
        if ('sha256' in r) hashed(row.id, row.size, r.sha256);
        else vanished(row.key, r.err);
      });
    })();
    last = rows[rows.length - 1]!.id;
  }
}
