import { describe, expect, it } from 'vitest';
import { AdaptiveConcurrency } from '../../src/runner/adaptive.js';
import { describeProgress, liveLine } from '../../src/runner/progress.js';
import { formatBytes, formatDuration } from '../../src/text.js';
import { runPool } from '../../src/runner/pool.js';
import { decide, UNKNOWN_MTIME } from '../../src/sync/decide.js';
import { parseShard, shareOf } from '../../src/tenants/shard.js';

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
