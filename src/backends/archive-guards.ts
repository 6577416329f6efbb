// The checks every archive source (zip, tar) passes before anything of it is sent: one bad entry
// refuses the archive whole (exit 2, nothing created). An archive is refused for what makes it
// dangerous (a path out of the target, a device, a declared size or a compression ratio no real
// export has), and for an entry count past a limit the user can raise; not for being big.
// Entries are checked as they stream by, so that a million of them cost no memory.
import { SourceError } from '../sync/types.js';
import { visible } from '../text.js';

/** The archive cannot be read as a source: nothing was done. */
export class RejectedArchive extends SourceError {}

export interface ArchiveLimits {
  /** Most entries accepted (--max-entries; default a million). */
  maxEntries: number;
  /** Largest total of uncompressed sizes (default 64 GiB). */
  maxTotalBytes: number;
  /** Largest uncompressed/compressed ratio of an entry over 1 MiB (default 200; bombs reach thousands). */
  maxRatio: number;
}

export const DEFAULT_ARCHIVE_LIMITS: ArchiveLimits = { maxEntries: 1_000_000, maxTotalBytes: 64 * 1024 ** 3, maxRatio: 200 };

/** Below this an entry's ratio is not judged: a small file of one repeated byte is not a bomb. */
export const RATIO_FLOOR = 1024 * 1024;

/** Why a path would write outside the target, or undefined. The backslash counts as a separator: refusing more is the safe side. */
export function unsafePathReason(path: string): string | undefined {
  if (path.includes('\0')) return 'contains a NUL character';
  const p = path.replace(/\\/g, '/');
  if (p.startsWith('/') || /^[A-Za-z]:/.test(p)) return 'is an absolute path';
  if (p.split('/').some((segment) => segment === '..')) return 'climbs out of the archive with ".."';
  return undefined;
}

/** The running checks over one archive's entries, in the order they are met. */
export class ArchiveGuard {
  private entries = 0;
  private total = 0;

  constructor(
    private readonly label: string,
    private readonly limits: ArchiveLimits,
    /** What the refusal says was done, e.g. "nothing was uploaded". */
    private readonly consequence = 'nothing was uploaded',
    /** The error a refusal is (each reader its own, all of them RejectedArchive). */
    private readonly Rejected: new (message: string) => RejectedArchive = RejectedArchive,
  ) {}

  /** Refuses an archive whose count is known ahead (a zip's end record) before a single entry is read. */
  count(entries: number, consequence = 'nothing was read'): void {
    if (entries > this.limits.maxEntries) {
      throw new this.Rejected(`${this.label} holds ${entries} entries, more than the limit of ${this.limits.maxEntries} (--max-entries raises it); ${consequence}`);
    }
  }

  /** One entry: its path as written in the archive, its uncompressed size and, where known, its compressed size. */
  entry(path: string, size: number, compressed?: number): void {
    this.count(++this.entries, this.consequence);
    const reason = unsafePathReason(path);
    if (reason) this.reject(`entry "${visible(path)}" ${reason}`);
    this.total += size;
    if (compressed !== undefined && size > RATIO_FLOOR && size / Math.max(1, compressed) > this.limits.maxRatio) {
      this.reject(`entry "${visible(path)}" expands ${Math.round(size / Math.max(1, compressed))}-fold (limit ${this.limits.maxRatio}), which looks like a zip bomb`);
    }
    if (this.total > this.limits.maxTotalBytes) {
      throw new this.Rejected(`${this.label} would expand to at least ${this.total} bytes, more than the limit of ${this.limits.maxTotalBytes}; ${this.consequence}`);
    }
  }

  /** A refusal naming the archive and what was done (nothing). */
  reject(what: string): never {
    throw new this.Rejected(`${this.label} was refused: ${what}; ${this.consequence}`);
  }
}
