// Deterministic embeddings: the same input always gives the same unit vector.
import { seededRandom, seedFromText } from './random.js';

export const EMBEDDING_DEFAULTS = { dimensions: 256, maxDimensions: 3072, model: 'ferry-embedding-1' } as const;

export function embed(input: string, dimensions: number): number[] {
  const random = seededRandom(seedFromText(input));
  // Box-Muller normals give directions spread evenly over the sphere.
  const vector = Array.from({ length: dimensions }, () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random()));
  const norm = Math.hypot(...vector) || 1;
  return vector.map((value) => value / norm);
}

/** Usage counts whitespace-separated words as tokens. */
export function countTokens(input: string): number {
  return input.split(/\s+/).filter(Boolean).length;
}
