// The engine's exactly-once steps one by one, over an in-memory source and destination and a real
// SQLite store: the intent before each write (write.ts), the group digest (groups.ts), the
// settling and adoption before the walk (cold-start.ts), the walk's lookups (walk.ts) and the
// accounting (ledger.ts). Each test states a rule a mutant of that step would break.
import { afterEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { transfer, type Adoptable, type AdoptedCopy, type Placement, type WriteContext } from '../../src/sync/engine.js';
import { adoptInventory, isCold, settleInFlight } from '../../src/sync/cold-start.js';
import { folderOf, groupDigest } from '../../src/sync/groups.js';
import { SourceGoneError, type FileEntry, type SourceEntry } from '../../src/sync/types.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';
import { RunLimits } from '../../src/runner/limits.js';
import { AdaptiveConcurrency } from '../../src/runner/adaptive.js';
import { Bandwidth } from '../../src/sync/bandwidth.js';
import type { JobContext } from '../../src/runner/job.js';
import { UNKNOWN_MTIME } from '../../src/sync/decide.js';
import { MAX_LISTED } from '../../src/sync/contract.js';
import { Marked, MemoryDestination, MemorySource, closeStores, context, file, newStore, type WriteHook } from './memory.js';

afterEach(closeStores);

type Extra = Partial<Parameters<typeof transfer>[0]>;

async function run(store: SqliteCheckpointStore, items: () => Iterable<SourceEntry>, destination: MemoryDestination, extra: Extra & { ctx?: JobContext } = {}) {
  const ctx = extra.ctx ?? context(store);
  const source = extra.source ?? new MemorySource(items);
  const report = await transfer({ source, destination, store, jobKey: 'k', ctx, itemRetry: { retries: 2, baseDelayMs: 1, maxDelayMs: 2 }, ...extra });
  store.flush();
  return { ctx, source, report };
}

const tree = (n: number, folder = 'f') => () => Array.from({ length: n }, (_, i) => file(`${folder}/${i}.txt`, `content ${i}`));
const sum = (c: JobContext['counts']) => c.uploaded + c.reconciled + c.skipped + c.failed;

describe('write and retry: the intent before the write', () => {
  it('each write is preceded by its intent in the store, with the size, time, marker, attributes, batch and folder', async () => {
    const store = newStore();
    const seen: (ReturnType<SqliteCheckpointStore['getItem']> | undefined)[] = [];
    const dest = new MemoryDestination((entry) => {
      seen.push(store.getItem('k', entry.key));
    });
    const entry = { ...file('a/x.txt', 'hello'), marker: 'm-1', attributesDigest: 'attrs-1' } as FileEntry;
    await run(store, () => [entry], dest);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ sourceKey: 'a/x.txt', state: 'in-flight', size: 5, mtimeMs: 1_000, sha256: 'm-1', attrs: 'attrs-1', uploadId: 'u', parentId: null });
    // Once written: recorded as uploaded, the marker kept as the fingerprint.
    expect(store.getItem('k', 'a/x.txt')).toMatchObject({ state: 'uploaded', remoteId: 'doc-0', sha256: 'm-1', attrs: 'attrs-1' });
  });

  it('a destination that needs no intent gets none, and a file without a marker keeps the sha256 its destination computed', async () => {
    const store = newStore();
    const states: (string | undefined)[] = [];
    class NoIntent extends MemoryDestination {
      readonly needsIntent = false;
      override async write(entry: FileEntry, placement: Placement, ctx: WriteContext) {
        states.push(store.getItem('k', entry.key)?.state);
        const out = await super.write(entry, placement, ctx);
        return { ...out, sha256: 'computed-sha' };
      }
    }
    await run(store, () => [file('x.txt', 'x')], new NoIntent());
    expect(states).toEqual([undefined]);
    expect(store.getItem('k', 'x.txt')).toMatchObject({ state: 'uploaded', sha256: 'computed-sha' });
  });

  it('found already there is reconciled, not written; stored under another name fails the item and is not sent again', async () => {
    const store = newStore();
    class Answers extends MemoryDestination {
      override async write(entry: FileEntry, placement: Placement, ctx: WriteContext) {
        const out = await super.write(entry, placement, ctx);
        if (entry.key === 'found.txt') return { ...out, found: true };
        if (entry.key === 'renamed.txt') return { ...out, storedAs: 'renamed (1).txt' };
        return out;
      }
    }
    const dest = new Answers();
    const items = () => [file('found.txt', 'a'), file('renamed.txt', 'bb'), file('new.txt', 'ccc')];
    const { ctx } = await run(store, items, dest);
    expect(ctx.counts).toMatchObject({ discovered: 3, uploaded: 1, reconciled: 1, failed: 1, skipped: 0 });
    expect(ctx.bytes).toBe(3);
    expect(ctx.errors).toEqual([{ key: 'renamed.txt', error: expect.stringContaining('stored it under another name, "renamed (1).txt"') }]);
    const again = await run(store, items, dest);
    expect(again.ctx.counts).toMatchObject({ uploaded: 0, unchanged: 3 });
    expect(dest.attempts.get('renamed.txt')).toBe(1);
  });

  it('a retry tells the destination when the earlier attempt failed, so that it asks whether it landed; the first attempt is told nothing', async () => {
    const store = newStore();
    const told: (number | undefined)[] = [];
    const dest = new MemoryDestination((_entry, attempt, _d, ctx) => {
      told.push(ctx.failedAt);
      if (attempt === 1) throw new Marked('reset', 'transient');
    });
    const { ctx } = await run(store, () => [file('x.txt', 'x')], dest);
    expect(ctx.counts).toMatchObject({ uploaded: 1, failed: 0 });
    expect(told[0]).toBeUndefined();
    expect(typeof told[1]).toBe('number');
  });

  it('a failure is recorded with its mark, its message, and the entry it was; the in-flight count returns to zero', async () => {
    const store = newStore();
    const dest = new MemoryDestination((entry) => {
      if (entry.key === 'bad.txt') throw new Marked('refused: a bad name', 'item');
      if (entry.key === 'busy.txt') throw new Marked('still conflicting', 'conflict');
    });
    const { ctx } = await run(store, () => [file('bad.txt', 'abc', 7_000), file('busy.txt', 'x'), file('fine.txt', 'y')], dest);
    expect(ctx.failedByMark).toEqual({ item: 1, conflict: 1 });
    expect(ctx.inFlight).toBe(0);
    expect(store.getItem('k', 'bad.txt')).toMatchObject({ state: 'failed', lastError: 'refused: a bad name', size: 3, mtimeMs: 7_000 });
  });

  it('at its window a run starts nothing more and fails nothing: the entries stay for the next run', async () => {
    const store = newStore();
    const limits = new RunLimits({ maxFiles: 2 });
    const ctx = context(store, { limits });
    const dest = new MemoryDestination();
    await run(store, tree(6), dest, { ctx, maxConcurrency: 1 });
    expect(dest.writesStarted).toBe(2);
    expect(ctx.counts).toMatchObject({ uploaded: 2, failed: 0 });
    expect(limits.reached?.limit).toBe('max-files');
    const next = await run(store, tree(6), dest, { maxConcurrency: 1 });
    expect(next.ctx.counts).toMatchObject({ uploaded: 4, unchanged: 2, failed: 0 });
  });

  it('a hard cutoff cancels a write in flight without failing it; the next run writes it', async () => {
    const store = newStore();
    const limits = new RunLimits({ maxFiles: 1, cutoff: 'hard' });
    const ctx = context(store, { limits });
    const dest = new MemoryDestination(async (entry, _attempt, _d, wctx) => {
      if (entry.key !== 'f/0.txt') return;
      // The second admit trips the limit; this write is cut off by its cancel signal.
      await new Promise<void>((resolve) => {
        if (wctx.cancel?.aborted) resolve();
        else wctx.cancel?.addEventListener('abort', () => resolve(), { once: true });
      });
      throw new Marked('cancelled', 'transient');
    });
    await run(store, tree(3), dest, { ctx, maxConcurrency: 2 });
    expect(ctx.counts.failed).toBe(0);
    expect(ctx.errors).toEqual([]);
    expect(store.inFlight('k').map((i) => i.sourceKey)).toContain('f/0.txt');
  });

  it('the first fatal error is the one the run ends with', async () => {
    const store = newStore();
    const dest = new MemoryDestination((entry) => {
      throw new Marked(`token refused for ${entry.key}`, 'fatal');
    });
    await expect(run(store, tree(4), dest, { maxConcurrency: 2 })).rejects.toThrow('token refused for f/0.txt');
  });
});

