// Seeded pseudo-random numbers: the emulator must reproduce the same faults,
// delays and embeddings for the same seed, so Math.random is never used.
import { createHash } from 'node:crypto';

export type Random = () => number;

/** mulberry32: tiny, fast, good enough for test traffic (not for cryptography). */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A 32-bit seed derived from any text (e.g. an embedding input). */
export function seedFromText(text: string): number {
  return createHash('sha256').update(text).digest().readUInt32LE(0);
}
