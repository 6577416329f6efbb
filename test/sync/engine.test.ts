// The transfer engine on its own, over an in-memory source and destination: the accounting
// invariant, folder digests on a rerun, settling what a killed run left in flight, a fatal error
// stopping the job, the bounded backlog between listing and writes, and item retries by mark.
import { afterEach, describe, expect, it } from 'vitest';
import { transfer, type Placement, type WriteContext } from '../../src/sync/engine.js';
import { SourceGoneError, type FileEntry, type SourceEntry } from '../../src/sync/types.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';
import { AdaptiveConcurrency } from '../../src/runner/adaptive.js';
import type { JobContext } from '../../src/runner/job.js';
import { Marked, MemoryDestination, MemorySource, closeStores, context, file, newStore, type WriteHook } from './memory.js';

afterEach(closeStores);

async function run(store: SqliteCheckpointStore, items: () => Iterable<SourceEntry>, destination: MemoryDestination, extra: { ctx?: JobContext; concurrency?: AdaptiveConcurrency; maxConcurrency?: number } = {}) {
  const ctx = extra.ctx ?? context(store);
  const source = new MemorySource(items);
  const report = await transfer({ source, destination, store, jobKey: 'k', ctx, itemRetry: { baseDelayMs: 1, maxDelayMs: 2 }, concurrency: extra.concurrency, maxConcurrency: extra.maxConcurrency });
  store.flush();
  return { ctx, source, report };
}

const tree = (n: number, folder = 'f') => () => Array.from({ length: n }, (_, i) => file(`${folder}/${i}.txt`, `content ${i}`));
const sum = (c: JobContext['counts']) => c.uploaded + c.reconciled + c.unchanged + c.skipped + c.failed;

