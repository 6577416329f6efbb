// Sizes and durations as a user writes them (flags, job files): parsed here; shown by src/text.ts.
import { isDuration } from '../duration.js';
export { parseDuration } from '../duration.js';

/** A size like 500, 10K, 1.5M or 2G (K is 1024; KB, KiB and B suffixes read alike), or NaN. */
export function parseSize(text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(B|K|KI?B|M|MI?B|G|GI?B|T|TI?B)?$/i.exec(text.trim());
  if (!m) return Number.NaN;
  const power = { '': 0, B: 0, K: 1, M: 2, G: 3, T: 4 }[(m[2] ?? '').toUpperCase().charAt(0) as '' | 'B' | 'K' | 'M' | 'G' | 'T'];
  return Math.round(Number(m[1]) * 1024 ** power);
}

/** An age like 90s, 30m, 12h, 7d or 2w (or 1d12h), as --min-age and a job file's minAge take it. */
export function isAge(text: string): boolean {
  return isDuration(text) && !/^\d+$/.test(text);
}