describe('the group digest', () => {
  const lookupsOf = (store: SqliteCheckpointStore) => {
    const counted = { keys: 0 };
    const fingerprints = store.fingerprints.bind(store);
    store.fingerprints = (jobKey, keys) => {
      counted.keys += keys.length;
      return fingerprints(jobKey, keys);
    };
    return counted;
  };

  it('is recorded only when every file of the group landed: a failure leaves it unrecorded, and the rerun looks the folder up and writes the failed file', async () => {
    const store = newStore();
    let failing = true;
    const dest = new MemoryDestination((entry) => {
      if (failing && entry.key === 'f/3.txt') throw new Marked('refused', 'item');
    });
    await run(store, tree(20), dest);
    expect(store.groupDigest('k', 'f/', 0)).toBeUndefined();
    failing = false;
    const lookups = lookupsOf(store);
    const second = await run(store, tree(20), dest);
    expect(second.ctx.counts).toMatchObject({ uploaded: 1, unchanged: 19, failed: 0 });
    expect(lookups.keys).toBe(20);
    expect(store.groupDigest('k', 'f/', 0)).toBe(groupDigest(tree(20)()));
    const third = await run(store, tree(20), dest);
    expect(lookups.keys).toBe(20);
    expect(third.ctx.counts).toMatchObject({ unchanged: 20, discovered: 20 });
  });

  it('a folder of fewer than 8 files gets no digest; 8 do', async () => {
    const store = newStore();
    const dest = new MemoryDestination();
    await run(store, () => [...tree(7, 'small')(), ...tree(8, 'eight')()], dest);
    expect(store.groupDigest('k', 'small/', 0)).toBeUndefined();
    expect(store.groupDigest('k', 'eight/', 0)).toBe(groupDigest(tree(8, 'eight')()));
  });

  it('a folder of more than 4,096 files is cut into chunks, each with its own digest; a change in one chunk looks up only that chunk', async () => {
    const store = newStore();
    const dest = new MemoryDestination();
    const big = tree(4_110, 'big');
    await run(store, big, dest);
    // The rerun writes nothing: each chunk's digest is recorded as its files are found unchanged.
    await run(store, big, dest);
    expect(store.groupDigest('k', 'big/', 0)).toBe(groupDigest(big().slice(0, 4_096)));
    expect(store.groupDigest('k', 'big/', 1)).toBe(groupDigest(big().slice(4_096)));
    const lookups = lookupsOf(store);
    const changed = () => big().map((e, i) => (i === 4_109 ? file(e.key, 'changed', 5_000) : e));
    const { ctx } = await run(store, changed, dest);
    expect(ctx.counts).toMatchObject({ uploaded: 1, unchanged: 4_109 });
    expect(lookups.keys).toBe(14);
  });

  it('a folder met twice in one walk is two groups; each is settled by its own digest on the rerun', async () => {
    const store = newStore();
    const dest = new MemoryDestination();
    const late = Array.from({ length: 10 }, (_, i) => file(`a/late-${i}.txt`, `late ${i}`));
    const interleaved = () => [...tree(10, 'a')(), ...tree(10, 'b')(), ...late];
    await run(store, interleaved, dest);
    await run(store, interleaved, dest);
    expect(store.groupDigest('k', 'b/', 0)).toBe(groupDigest(tree(10, 'b')()));
    const lookups = lookupsOf(store);
    const { ctx } = await run(store, interleaved, dest);
    expect(ctx.counts).toMatchObject({ discovered: 30, unchanged: 30, uploaded: 0 });
    // b/ and one of the two runs of a/ by their digests; the other run of a/ (the same chunk number) looked up.
    expect(lookups.keys).toBe(10);
  });

  it('what a digest covers: the change marker and the attributes too, not only size and time', () => {
    const base = tree(3)();
    expect(groupDigest(base)).toBe(groupDigest(tree(3)()));
    expect(groupDigest(base.map((e, i) => (i === 1 ? { ...e, marker: 'other' } : e)))).not.toBe(groupDigest(base));
    expect(groupDigest(base.map((e, i) => (i === 1 ? { ...e, attributesDigest: 'row 2' } : e)))).not.toBe(groupDigest(base));
    expect(groupDigest(base.map((e) => ({ ...e, marker: '' })))).toBe(groupDigest(base));
    expect(folderOf('a/b/c.txt')).toBe('a/b/');
    expect(folderOf('c.txt')).toBe('');
  });

  it('--checksum and a retry batch use no digest: every file is looked up', async () => {
    const store = newStore();
    const dest = new MemoryDestination();
    await run(store, tree(10), dest);
    const lookups = lookupsOf(store);
    await run(store, tree(10), dest, { checksum: true });
    expect(lookups.keys).toBe(10);
  });
});

