import { describe, expect, it } from 'vitest';
import { AdaptiveConcurrency } from '../../src/runner/adaptive.js';
import { describeProgress, formatBytes, formatDuration, liveLine } from '../../src/runner/progress.js';
import { runPool } from '../../src/runner/pool.js';
import { decide, UNKNOWN_MTIME } from '../../src/sync/decide.js';
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
