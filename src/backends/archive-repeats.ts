// A path an archive holds more than once: the last entry with it is the file (as unzip and tar
// extract it, each overwriting the one before), the earlier ones are skipped items. Deciding that
// while streaming needs to know the future, so the entries are read twice: once to count each
// path as a 53-bit hash (16 bytes a path, no string kept), and, only where a hash was met twice,
// a second time to learn the exact last index of those paths (a hash collision then costs a
// look, never a wrong skip). Shared by the zip and tar sources.
import { NumberByKey } from '../hashed-keys.js';

export class RepeatedPaths {
  private readonly counts = new NumberByKey(1);
  private repeated = false;
  private last: Map<string, number> | undefined;

  /** First pass: each path as met. */
  count(key: string): void {
    const seen = this.counts.get(key) ?? 0;
    if (seen > 0) this.repeated = true;
    this.counts.set(key, seen + 1);
  }

  /** Whether a second pass is needed (some hash was met twice). */
  get needsSecondPass(): boolean {
    return this.repeated && this.last === undefined;
  }

  /** Second pass, in the same order: exact last indexes of the paths whose hash repeats. */
  note(key: string, index: number): void {
    if ((this.counts.get(key) ?? 0) < 2) return;
    (this.last ??= new Map()).set(key, index);
  }

  /** Ends the second pass (called even when it found nothing, so that `needsSecondPass` is false). */
  noted(): void {
    this.last ??= new Map();
  }

  /** The index of the last entry with this path; `index` itself when it is the only one. */
  lastIndex(key: string, index: number): number {
    if (!this.repeated || (this.counts.get(key) ?? 0) < 2) return index;
    return this.last?.get(key) ?? index;
  }
}

/** Why an earlier entry of a path held twice is skipped (entries counted from 1, as a person counts them). */
export function repeatedReason(index: number, last: number): string {
  return `the archive holds this path more than once (entry ${index + 1}); the last entry with it (entry ${last + 1}) is mirrored`;
}