describe('before the walk: settle, then adopt', () => {
  it('settles only what is in flight; nothing in flight asks the destination nothing', async () => {
    const store = newStore();
    let asked = 0;
    const dest = { settle: async () => (asked++, new Map<string, { remoteId: string }>()) };
    expect(await settleInFlight(store, dest, 'k', context(store))).toEqual(new Set());
    expect(asked).toBe(0);
  });

  it('a store is cold until it listed the destination or holds something written', async () => {
    const store = newStore();
    expect(isCold(store, 'k')).toBe(true);
    store.recordListed('k', 0);
    expect(isCold(store, 'k')).toBe(false);
    const other = newStore();
    other.recordUploaded('k', 'a', { remoteId: 'r', size: 1, mtimeMs: 1, sha256: null, parentId: null });
    other.flush();
    expect(isCold(other, 'k')).toBe(false);
  });

  const inventoryOf = (items: (Adoptable | AdoptedCopy)[], heldCount?: number) => ({
    heldCount,
    async *inventory() {
      yield* items;
    },
  });
  const held = (key: string, extra: Partial<Adoptable> = {}): Adoptable => ({ key, remoteId: `r-${key}`, size: 3, mtimeMs: 1_000, sha256: `s-${key}`, parentId: null, ...extra });

  it('adopts what the destination holds as written, counts copies and those without a fingerprint, and records the listing', async () => {
    const store = newStore();
    const found = await adoptInventory(store, inventoryOf([held('a'), held('b', { mtimeMs: UNKNOWN_MTIME, sha256: null }), held('c', { mtimeMs: UNKNOWN_MTIME }), held('d', { sha256: null }), { key: 'a', remoteId: 'old-a', copy: true }]), 'k', 'cold');
    expect(found).toEqual({ reason: 'cold', adopted: 4, withoutFingerprint: 1, copies: 1 });
    expect(store.getItem('k', 'a')).toMatchObject({ state: 'uploaded', remoteId: 'r-a', sha256: 's-a' });
    expect(store.listedAt('k')).toBeDefined();
  });

  it('leaves an item in flight to be settled, not adopted; a stopped listing is not recorded as listed', async () => {
    const store = newStore();
    store.recordIntent('k', 'a', { size: 3, mtimeMs: 1_000, sha256: null, uploadId: 'u', parentId: null, runId: 1 });
    const stop = new AbortController();
    const found = await adoptInventory(store, inventoryOf([held('a'), held('b')]), 'k', 'cold');
    expect(found.adopted).toBe(1);
    expect(store.getItem('k', 'a')?.state).toBe('in-flight');
    const other = newStore();
    stop.abort();
    await adoptInventory(other, inventoryOf([held('a')]), 'k', 'cold', stop.signal);
    expect(other.listedAt('k')).toBeUndefined();
    expect(other.getItem('k', 'a')).toBeUndefined();
  });

  it('adopts more than one transaction holds, tells the size the destination says once, and --resync forgets what the store believed first', async () => {
    const store = newStore();
    const many = Array.from({ length: 2_500 }, (_, i) => held(`k${i}`));
    const told: number[] = [];
    const found = await adoptInventory(store, inventoryOf(many, 2_500), 'k', 'cold', undefined, (n) => told.push(n));
    expect(found.adopted).toBe(2_500);
    expect(told).toEqual([2_500]);
    expect(store.uploadedCount('k')).toBe(2_500);
    const resynced = await adoptInventory(store, inventoryOf([held('only')]), 'k', 'resync');
    expect(resynced).toMatchObject({ reason: 'resync', adopted: 1 });
    expect(store.uploadedCount('k')).toBe(1);
    expect(store.getItem('k', 'k0')?.state).not.toBe('uploaded');
  });

  it('a cold start warns of documents without a fingerprint and of copies, and keeps the attributes a run compares', async () => {
    const store = newStore();
    const dest = Object.assign(new MemoryDestination(), inventoryOf([held('f/0.txt', { mtimeMs: UNKNOWN_MTIME, sha256: null }), held('f/1.txt'), { key: 'f/1.txt', remoteId: 'old', copy: true }, { key: 'f/1.txt', remoteId: 'older', copy: true }]));
    const { ctx, report } = await run(store, () => [], dest, { adoptedAttributes: (key) => `attrs of ${key}` });
    expect(report.coldStart).toEqual({ reason: 'cold', adopted: 2, withoutFingerprint: 1, copies: 2 });
    expect(ctx.problems.map((p) => p.reason)).toEqual([expect.stringMatching(/^warning: 1 of the 2 documents found there carry no fingerprint/), expect.stringMatching(/^warning: 2 older documents are copies of the newest at their path/)]);
    expect(store.getItem('k', 'f/1.txt')?.attrs).toBe('attrs of f/1.txt');
    // Warm now: no second cold start, and nothing said again.
    const again = await run(store, () => [], dest);
    expect(again.report.coldStart).toBeUndefined();
  });

  it('one copy is said as one', async () => {
    const store = newStore();
    const dest = Object.assign(new MemoryDestination(), inventoryOf([held('a'), { key: 'a', remoteId: 'old', copy: true }]));
    const { ctx } = await run(store, () => [], dest);
    expect(ctx.problems.map((p) => p.reason)).toEqual([expect.stringMatching(/^warning: 1 older document is a copy of the newest at its path/)]);
  });
});

