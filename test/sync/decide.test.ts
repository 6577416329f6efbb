import { describe, expect, it } from 'vitest';
import { AdaptiveConcurrency } from '../../src/runner/adaptive.js';
import { describeProgress, liveLine } from '../../src/runner/progress.js';
import { formatBytes, formatDuration } from '../../src/text.js';
import { runPool } from '../../src/runner/pool.js';
import { decide, UNKNOWN_MTIME } from '../../src/sync/decide.js';
import { parseShard, shareOf } from '../../src/tenants/shard.js';

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
    expect(decide({ size: 3, mtimeMs: 10 }, { ...known, state: 'in-flight' })).toBe('changed');
  });
  it('takes a document adopted by path and size alone as unchanged, unless --checksum asks for content', () => {
    const adopted = { state: 'uploaded' as const, remoteId: 'd', size: 3, mtimeMs: UNKNOWN_MTIME, sha256: null };
    expect(decide({ size: 3, mtimeMs: 10 }, adopted)).toBe('unchanged');
    expect(decide({ size: 4, mtimeMs: 10 }, adopted)).toBe('changed');
    expect(decide({ size: 3, mtimeMs: 10, sha256: 'abc' }, adopted)).toBe('changed');
  });
});
