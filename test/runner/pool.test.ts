import { describe, expect, it } from 'vitest';
import { AdaptiveConcurrency } from '../../src/runner/adaptive.js';
import { describeProgress, formatBytes, formatDuration, liveLine } from '../../src/runner/progress.js';
import { runPool } from '../../src/runner/pool.js';
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
});
