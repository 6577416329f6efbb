import { describe, expect, it } from 'vitest';
import { AdaptiveConcurrency } from '../../src/runner/adaptive.js';
import { describeProgress, formatBytes, formatDuration, liveLine } from '../../src/runner/progress.js';
import { runPool } from '../../src/runner/pool.js';
import { decide, UNKNOWN_MTIME } from '../../src/sync/plan.js';
import { parseShard, shareOf } from '../../src/tenants/selection.js';

describe('adaptive concurrency', () => {
  it('halves on pushback once per round and climbs back one step per limit successes', () => {
    const c = new AdaptiveConcurrency({ max: 16 });
    c.throttled();
    expect(c.limit).toBe(8);
    c.throttled(); // same round: requests started before the cut are still landing
    expect(c.limit).toBe(8);
    for (let i = 0; i < 8; i++) c.succeeded(10);
    c.throttled();
    expect(c.limit).toBe(4);
    for (let i = 0; i < 4 + 4; i++) c.succeeded(10);
    expect(c.limit).toBe(5);
    for (let i = 0; i < 1000; i++) c.succeeded(10);
    expect(c.limit).toBe(16);
  });

  it('treats a completion far slower than the running norm as pushback', () => {
    const c = new AdaptiveConcurrency({ max: 8 });
    for (let i = 0; i < 20; i++) c.succeeded(20);
    c.succeeded(400);
    expect(c.limit).toBe(4);
  });

  it('never goes below its minimum', () => {
    const c = new AdaptiveConcurrency({ max: 2, min: 1 });
    for (let i = 0; i < 5; i++) {
      c.throttled();
      for (let j = 0; j < 3; j++) c.succeeded(1);
    }
    expect(c.limit).toBeGreaterThanOrEqual(1);
  });
});

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
});

describe('progress line', () => {
  it('shows files, bytes, rate, ETA and failures', () => {
    const line = describeProgress(
      { counts: { discovered: 10, uploaded: 4, skipped: 2, failed: 1, reconciled: 1 }, bytes: 5 * 1024 * 1024, bytesPlanned: 10 * 1024 * 1024, itemsPlanned: 8, discovering: false },
      5_000,
    );
    expect(line).toBe('5/8 files 5.0 MiB/10.0 MiB 1.0 MiB/s eta 5s skipped 2 failed 1');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatDuration(3_725_000)).toBe('1h02m');
  });
});

describe('live progress line', () => {
  const counts = { discovered: 40, uploaded: 20, skipped: 5, failed: 1, reconciled: 0 };
  const base = { counts, bytes: 20 * 1024 * 1024, bytesPlanned: 30 * 1024 * 1024, itemsPlanned: 30, discovering: true };

  it('shows the listing apart, without a bar or an ETA, while it runs', () => {
    const line = liveLine({ ...base, listed: 120 }, 10_000, 200);
    expect(line).toBe('listing: 120 found  done 26  20.0 MiB 2.0 MiB/s  skipped 5 failed 1');
  });

  it('gives a bar, a percentage and an ETA over every entry once the listing is complete', () => {
    const line = liveLine({ ...base, listed: 52, listingDone: true }, 13_000, 200);
    // 26 of 52 entries in 13 s: 26 more take 13 s.
    expect(line).toBe('[##########..........] 50%  26/52 files  20.0 MiB 1.5 MiB/s  ETA 13s  skipped 5 failed 1');
  });

  it('never exceeds the width: parts are dropped from the end, then the line is cut', () => {
    for (const width of [120, 80, 60, 40, 20, 5]) {
      for (const state of [{ ...base, listed: 120 }, { ...base, listed: 52, listingDone: true }]) {
        expect(liveLine(state, 13_000, width).length).toBeLessThanOrEqual(width);
      }
    }
    expect(liveLine({ ...base, listed: 52, listingDone: true }, 13_000, 60)).toBe('[##########..........] 50%  26/52 files  20.0 MiB 1.5 MiB/s');
  });
});

describe('decide', () => {
  const known = { state: 'uploaded' as const, remoteId: 'd', size: 3, mtimeMs: 10, sha256: 'abc' };
  it('skips only what is known uploaded and unchanged', () => {
    expect(decide({ size: 3, mtimeMs: 10 }, undefined)).toBe('new');
    expect(decide({ size: 3, mtimeMs: 10 }, known)).toBe('unchanged');
    expect(decide({ size: 3, mtimeMs: 11 }, { ...known, sha256: null })).toBe('changed');
    // Another time, same size, and the content's sha256 known: the content decides.
    expect(decide({ size: 3, mtimeMs: 11 }, known)).toBe('compare');
    expect(decide({ size: 4, mtimeMs: 10 }, known)).toBe('changed');
    expect(decide({ size: 3, mtimeMs: 99, sha256: 'abc' }, known)).toBe('unchanged');
    expect(decide({ size: 3, mtimeMs: 10, sha256: 'xyz' }, known)).toBe('changed');
    expect(decide({ size: 3, mtimeMs: 10 }, { ...known, state: 'failed', remoteId: null })).toBe('retry');
    expect(decide({ size: 3, mtimeMs: 10 }, { ...known, state: 'uploading' })).toBe('changed');
  });
  it('takes a document adopted by path and size alone as unchanged, unless --checksum asks for content', () => {
    const adopted = { state: 'uploaded' as const, remoteId: 'd', size: 3, mtimeMs: UNKNOWN_MTIME, sha256: null };
    expect(decide({ size: 3, mtimeMs: 10 }, adopted)).toBe('unchanged');
    expect(decide({ size: 4, mtimeMs: 10 }, adopted)).toBe('changed');
    expect(decide({ size: 3, mtimeMs: 10, sha256: 'abc' }, adopted)).toBe('changed');
  });
});

describe('shards', () => {
  it('puts every id in exactly one of N shards, the same in every process, and refuses a malformed K/N', () => {
    const ids = Array.from({ length: 300 }, (_, i) => `0000000${i}-aaaa-4bbb-8ccc-${String(i).padStart(12, '0')}`);
    const items = ids.map((objectIdentifier) => ({ objectIdentifier }));
    const shares = [1, 2, 3].map((index) => shareOf(items, { index, count: 3 }).map((o) => o.objectIdentifier));
    expect(shares.flat().sort()).toEqual([...ids].sort());
    for (const share of shares) expect(share.length).toBeGreaterThan(60);
    expect(shareOf(items, { index: 2, count: 3 })).toEqual(shareOf(items, { index: 2, count: 3 }));
    expect(parseShard('2/3')).toEqual({ index: 2, count: 3 });
    for (const bad of ['0/3', '4/3', '3', 'a/b', '1/0']) expect(() => parseShard(bad), bad).toThrow(/K\/N/);
  });
});
