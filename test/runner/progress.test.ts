import { describe, expect, it } from 'vitest';
import { AdaptiveConcurrency } from '../../src/runner/adaptive.js';
import { describeProgress, liveLine } from '../../src/runner/progress.js';
import { formatBytes, formatDuration } from '../../src/text.js';
import { runPool } from '../../src/runner/pool.js';
import { decide, UNKNOWN_MTIME } from '../../src/sync/decide.js';
import { parseShard, shareOf } from '../../src/tenants/shard.js';

describe('progress line', () => {
  it('shows files, bytes, rate, ETA and failures', () => {
    const line = describeProgress(
      { counts: { discovered: 10, uploaded: 4, unchanged: 0, skipped: 2, failed: 1, reconciled: 1 }, bytes: 5 * 1024 * 1024, bytesPlanned: 10 * 1024 * 1024, itemsPlanned: 8, discovering: false },
      5_000,
    );
    // 8 entries handled in 5 s.
    expect(line).toBe('5/8 files 5.0 MiB/10.0 MiB 1.0 MiB/s 1.6 files/s eta 5s skipped 2 failed 1');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatDuration(3_725_000)).toBe('1h02m');
  });
});

describe('live progress line', () => {
  const counts = { discovered: 40, uploaded: 20, unchanged: 0, skipped: 5, failed: 1, reconciled: 0 };
  const base = { counts, bytes: 20 * 1024 * 1024, bytesPlanned: 30 * 1024 * 1024, itemsPlanned: 30, discovering: true };

  it('shows the listing apart, without a bar or an ETA, while it runs', () => {
    const line = liveLine({ ...base, listed: 120 }, 10_000, 200);
    expect(line).toBe('listing: 120 found  done 26  20.0 MiB 2.0 MiB/s 2.6 files/s  skipped 5 failed 1');
  });

  it('gives a bar, a percentage and an ETA over every entry once the listing is complete', () => {
    const line = liveLine({ ...base, listed: 52, listingDone: true }, 13_000, 200);
    // 26 of 52 entries in 13 s: 26 more take 13 s.
    expect(line).toBe('[##########..........] 50%  26/52 files  ETA 13s  20.0 MiB 1.5 MiB/s 2.0 files/s  skipped 5 failed 1');
  });

  it('never exceeds the width: parts are dropped from the end, then the line is cut', () => {
    for (const width of [120, 80, 60, 40, 20, 5]) {
      for (const state of [{ ...base, listed: 120 }, { ...base, listed: 52, listingDone: true }]) {
        expect(liveLine(state, 13_000, width).length).toBeLessThanOrEqual(width);
      }
    }
    expect(liveLine({ ...base, listed: 52, listingDone: true }, 13_000, 60)).toBe('[##########..........] 50%  26/52 files  ETA 13s');
  });
});
