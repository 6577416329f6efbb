// The read-ahead a cold start walks the source with: bounded, in order, and a failure of the
// source kept for the consumer at the place it happened.
import { describe, expect, it } from 'vitest';
import { ReadAhead } from '../../src/sync/read-ahead.js';

async function* batches(count: number, size: number, failAt?: number): AsyncIterable<number[]> {
  for (let b = 0; b < count; b++) {
    if (b === failAt) throw new Error(`folder ${b} could not be read`);
    yield Array.from({ length: size }, (_, i) => b * size + i);
  }
}

const settle = () => new Promise((r) => setTimeout(r, 10));

describe('ReadAhead', () => {
  it('reads up to its bound before anyone asks, then hands on everything in order', async () => {
    const ahead = new ReadAhead(batches(100, 10), 250);
    await settle();
    expect(ahead.waiting).toBe(250);
    const seen: number[] = [];
    for await (const batch of ahead.batches()) seen.push(...batch);
    expect(seen).toEqual(Array.from({ length: 1_000 }, (_, i) => i));
  });

  it('a source that fails while read ahead: the batches before it, then its error', async () => {
    const ahead = new ReadAhead(batches(100, 10, 7), 1_000);
    await settle();
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const batch of ahead.batches()) seen.push(...batch);
      })(),
    ).rejects.toThrow('folder 7 could not be read');
    expect(seen).toHaveLength(70);
  });

  it('a consumer that stops early closes the source', async () => {
    let closed = false;
    const source = (async function* () {
      try {
        yield* batches(100, 10);
      } finally {
        closed = true;
      }
    })();
    const ahead = new ReadAhead(source, 50);
    for await (const batch of ahead.batches()) if (batch[0] === 30) break;
    expect(closed).toBe(true);
  });
});
