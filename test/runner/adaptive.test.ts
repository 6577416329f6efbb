import { describe, expect, it } from 'vitest';
import { AdaptiveConcurrency } from '../../src/runner/adaptive.js';
import { describeProgress, liveLine } from '../../src/runner/progress.js';
import { formatBytes, formatDuration } from '../../src/text.js';
import { runPool } from '../../src/runner/pool.js';
import { decide, UNKNOWN_MTIME } from '../../src/sync/decide.js';
import { parseShard, shareOf } from '../../src/tenants/shard.js';

describe('adaptive concurrency', () => {
  it('halves on pushback once per round and climbs back one step per limit successes', () => {
    const c = new AdaptiveConcurrency({ max: 16 });
    c.throttled();
    expect(c.limit).toBe(8);
    c.throttled(); // same round: requests started before the cut are still landing
    expect(c.limit).toBe(8);
    for (let i = 0; i < 15; i++) c.succeeded(10);
    expect(c.limit).toBe(9); // a step up after a round of 8
    c.throttled(); // the last of the 16 in flight at the cut has not landed yet
    expect(c.limit).toBe(9);
    c.succeeded(10);
    c.throttled();
    expect(c.limit).toBe(4);
    for (let i = 0; i < 4 + 4; i++) c.succeeded(10);
    expect(c.limit).toBe(5);
    for (let i = 0; i < 1000; i++) c.succeeded(10);
    expect(c.limit).toBe(16);
  });

  it('treats a completion far slower than the running norm as pushback, once the first two rounds have set the norm', () => {
    // The first request alone at the service, the next ones behind the queue the run makes.
    const filling = new AdaptiveConcurrency({ max: 8 });
    for (const ms of [8, 60, 70, 75, 80, 80, 78, 80, 79, 81, 80]) filling.succeeded(ms);
    expect(filling.limit).toBe(8);
    const c = new AdaptiveConcurrency({ max: 8 });
    for (let i = 0; i < 20; i++) c.succeeded(20);
    c.succeeded(400);
    expect(c.limit).toBe(4);
  });

  it('undoes a cut for latency when the round after it is back near the norm (a stall), keeps it when not', () => {
    const stall = new AdaptiveConcurrency({ max: 8 });
    for (let i = 0; i < 20; i++) stall.succeeded(20);
    stall.succeeded(400);
    expect(stall.limit).toBe(4);
    // The eight requests in flight at the cut land, then a round of four back at the norm.
    for (let i = 0; i < 8; i++) stall.succeeded(i < 4 ? 300 : 20);
    expect(stall.limit).toBeLessThan(8); // climbing back one step a round, as after any cut
    // The round judged: as many completions as the limit the cut left (4).
    for (let i = 0; i < 3; i++) stall.succeeded(22);
    expect(stall.undone).toBe(0);
    stall.succeeded(22);
    expect(stall.limit).toBe(8);
    expect(stall.undone).toBe(1);

    const slower = new AdaptiveConcurrency({ max: 8 });
    for (let i = 0; i < 20; i++) slower.succeeded(20);
    slower.succeeded(400);
    for (let i = 0; i < 8 + 4; i++) slower.succeeded(300);
    expect(slower.undone).toBe(0);
    expect(slower.limit).toBeLessThan(8);
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
