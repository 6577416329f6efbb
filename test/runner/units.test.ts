import { describe, expect, it } from 'vitest';
import { AdaptiveConcurrency } from '../../src/runner/adaptive.js';
import { describeProgress, formatBytes, formatDuration } from '../../src/runner/progress.js';
import { runPool } from '../../src/runner/pool.js';
import { decide } from '../../src/sync/plan.js';

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
      false,
    );
    expect(line).toBe('5/8 files 5.0 MiB/10.0 MiB 1.0 MiB/s eta 5s skipped 2 failed 1');
    expect(describeProgress({ counts: { discovered: 0, uploaded: 0, skipped: 0, failed: 0, reconciled: 0 }, bytes: 0, bytesPlanned: 0, itemsPlanned: 0, discovering: true }, 0, true)).toMatch(/^files \[\.{16}\] 0\/0\+ files  bytes \[\.{16}\] 0 B\/0 B/);
    expect(describeProgress({ counts: { discovered: 4, uploaded: 2, skipped: 0, failed: 0, reconciled: 0 }, bytes: 900, bytesPlanned: 1000, itemsPlanned: 4, discovering: false }, 1000, true)).toMatch(/^files \[#{8}\.{8}\] 2\/4 files  bytes \[#{14}\.{2}\]/);
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatDuration(3_725_000)).toBe('1h02m');
  });
});

describe('decide', () => {
  const known = { state: 'uploaded' as const, remoteId: 'd', size: 3, mtimeMs: 10, sha256: 'abc' };
  it('skips only what is known uploaded and unchanged', () => {
    expect(decide({ size: 3, mtimeMs: 10 }, undefined)).toBe('new');
    expect(decide({ size: 3, mtimeMs: 10 }, known)).toBe('unchanged');
    expect(decide({ size: 3, mtimeMs: 11 }, known)).toBe('changed');
    expect(decide({ size: 4, mtimeMs: 10 }, known)).toBe('changed');
    expect(decide({ size: 3, mtimeMs: 99, sha256: 'abc' }, known)).toBe('unchanged');
    expect(decide({ size: 3, mtimeMs: 10, sha256: 'xyz' }, known)).toBe('changed');
    expect(decide({ size: 3, mtimeMs: 10 }, { ...known, state: 'failed', remoteId: null })).toBe('retry');
    expect(decide({ size: 3, mtimeMs: 10 }, { ...known, state: 'uploading' })).toBe('changed');
  });
});
