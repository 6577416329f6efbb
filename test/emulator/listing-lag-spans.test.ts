// The emulator's listing lag keeps the lag each item was made (or removed) under, across changes of
// the lag, and only as long as some item may still wait on it (src/emulator/state/listing-lag.ts).
// Pure logic on a clock of the test's.
import { describe, expect, it } from 'vitest';
import { ListingLag } from '../../src/emulator/state/listing-lag.js';

function lagWithClock(): { lag: ListingLag; at: (ms: number) => void } {
  let now = 0;
  return { lag: new ListingLag(() => now), at: (ms) => void (now = ms) };
}

const iso = (ms: number) => new Date(ms).toISOString();

/** An id whose own share of the lag is more than half of it. */
function lateId(lag: ListingLag, salt: 'created' | 'removed', atMs: number, ofMs: number): string {
  for (let i = 0; ; i++) if (lag.delayOf(`id-${i}`, salt, atMs) > ofMs / 2) return `id-${i}`;
}

describe('the listing lag across changes', () => {
  it('an item made under a long lag waits it out though the lag is then set to 0, again and again', () => {
    const { lag, at } = lagWithClock();
    lag.set(10_000);
    const id = lateId(lag, 'created', 0, 10_000);
    const delay = lag.delayOf(id, 'created', 0);
    for (let t = 1_000; t < delay; t += 1_000) {
      at(t);
      lag.set(0);
      expect(lag.listed(id, iso(0))).toBe(false);
      expect(lag.longestMs).toBe(10_000);
    }
    at(delay + 1);
    expect(lag.listed(id, iso(0))).toBe(true);
    // Past its span's end plus its lag, nothing waits on it: the history is empty again.
    at(10_000 + 1_000 * Math.ceil(delay / 1_000) + 1);
    lag.set(0);
    expect(lag.spans).toBe(0);
    expect(lag.longestMs).toBe(0);
    expect(lag.listed(id, iso(0))).toBe(true);
  });

  it('a removed item stays listed for its own delay under the lag of its removal', () => {
    const { lag, at } = lagWithClock();
    at(5_000);
    lag.set(8_000);
    const id = lateId(lag, 'removed', 5_000, 8_000);
    at(6_000);
    lag.set(0);
    at(9_000);
    lag.set(0);
    expect(lag.stillListed(id, 5_000)).toBe(true);
    at(5_000 + lag.delayOf(id, 'removed', 5_000) + 1);
    expect(lag.stillListed(id, 5_000)).toBe(false);
  });

  it('200,000 changes, one each 100 ms: a few spans kept, not one per change', () => {
    const { lag, at } = lagWithClock();
    for (let i = 0; i < 200_000; i++) {
      at(i * 100);
      lag.set(i % 2 === 0 ? 300 : 0);
    }
    expect(lag.spans).toBeLessThanOrEqual(8);
    expect(lag.longestMs).toBe(300);
  });
});
