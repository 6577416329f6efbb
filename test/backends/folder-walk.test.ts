// The folder walk reads a folder a batch at a time, only as fast as the consumer takes entries:
// one folder of many files never waits in memory whole (fast-glob alone read a folder of 200,000
// files at once and lstat'd every name together: 703-887 MiB).
import { describe, expect, it } from 'vitest';
import { mkdtemp, rm, symlink, unlink, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { FolderSource } from '../../src/backends/folder/source.js';
import type { SourceEntry } from '../../src/sync/types.js';

const FILES = 3_000;
const HIGH_WATER = 100;
/** The walk's batch (src/backends/folder/source.ts BATCH): what may be read past the high water. */
const BATCH = 256;

describe('one large folder', () => {
  it('waits for a slow consumer a batch at a time, and yields every file once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-walk-'));
    try {
      await mkdir(join(dir, 'sub'));
      for (let i = 0; i < FILES; i += 500) {
        await Promise.all(Array.from({ length: 500 }, (_, j) => writeFile(join(dir, `file-${i + j}.txt`), `${i + j}`)));
      }
      await writeFile(join(dir, 'sub', 'inner.txt'), 'inner');
      await symlink(join(dir, 'file-0.txt'), join(dir, 'link.txt'));
      const source = new FolderSource(dir, { highWater: HIGH_WATER });
      const seen = new Map<string, SourceEntry>();
      let largest = 0;
      let batches = 0;
      for await (const batch of source.batches()) {
        batches++;
        largest = Math.max(largest, batch.length);
        for (const e of batch) {
          expect(seen.has(e.key), e.key).toBe(false);
          seen.set(e.key, e);
        }
        // A consumer slower than the disk: the walk has all the time it wants to run ahead.
        await sleep(5);
      }
      const files = [...seen.values()].filter((e) => e.kind === 'file');
      expect(files).toHaveLength(FILES + 1);
      expect(seen.get('file-2999.txt')).toMatchObject({ kind: 'file', size: 4 });
      expect(seen.get('sub')).toMatchObject({ kind: 'dir' });
      expect(seen.get('sub/inner.txt')).toMatchObject({ kind: 'file', size: 5 });
      expect(seen.get('link.txt')).toMatchObject({ kind: 'problem', outcome: 'skipped' });
      // Ran ahead by at most one batch past the high water, never the whole folder.
      expect(largest).toBeLessThanOrEqual(HIGH_WATER + BATCH);
      expect(batches).toBeGreaterThanOrEqual(FILES / (HIGH_WATER + BATCH));
      // In name order, as a whole-folder read gave them (file-10 before file-2).
      const rootFiles = files.map((e) => e.key).filter((k) => !k.includes('/'));
      expect(rootFiles).toEqual([...rootFiles].sort());
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('hands on each folder\'s files together, though several folders are read at once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-walk-'));
    try {
      const folders = Array.from({ length: 6 }, (_, i) => `folder-${i}`);
      for (const folder of folders) {
        await mkdir(join(dir, folder));
        // More than one batch each, so that two folders read at once could interleave.
        await Promise.all(Array.from({ length: 600 }, (_, j) => writeFile(join(dir, folder, `f-${j}.txt`), `${j}`)));
      }
      const order: string[] = [];
      for await (const e of new FolderSource(dir, { highWater: HIGH_WATER }).entries()) if (e.kind === 'file') order.push(e.key.split('/')[0]!);
      expect(order).toHaveLength(folders.length * 600);
      // Each folder is one run of consecutive entries.
      const runs = order.filter((folder, i) => i === 0 || order[i - 1] !== folder);
      expect(runs.sort()).toEqual(folders);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('says a file removed after its folder was listed and before it was looked at (skipped, with the reason)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-walk-'));
    try {
      await Promise.all(Array.from({ length: 1_000 }, (_, i) => writeFile(join(dir, `file-${i}.txt`), `${i}`)));
      // Last in name order: in the folder's last batch, looked at long after the first is handed on.
      await writeFile(join(dir, 'zzz.txt'), 'gone soon');
      const seen = new Map<string, SourceEntry>();
      let first = true;
      for await (const batch of new FolderSource(dir, { highWater: HIGH_WATER }).batches()) {
        for (const e of batch) seen.set(e.key, e);
        // The walk waits for this consumer: it has read the folder's names, not yet this file's.
        if (first) await unlink(join(dir, 'zzz.txt'));
        first = false;
      }
      expect([...seen.values()].filter((e) => e.kind === 'file')).toHaveLength(1_000);
      expect(seen.get('zzz.txt')).toEqual({ kind: 'problem', key: 'zzz.txt', outcome: 'skipped', reason: 'removed while its folder was read' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