describe('the walk and the ledger', () => {
  it('every entry is accounted once: written, reconciled, skipped or failed; a folder is made, not counted', async () => {
    const store = newStore();
    const folders: string[] = [];
    class Folders extends MemoryDestination {
      override async ensureFolder(key: string): Promise<void> {
        folders.push(key);
      }
    }
    const items = (): SourceEntry[] => [{ kind: 'dir', key: 'f' }, ...tree(3)(), { kind: 'problem', key: 'x', outcome: 'skipped', reason: 'a socket' }];
    const { ctx } = await run(store, items, new Folders());
    expect(folders).toEqual(['f']);
    expect(ctx.counts).toMatchObject({ discovered: 4, uploaded: 3, skipped: 1 });
    expect(ctx.walk).toBe('done');
  });

  it('what cannot be carried is named on the first run and counted on the next', async () => {
    const store = newStore();
    const items = (): SourceEntry[] => [{ kind: 'problem', key: 'link', outcome: 'skipped', reason: 'a symbolic link' }];
    const first = await run(store, items, new MemoryDestination());
    expect(first.ctx.problems).toEqual([{ key: 'link', reason: 'skipped: a symbolic link' }]);
    expect(first.report.repeatedNotices).toBeUndefined();
    const second = await run(store, items, new MemoryDestination());
    expect(second.ctx.problems).toEqual([]);
    expect(second.report.repeatedNotices).toBe(1);
    expect(second.ctx.counts.skipped).toBe(1);
  });

  it('a file changed since the last run supersedes the document it was: listed up to the cap, counted beyond it', async () => {
    const store = newStore();
    const dest = new MemoryDestination();
    const n = MAX_LISTED + 5;
    await run(store, tree(n), dest);
    const changed = () => tree(n)().map((e) => file(e.key, `changed ${e.key}`, 9_000));
    const { report } = await run(store, changed, dest);
    expect(report.supersededCount).toBe(n);
    const superseded = report.superseded as { key: string; previous: string; current: string }[];
    expect(superseded).toHaveLength(MAX_LISTED);
    expect(superseded[0]).toEqual({ key: 'f/0.txt', previous: 'doc-0', current: `doc-${n}` });
    // An unchanged rerun supersedes nothing.
    const again = await run(store, changed, dest);
    expect(again.report).toMatchObject({ supersededCount: 0, superseded: [] });
  });

  it('a write that lands where it was (the same id) supersedes nothing', async () => {
    const store = newStore();
    class SameId extends MemoryDestination {
      override async write(entry: FileEntry, placement: Placement, ctx: WriteContext) {
        await super.write(entry, placement, ctx);
        return { remoteId: `same-${entry.key}` };
      }
    }
    const dest = new SameId();
    await run(store, tree(2), dest);
    const { report } = await run(store, () => tree(2)().map((e) => file(e.key, 'new', 5_000)), dest);
    expect(report.supersededCount).toBe(0);
  });

  it('what the store holds and the source no longer lists is reported vanished (a sample of 20), never what the source leaves out on purpose', async () => {
    const store = newStore();
    const dest = new MemoryDestination();
    await run(store, tree(30), dest);
    class Takes extends MemorySource {
      takes(key: string): boolean {
        return !key.endsWith('9.txt');
      }
    }
    const { report } = await run(store, () => tree(30)().slice(0, 5), dest, { source: new Takes(() => tree(30)().slice(0, 5)) });
    const vanished = report.deletedLocally as { count: number; sample: string[]; note: string };
    // 25 gone, of which f/9, f/19 and f/29 the source does not take.
    expect(vanished.count).toBe(22);
    expect(vanished.sample).toHaveLength(20);
    expect(vanished.sample).not.toContain('f/9.txt');
    expect(vanished.sample).not.toContain('f/0.txt');
    expect(vanished.note).toBe('reported only: ferry never deletes at the destination');
  });

  it('a run stopped early, or a first run, says nothing vanished', async () => {
    const store = newStore();
    const dest = new MemoryDestination();
    const first = await run(store, tree(5), dest, { deletionNote: 'kept' });
    expect(first.report.deletedLocally).toEqual({ count: 0, sample: [], note: 'kept' });
    const stop = new AbortController();
    const stopping = new MemoryDestination(() => stop.abort());
    const changedOne = () => [file('f/new.txt', 'n')];
    const stopped = await run(store, changedOne, stopping, { ctx: context(store, { signal: stop.signal }) });
    expect((stopped.report.deletedLocally as { count: number }).count).toBe(0);
  });

  it('a filtered entry is seen (not vanished) and not counted; a retry batch counts only its files', async () => {
    const store = newStore();
    const dest = new MemoryDestination();
    await run(store, tree(4), dest);
    const filtered = await run(store, tree(4), dest, { filter: (e) => e.key !== 'f/2.txt' });
    expect(filtered.ctx.counts).toMatchObject({ discovered: 3, unchanged: 3 });
    expect((filtered.report.deletedLocally as { count: number }).count).toBe(0);
    const only = await run(store, () => [...tree(4)(), { kind: 'problem', key: 'p', outcome: 'failed', reason: 'unreadable' } as const], dest, { only: new Set(['f/1.txt']) });
    expect(only.ctx.counts).toMatchObject({ discovered: 1, uploaded: 1 });
    // A retry batch sees only its files: the others are not said vanished.
    expect((only.report.deletedLocally as { count: number }).count).toBe(0);
    expect(dest.attempts.get('f/1.txt')).toBe(2);
  });

  it('same size, another time: the content decides; equal content is unchanged and its new time noted, other content written', async () => {
    const store = newStore();
    // A destination that says the sha256 of what it stored, as the project destination does.
    class Hashing extends MemoryDestination {
      override async write(entry: FileEntry, placement: Placement, ctx: WriteContext) {
        const out = await super.write(entry, placement, ctx);
        return { ...out, sha256: createHash('sha256').update(this.held.get(entry.key)!.content).digest('hex') };
      }
    }
    const dest = new Hashing();
    await run(store, () => [file('same.txt', 'aaaa'), file('other.txt', 'bbbb')], dest);
    const { ctx } = await run(store, () => [file('same.txt', 'aaaa', 2_000), file('other.txt', 'cccc', 2_000)], dest);
    expect(ctx.counts).toMatchObject({ unchanged: 1, uploaded: 1 });
    expect(store.getItem('k', 'same.txt')?.mtimeMs).toBe(2_000);
    expect(dest.attempts.get('same.txt')).toBe(1);
    // The written one carries its content's sha256: a later time change compares content again.
    const third = await run(store, () => [file('same.txt', 'aaaa', 3_000), file('other.txt', 'cccc', 3_000)], dest);
    expect(third.ctx.counts).toMatchObject({ unchanged: 2, uploaded: 0 });
  });

  it('the progress counts what is planned, and says when the walk is done', async () => {
    const store = newStore();
    const state = { counts: { discovered: 0, uploaded: 0, unchanged: 0, skipped: 0, failed: 0, reconciled: 0 }, bytes: 0, bytesPlanned: 0, itemsPlanned: 0, discovering: true };
    const ctx = context(store);
    state.counts = ctx.counts;
    await run(store, () => [file('a.txt', 'aaa'), file('b.txt', 'bb')], new MemoryDestination(), { ctx, progress: state });
    expect(state).toMatchObject({ itemsPlanned: 2, bytesPlanned: 5, bytes: 5, discovering: false });
    expect(sum(ctx.counts)).toBe(ctx.counts.discovered);
  });

  it('a file gone from the source since it was listed is skipped with the reason, recorded, and not retried', async () => {
    const store = newStore();
    const hook: WriteHook = () => {
      throw new SourceGoneError('deleted since it was listed');
    };
    const dest = new MemoryDestination(hook);
    const { ctx } = await run(store, () => [file('gone.txt', 'x', 4_000)], dest);
    expect(ctx.counts).toMatchObject({ skipped: 1, failed: 0 });
    expect(store.getItem('k', 'gone.txt')).toMatchObject({ state: 'failed', lastError: 'skipped: deleted since it was listed', size: 1, mtimeMs: 4_000 });
  });
});

