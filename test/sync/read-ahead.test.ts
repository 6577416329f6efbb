// The source read ahead of the engine while the destination is prepared: how far, what it holds
// once the engine takes from it, what stopping and a failing source do.
import { describe, expect, it } from 'vitest';
import { readAhead } from '../../src/sync/read-ahead.js';

/** Batches of `size` numbers, counting what was read and whether the source was closed. */
function counted(batches: number, size: number, failAt?: number) {
  const state = { read: 0, closed: false };
  async function* source(): AsyncIterable<number[]> {
    try {
      for (let b = 0; b < batches; b++) {
        if (b === failAt) throw new Error('listing refused');
        state.read += size;
        yield Array.from({ length: size }, (_, i) => b * size + i);
      }
    } finally {
      state.closed = true;
    }
  }
  return { state, source: source() };
}

/** Lets the reader run as far as it will. */
const drain = async () => {
  for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r));
};

describe('readAhead', () => {
  it('reads up to its bound before the first is taken, then one batch ahead of the consumer', async () => {
    const { state, source } = counted(100, 10);
    const listing = readAhead(source, 250);
    await drain();
    expect(state.read).toBe(250);
    const walk = listing[Symbol.asyncIterator]();
    let taken = 0;
    for (let i = 0; i < 25; i++) taken += ((await walk.next()).value as number[]).length;
    await drain();
    // The 25 batches read before are taken; from then on one batch waits, no more.
    expect(state.read - taken).toBe(10);
    await walk.next();
    await drain();
    expect(state.read - (taken + 10)).toBe(10);
    let rest = 0;
    for (;;) {
      const next = await walk.next();
      if (next.done) break;
      rest += next.value.length;
    }
    expect(taken + 10 + rest).toBe(1000);
    expect(state.closed).toBe(true);
  });

  it('with nothing to read ahead, reads as the consumer asks', async () => {
    const { state, source } = counted(4, 3);
    const listing = readAhead(source, 0);
    await drain();
    expect(state.read).toBe(0);
    const got: number[] = [];
    for await (const batch of listing) got.push(...batch);
    expect(got).toEqual(Array.from({ length: 12 }, (_, i) => i));
  });

  it('reads further ahead when allowed before the first is taken, not after', async () => {
    const { state, source } = counted(100, 10);
    const listing = readAhead(source, 0);
    await drain();
    expect(state.read).toBe(0);
    listing.allow(30);
    await drain();
    expect(state.read).toBe(30);
    const walk = listing[Symbol.asyncIterator]();
    await walk.next();
    listing.allow(500);
    await drain();
    expect(state.read).toBe(30);
    await listing.stop();
  });

  it('closes the source when stopped before anything was taken', async () => {
    const { state, source } = counted(100, 10);
    const listing = readAhead(source, 50);
    await drain();
    expect(state.read).toBe(50);
    await listing.stop();
    expect(state.closed).toBe(true);
    expect(state.read).toBe(50);
  });

  it('hands on what was read before a failure, then the failure', async () => {
    const { source } = counted(10, 5, 3);
    const got: number[] = [];
    await expect(
      (async () => {
        for await (const batch of readAhead(source, 100)) got.push(...batch);
      })(),
    ).rejects.toThrow('listing refused');
    expect(got).toHaveLength(15);
  });
});
