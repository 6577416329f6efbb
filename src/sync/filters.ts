// --min-size, --max-size, --min-age, --max-age (rclone's names and meanings): which files a run
// leaves alone by size and by age. Pure: the clock is given, so a test can hold it still.
import type { FileEntry } from './types.js';

export interface SizeAgeLimits {
  /** Leave alone files smaller than this many bytes. */
  minSize?: number | undefined;
  /** Leave alone files larger than this many bytes. */
  maxSize?: number | undefined;
  /** Leave alone files changed less than this long ago (ms). */
  minAge?: number | undefined;
  /** Leave alone files changed longer ago than this (ms). */
  maxAge?: number | undefined;
}

/** The filter a run applies, or undefined when no limit is set. `now` is read once, at the start. */
export function sizeAgeFilter(limits: SizeAgeLimits, now = Date.now()): ((entry: FileEntry) => boolean) | undefined {
  const { minSize, maxSize, minAge, maxAge } = limits;
  if (minSize === undefined && maxSize === undefined && minAge === undefined && maxAge === undefined) return undefined;
  return (entry) => {
    if (minSize !== undefined && entry.size < minSize) return false;
    if (maxSize !== undefined && entry.size > maxSize) return false;
    // A file whose time is unknown is not judged by age.
    if (!Number.isFinite(entry.mtimeMs) || entry.mtimeMs <= 0) return true;
    const age = now - entry.mtimeMs;
    if (minAge !== undefined && age < minAge) return false;
    if (maxAge !== undefined && age > maxAge) return false;
    return true;
  };
}