describe('what else each step owes', () => {
  it('--checksum records the content\'s sha256 it read: a rerun with --checksum writes nothing again', async () => {
    const store = newStore();
    const dest = new MemoryDestination();
    await run(store, tree(3), dest, { checksum: true });
    const sha = createHash('sha256').update('content 0').digest('hex');
    expect(store.getItem('k', 'f/0.txt')?.sha256).toBe(sha);
    const again = await run(store, () => tree(3)().map((e) => ({ ...e, mtimeMs: 9_000 })), dest, { checksum: true });
    expect(again.ctx.counts).toMatchObject({ uploaded: 0, unchanged: 3 });
    expect(dest.writesStarted).toBe(3);
  });

  it('no write leaves without its intent: an intent the store cannot commit fails the run before the destination is called', async () => {
    const store = newStore();
    store.recordIntents = () => {
      throw new Error('disk full');
    };
    const dest = new MemoryDestination();
    const { ctx } = await run(store, tree(3), dest);
    expect(dest.writesStarted).toBe(0);
    expect(ctx.counts).toMatchObject({ uploaded: 0, failed: 3 });
    expect(ctx.errors.map((e) => e.error)).toEqual(['disk full', 'disk full', 'disk full']);
  });

  it('the run\'s write checks reach every write: the gate before a folder or a file is placed, the fence beside each write', async () => {
    const store = newStore();
    let gates = 0;
    const fence = () => true;
    const seen: { gate: boolean; fence: boolean }[] = [];
    const ctx = context(store, {
      writeGate: async () => {
        gates++;
      },
      writeFence: fence,
    });
    const dest = new MemoryDestination((_e, _a, _d, wctx) => {
      seen.push({ gate: typeof wctx.gate === 'function', fence: wctx.fence === fence });
    });
    await run(store, () => [{ kind: 'dir', key: 'f' }, ...tree(2)()], dest, { ctx });
    expect(seen).toEqual([{ gate: true, fence: true }, { gate: true, fence: true }]);
    // One for the folder, one per file placed.
    expect(gates).toBe(3);
    // A lease lost: the gate refuses, nothing is written, and the run stops with it.
    const lost = context(store, {
      writeGate: async () => {
        throw new Marked('the lease was lost', 'fatal');
      },
    });
    const other = new MemoryDestination();
    await expect(run(store, () => [file('new.txt', 'n')], other, { ctx: lost })).rejects.toThrow('the lease was lost');
    expect(other.writesStarted).toBe(0);
  });

  it('content sent under --bwlimit is the file\'s, with its sha256 read outside the budget', async () => {
    const store = newStore();
    const shas: (string | undefined)[] = [];
    const dest = new MemoryDestination((entry) => {
      shas.push(entry.sha256);
    });
    await run(store, tree(2), dest, { bandwidth: new Bandwidth(10 * 1024 * 1024) });
    expect(dest.held.get('f/1.txt')?.content).toBe('content 1');
    expect(shas.sort()).toEqual([createHash('sha256').update('content 0').digest('hex'), createHash('sha256').update('content 1').digest('hex')].sort());
  });

  it('a cold start that finds every document whole and once says nothing', async () => {
    const store = newStore();
    const dest = Object.assign(new MemoryDestination(), {
      async *inventory() {
        yield { key: 'a', remoteId: 'r', size: 1, mtimeMs: 1_000, sha256: 's', parentId: null };
      },
    });
    const { ctx, report } = await run(store, () => [], dest);
    expect(report.coldStart).toEqual({ reason: 'cold', adopted: 1, withoutFingerprint: 0, copies: 0 });
    expect(ctx.problems).toEqual([]);
  });

  it('a transient failure leaves the limit of writes at once alone; a throttle lowers it', async () => {
    for (const [mark, lowered] of [['transient', false], ['throttled', true]] as const) {
      const store = newStore();
      const concurrency = new AdaptiveConcurrency({ max: 8 });
      const dest = new MemoryDestination((entry, attempt) => {
        if (entry.key === 'f/0.txt' && attempt === 1) throw new Marked(mark, mark);
      });
      await run(store, tree(1), dest, { concurrency });
      expect(concurrency.limit < 8, mark).toBe(lowered);
    }
  });

  it('a source that says how many it holds, to a destination that does not ask: the run goes on', async () => {
    class Counted extends MemorySource {
      readonly expectedCount = 3;
    }
    const store = newStore();
    const { ctx } = await run(store, tree(3), new MemoryDestination(), { source: new Counted(tree(3)) });
    expect(ctx.counts.uploaded).toBe(3);
  });

  it('a run stopped at its window did not see the whole source: nothing is said vanished', async () => {
    const store = newStore();
    const dest = new MemoryDestination();
    await run(store, tree(10), dest);
    const changed = () => tree(10)().map((e) => file(e.key, `v2 ${e.key}`, 5_000));
    const limits = new RunLimits({ maxFiles: 2 });
    const { report } = await run(store, changed, dest, { ctx: context(store, { limits }), maxConcurrency: 1 });
    expect(limits.reached).toBeDefined();
    expect((report.deletedLocally as { count: number }).count).toBe(0);
  });
});
