// Sizes and durations as people read them (light: loaded by summaries and `--help` alike).
export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${u === 0 ? v.toFixed(0) : v.toFixed(1)} ${units[u]}`;
}

export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  return h > 0 ? `${h}h${String(m).padStart(2, '0')}m` : m > 0 ? `${m}m${String(sec).padStart(2, '0')}s` : `${sec}s`;
}

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

