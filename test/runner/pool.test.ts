import { describe, expect, it } from 'vitest';
import { AdaptiveConcurrency } from '../../src/runner/adaptive.js';
import { describeProgress, liveLine } from '../../src/runner/progress.js';
import { formatBytes, formatDuration } from '../../src/text.js';
import { runPool, WAITING_PER_SLOT } from '../../src/runner/pool.js';
import { noteWaited, waitOutsideSlot } from '../../src/slots.js';
import { decide, UNKNOWN_MTIME } from '../../src/sync/decide.js';
import { parseShard, shareOf } from '../../src/tenants/shard.js';

describe('pool', () => {
  it('keeps the backlog bounded while the producer is faster than the work', async () => {
    const c = new AdaptiveConcurrency({ max: 2 });
    let produced = 0;
    let finished = 0;
    let maxAhead = 0;
    async function* items() {
      for (let i = 0; i < 200; i++) {
        produced++;
        maxAhead = Math.max(maxAhead, produced - finished);
        yield i;
      }
    }
    await runPool(items(), async () => {
      await new Promise((r) => setImmediate(r));
      finished++;
    }, { concurrency: c, backlog: 5 });
    expect(finished).toBe(200);
    // running (2) + queued (5) + the one being handed over
    expect(maxAhead).toBeLessThanOrEqual(8);
  });

  it('gives the slot of an item that waits out a retry to another item, and takes it back first', async () => {
    const c = new AdaptiveConcurrency({ max: 2 });
    const log: string[] = [];
    let endWait: () => void = () => undefined;
    const waiting = new Promise<void>((r) => (endWait = r));
    let holding = 0;
    let most = 0;
    async function* items() {
      for (let i = 0; i < 6; i++) yield i;
    }
    await runPool(items(), async (i, slot) => {
      holding++;
      most = Math.max(most, holding);
      log.push(`start ${i}`);
      if (i === 0) {
        holding--;
        // Item 0 is refused and waits its Retry-After without a slot; it ends once item 3 started.
        await waitOutsideSlot(slot, () => waiting);
        holding++;
        log.push('0 back');
      } else {
        await new Promise((r) => setImmediate(r));
        if (i === 3) endWait();
        // Item 1 stays until item 0 is back, so a slot is free only after 0 has its own again.
        if (i === 1) await waiting.then(() => new Promise((r) => setTimeout(r, 5)));
      }
      log.push(`end ${i}`);
      holding--;
    }, { concurrency: c, backlog: 10 });
    // While 0 waited, 2 and 3 ran in its slot; then 0 came back ahead of 4 and 5.
    expect(log.indexOf('start 2')).toBeLessThan(log.indexOf('0 back'));
    expect(log.indexOf('start 3')).toBeLessThan(log.indexOf('0 back'));
    expect(log.indexOf('0 back')).toBeLessThan(log.indexOf('start 4'));
    expect(log.filter((l) => l.startsWith('end'))).toHaveLength(6);
    // Never more than the limit at work at once.
    expect(most).toBeLessThanOrEqual(2);
  });

  it('lets at most WAITING_PER_SLOT x `limit` items wait without a slot; the next waits in its own', async () => {
    const c = new AdaptiveConcurrency({ max: 2 });
    let started = 0;
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    let sawStarted = 0;
    async function* items() {
      for (let i = 0; i < 60; i++) yield i;
    }
    const done = runPool(items(), async (_, slot) => {
      started++;
      await waitOutsideSlot(slot, () => gate);
    }, { concurrency: c, backlog: 10 });
    for (let i = 0; i < 60; i++) await new Promise((r) => setImmediate(r));
    sawStarted = started;
    release();
    await done;
    // 2 x 16 waiting without a slot + 2 waiting in their own slots: 34 started, not 60.
    expect(sawStarted).toBe(2 * WAITING_PER_SLOT + 2);
    expect(started).toBe(60);
  });

  it('keeps the slot of a wait made without one, and counts the waits an item made in its own slot', async () => {
    const c = new AdaptiveConcurrency({ max: 1 });
    const seen = new Map<number, { retries: number; waitedMs: number }>();
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    let second = false;
    async function* two() {
      yield 1;
      yield 2;
    }
    await runPool(two(), async (i, slot) => {
      if (i === 1) {
        // Shared work (a folder being made) waits with no slot: item 2 gets none meanwhile.
        const waited = waitOutsideSlot(undefined, () => gate);
        for (let k = 0; k < 20; k++) await new Promise((r) => setImmediate(r));
        expect(second).toBe(false);
        release();
        await waited;
        // Its own wait for a retry, and a pause of the pacer it kept its slot through.
        await waitOutsideSlot(slot, () => new Promise((r) => setTimeout(r, 5)));
        noteWaited(slot, 1_000);
      } else second = true;
      seen.set(i, { retries: slot.retries, waitedMs: slot.waitedMs });
    }, { concurrency: c });
    expect(seen.get(1)?.retries).toBe(1);
    expect(seen.get(1)?.waitedMs).toBeGreaterThanOrEqual(1_000);
    // Each item its own slot (item 2 ran in the one item 1 gave away): nothing carried over.
    expect(seen.get(2)).toEqual({ retries: 0, waitedMs: 0 });
  });
});