describe('the transfer engine, alone', () => {
  it('accounts for every entry: written, skipped or failed with its reason; discovered is their sum', async () => {
    const store = newStore();
    const dest = new MemoryDestination((entry) => {
      if (entry.key === 'f/3.txt') throw new Marked('refused: bad name', 'item');
    });
    const items = () => [...tree(10)(), { kind: 'problem', key: 'bad\u0001', outcome: 'failed', reason: 'control characters' } as const, { kind: 'problem', key: 'link', outcome: 'skipped', reason: 'symbolic link' } as const];
    const { ctx } = await run(store, items, dest);
    expect(ctx.counts).toMatchObject({ discovered: 12, uploaded: 9, failed: 2, skipped: 1, reconciled: 0 });
    expect(sum(ctx.counts)).toBe(ctx.counts.discovered);
    expect(ctx.errors.map((e) => e.key).sort()).toEqual(['bad\u0001', 'f/3.txt']);
    expect(ctx.problems).toEqual([{ key: 'link', reason: 'skipped: symbolic link' }]);
    expect(dest.attempts.get('f/3.txt')).toBe(1); // the item's own fault: not retried
    // A rerun writes nothing new: the nine are unchanged, the link skipped again, the failure tried again.
    const again = await run(store, items, dest);
    expect(again.ctx.counts).toMatchObject({ discovered: 12, uploaded: 0, unchanged: 9, skipped: 1, failed: 2 });
    expect(dest.attempts.get('f/0.txt')).toBe(1);
  });

  it('a rerun over an unchanged folder is settled by its digest: no entry looked up, nothing written', async () => {
    const store = newStore();
    const dest = new MemoryDestination();
    await run(store, tree(50), dest);
    let lookups = 0;
    const fingerprints = store.fingerprints.bind(store);
    store.fingerprints = (jobKey, keys) => {
      lookups += keys.length;
      return fingerprints(jobKey, keys);
    };
    const { ctx } = await run(store, tree(50), dest);
    expect(ctx.counts).toMatchObject({ discovered: 50, unchanged: 50, uploaded: 0 });
    expect(lookups).toBe(0);
    expect(dest.writesStarted).toBe(50);
    // One file changed: that folder is looked up again, and only the changed file is written.
    const changed = () => tree(50)().map((e) => (e.key === 'f/7.txt' ? file('f/7.txt', 'new content', 2_000) : e));
    const third = await run(store, changed, dest);
    expect(third.ctx.counts).toMatchObject({ uploaded: 1, unchanged: 49 });
    expect(lookups).toBe(50);
  });

  it('settles what a killed run left in flight: a write that landed is reconciled, never written twice', async () => {
    const store = newStore();
    const stop = new AbortController();
    // The write of f/2.txt reaches the destination, then the run dies before hearing back.
    const dest = new MemoryDestination((entry, attempt, d) => {
      if (entry.key === 'f/2.txt' && attempt === 1) {
        d.land(entry, 'content 2');
        stop.abort();
        throw new Marked('connection reset', 'transient');
      }
    });
    const first = await run(store, tree(5), dest, { ctx: context(store, { signal: stop.signal }), maxConcurrency: 1 });
    expect(first.ctx.counts.uploaded).toBeLessThan(5);
    // In flight: the write that landed, and the entries its backlog had prepared (intents
    // written, nothing sent).
    const inFlight = store.inFlight('k').map((i) => i.sourceKey);
    expect(inFlight).toContain('f/2.txt');
    for (const key of inFlight) if (key !== 'f/2.txt') expect(dest.attempts.get(key) ?? 0).toBe(0);
    const second = await run(store, tree(5), dest, { maxConcurrency: 1 });
    expect(second.ctx.counts.reconciled).toBe(1);
    expect([...dest.held.keys()].sort()).toEqual(['f/0.txt', 'f/1.txt', 'f/2.txt', 'f/3.txt', 'f/4.txt']);
    // Each file was sent once across both runs: the one that landed was found, not sent again.
    for (const key of dest.held.keys()) expect(dest.attempts.get(key)).toBe(1);
    expect(sum(second.ctx.counts)).toBe(second.ctx.counts.discovered);
  });

  it('stops the job on a fatal mark: no write starts after it', async () => {
    const store = newStore();
    const dest = new MemoryDestination((entry) => {
      if (entry.key === 'f/2.txt') throw new Marked('token refused', 'fatal');
    });
    await expect(run(store, tree(20), dest, { maxConcurrency: 1 })).rejects.toThrow('token refused');
    expect(dest.writesStarted).toBe(3);
    expect(dest.attempts.get('f/2.txt')).toBe(1);
  });

  it('reads the source only a bounded way ahead of the writes', async () => {
    const store = newStore();
    let ahead = 0;
    const source = { ref: undefined as MemorySource | undefined };
    const dest = new MemoryDestination(async () => {
      ahead = Math.max(ahead, (source.ref?.listed ?? 0) - dest.writesDone);
      await new Promise((r) => setImmediate(r));
    });
    // Folders of 4 (under the digest size): entries are looked up 256 at a time.
    const items = () => Array.from({ length: 5_000 }, (_, i) => file(`d${Math.floor(i / 4)}/${i}.txt`, `c${i}`));
    const ctx = context(store);
    const memory = new MemorySource(items);
    source.ref = memory;
    await transfer({ source: memory, destination: dest, store, jobKey: 'k', ctx, maxConcurrency: 2 });
    expect(ctx.counts.uploaded).toBe(5_000);
    // One lookup batch (256), the backlog (4 x 2) and the writes under way: never the whole listing.
    expect(ahead).toBeGreaterThan(0);
    expect(ahead).toBeLessThanOrEqual(256 + 8 + 2 + 8);
  });

  it('reads the source ahead while a cold start lists a small destination, not beside a large one', async () => {
    /** A destination that holds `count` documents (it says so) and lists them slowly: a turn of the event loop each. */
    const listedDuringInventory = async (count: number) => {
      const store = newStore();
      const memory = new MemorySource(tree(500));
      let listed = 0;
      const dest = Object.assign(new MemoryDestination(), {
        heldCount: undefined as number | undefined,
        async *inventory() {
          dest.heldCount = count;
          for (let i = 0; i < 300; i++) {
            await new Promise((r) => setImmediate(r));
            yield { key: `elsewhere/${i}`, remoteId: `r${i}`, size: 1, mtimeMs: 1, sha256: null, parentId: null };
          }
          listed = memory.listed;
        },
      });
      const ctx = context(store);
      const report = await transfer({ source: memory, destination: dest, store, jobKey: 'k', ctx });
      expect(report.coldStart).toMatchObject({ adopted: 300 });
      expect(ctx.counts).toMatchObject({ discovered: 500, uploaded: 500 });
      return listed;
    };
    expect(await listedDuringInventory(300)).toBe(500);
    expect(await listedDuringInventory(1_000_000)).toBe(0);
  });

  it('retries by mark: transient and throttled again (throttled also halves the limit), the rest not', async () => {
    const store = newStore();
    const fails: Record<string, [number, ConstructorParameters<typeof Marked>[1] | 'gone-at-source']> = {
      'f/transient.txt': [2, 'transient'],
      'f/throttled.txt': [1, 'throttled'],
      'f/conflict.txt': [9, 'conflict'],
      'f/item.txt': [9, 'item'],
      'f/gone.txt': [9, 'gone-at-source'],
    };
    const hook: WriteHook = (entry, attempt) => {
      const rule = fails[entry.key];
      if (!rule || attempt > rule[0]) return;
      if (rule[1] === 'gone-at-source') throw new SourceGoneError('deleted since it was listed');
      throw new Marked(`${rule[1]} failure`, rule[1]);
    };
    const dest = new MemoryDestination(hook);
    const concurrency = new AdaptiveConcurrency({ max: 8 });
    const items = () => [...Object.keys(fails), 'f/fine.txt'].map((k) => file(k, k));
    const { ctx } = await run(store, items, dest, { concurrency });
    expect(ctx.counts).toMatchObject({ discovered: 6, uploaded: 3, failed: 2, skipped: 1 });
    expect(Object.fromEntries(dest.attempts)).toEqual({ 'f/transient.txt': 3, 'f/throttled.txt': 2, 'f/conflict.txt': 1, 'f/item.txt': 1, 'f/gone.txt': 1, 'f/fine.txt': 1 });
    expect(concurrency.limit).toBeLessThan(8);
    expect(ctx.problems.find((p) => p.key === 'f/gone.txt')?.reason).toMatch(/^skipped: deleted since it was listed/);
  });

  it('hands each write the slot it holds: an item retry waits outside it and is counted on it', async () => {
    const store = newStore();
    const seen: { key: string; attempt: number; retries: number | undefined }[] = [];
    const hook: WriteHook = (entry, attempt, _dest, ctx) => {
      seen.push({ key: entry.key, attempt, retries: ctx.slot?.retries });
      if (entry.key === 'f/1.txt' && attempt === 1) throw new Marked('refused', 'transient');
    };
    const { ctx } = await run(store, tree(3), new MemoryDestination(hook));
    expect(ctx.counts).toMatchObject({ uploaded: 3, failed: 0 });
    // Every write had a slot; the retried one's second attempt in the slot its wait was counted on.
    expect(seen.filter((s) => s.retries === undefined)).toEqual([]);
    expect(seen.find((s) => s.key === 'f/1.txt' && s.attempt === 2)?.retries).toBe(1);
    expect(seen.filter((s) => s.key !== 'f/1.txt').map((s) => s.retries)).toEqual([0, 0]);
  });

  it('keeps the ids its writes became only for a destination that asks them, and sizes its sets once the source says how many', async () => {
    // Each write asks whether the first write's id is claimed: yes once it was written, for a
    // destination that asks; never for one that says it does not (nothing is kept for it).
    class Asking extends MemoryDestination {
      readonly answers: boolean[] = [];
      readonly told: number[] = [];
      expect(count: number): void {
        this.told.push(count);
      }
      override async write(entry: FileEntry, placement: Placement, ctx: WriteContext) {
        this.answers.push(ctx.claimed.has('doc-0'));
        return super.write(entry, placement, ctx);
      }
    }
    class NotAsking extends Asking {
      readonly asksClaimed = false;
    }
    class Counted extends MemorySource {
      expectedCount: number | undefined;
      override async *entries(signal?: AbortSignal) {
        this.expectedCount = 12; // known once the listing started, as a totalCount is
        yield* super.entries(signal);
      }
    }
    for (const [dest, claimedAfterFirst] of [[new Asking(), true], [new NotAsking(), false]] as const) {
      const store = newStore();
      const ctx = context(store);
      await transfer({ source: new Counted(tree(5)), destination: dest, store, jobKey: 'k', ctx, maxConcurrency: 1 });
      expect(ctx.counts).toMatchObject({ discovered: 5, uploaded: 5 });
      expect(dest.answers).toEqual([false, ...Array(4).fill(claimedAfterFirst)]);
      expect(dest.told).toEqual([12]);
    }
  });
});
