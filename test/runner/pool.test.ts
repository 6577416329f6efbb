import { describe, expect, it } from 'vitest';
import { AdaptiveConcurrency } from '../../src/runner/adaptive.js';
import { describeProgress, formatBytes, formatDuration, liveLine } from '../../src/runner/progress.js';
import { runPool, WAITING_PER_SLOT } from '../../src/runner/pool.js';
import { detached, poolsAtWork, waitedInSlot, waitOutsideSlot } from '../../src/slots.js';
import { decide, UNKNOWN_MTIME } from '../../src/sync/decide.js';
import { parseShard, shareOf } from '../../src/tenants/selection.js';

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
    await runPool(items(), async (i) => {
      holding++;
      most = Math.max(most, holding);
      log.push(`start ${i}`);
      if (i === 0) {
        holding--;
        // Item 0 is refused and waits its Retry-After without a slot; it ends once item 3 started.
        await waitOutsideSlot(() => waiting);
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
    const done = runPool(items(), async () => {
      started++;
      await waitOutsideSlot(() => gate);
    }, { concurrency: c, backlog: 10 });
    for (let i = 0; i < 60; i++) await new Promise((r) => setImmediate(r));
    sawStarted = started;
    release();
    await done;
    // 2 x 16 waiting without a slot + 2 waiting in their own slots: 34 started, not 60.
    expect(sawStarted).toBe(2 * WAITING_PER_SLOT + 2);
    expect(started).toBe(60);
  });

  it('finishes when every slot awaits work one item began, if that work runs detached from its slot', async () => {
    const c = new AdaptiveConcurrency({ max: 2 });
    let shared: Promise<void> | undefined;
    let done = 0;
    async function* items() {
      for (let i = 0; i < 6; i++) yield i;
    }
    // The first item begins a shared piece of work (a folder being made) whose retry waits out a
    // delay; the others await it. Begun inside the first item's slot, its wait would give that
    // slot away to an item that then awaits it too, and the first could never take one back
    // (without detached() this test hangs).
    await runPool(items(), async () => {
      shared ??= detached(async () => {
        await waitOutsideSlot(() => new Promise((r) => setTimeout(r, 20)));
      });
      await shared;
      done++;
    }, { concurrency: c, backlog: 10 });
    expect(done).toBe(6);
  });

  it('counts the pools at work (the slot storage is off when none is), also one that failed, and gives slots again in the next', async () => {
    const c = new AdaptiveConcurrency({ max: 2 });
    let together = 0;
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    async function* one() {
      yield 1;
    }
    // Two pools at work at once; the first to finish leaves the other's storage on.
    const slow = runPool(one(), async () => {
      await gate;
      together = Math.max(together, poolsAtWork());
      expect(waitedInSlot().retries).toBe(0);
      await waitOutsideSlot(async () => undefined);
      expect(waitedInSlot().retries).toBe(1);
    }, { concurrency: c });
    await runPool(one(), async () => {
      together = Math.max(together, poolsAtWork());
    }, { concurrency: c });
    release();
    await slow;
    expect(together).toBe(2);
    expect(poolsAtWork()).toBe(0);
    // A pool whose work fails is done all the same.
    await expect(runPool(one(), async () => Promise.reject(new Error('refused')), { concurrency: c })).rejects.toThrow('refused');
    expect(poolsAtWork()).toBe(0);
    // Off between pools: no slot outside one; the next pool's items have theirs again.
    await waitOutsideSlot(async () => undefined);
    expect(waitedInSlot().retries).toBe(0);
    let retries = -1;
    await runPool(one(), async () => {
      await waitOutsideSlot(async () => undefined);
      retries = waitedInSlot().retries;
    }, { concurrency: c });
    expect(retries).toBe(1);
  });
});
