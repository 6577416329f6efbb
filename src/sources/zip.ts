// A .zip file as a source, read in place: the central directory gives names and sizes, and each
// entry is inflated on demand as a stream, so nothing is extracted to disk or held whole in memory.
// The archive is checked as a whole before anything is read: one bad entry refuses the archive.
import unzipper from 'unzipper';
import { posix } from 'node:path';
import { SourceError, type Source, type SourceEntry } from './types.js';

export interface ZipLimits {
  /** Most entries accepted (default 100,000: the central directory is held while mirroring). */
  maxEntries: number;
  /** Largest total of uncompressed sizes (default 64 GiB). */
  maxTotalBytes: number;
  /** Largest uncompressed/compressed ratio of an entry over 1 MiB (default 200; zip bombs reach thousands). */
  maxRatio: number;
}

export const DEFAULT_ZIP_LIMITS: ZipLimits = { maxEntries: 100_000, maxTotalBytes: 64 * 1024 ** 3, maxRatio: 200 };

export class ZipRefusedError extends SourceError {}

export class ZipSource implements Source {
  readonly description: string;

  constructor(
    private readonly path: string,
    private readonly limits: ZipLimits = DEFAULT_ZIP_LIMITS,
  ) {
    this.description = path;
  }

  private directory: unzipper.CentralDirectory | undefined;

  async prepare(): Promise<void> {
    if (this.directory) return;
    let directory: unzipper.CentralDirectory;
    try {
      directory = await unzipper.Open.file(this.path);
    } catch (err) {
      throw new ZipRefusedError(`${this.path} is not a readable zip archive: ${(err as Error).message}`);
    }
    checkArchive(this.path, directory.files, this.limits);
    this.directory = directory;
  }

  async *entries(signal?: AbortSignal): AsyncIterable<SourceEntry> {
    await this.prepare();
    const files = (this.directory as unzipper.CentralDirectory).files;
    const mtimeFallback = Date.now();
    for (const file of files) {
      if (signal?.aborted) return;
      const key = normaliseKey(file.path);
      if (file.type === 'Directory' || file.path.endsWith('/')) {
        yield { kind: 'dir', key };
        continue;
      }
      const mtime = file.lastModifiedDateTime instanceof Date ? file.lastModifiedDateTime.getTime() : mtimeFallback;
      yield { kind: 'file', key, size: file.uncompressedSize, mtimeMs: Number.isNaN(mtime) ? 0 : mtime, open: () => file.stream() };
    }
  }

  async close(): Promise<void> {}
}

/** Refuses archives that would write outside the target, bombs, and archives beyond the limits. */
export function checkArchive(label: string, files: readonly { path: string; uncompressedSize: number; compressedSize: number }[], limits: ZipLimits): void {
  if (files.length > limits.maxEntries) {
    throw new ZipRefusedError(`${label} holds ${files.length} entries, more than the limit of ${limits.maxEntries}`);
  }
  let total = 0;
  for (const file of files) {
    const reason = unsafePathReason(file.path);
    if (reason) throw new ZipRefusedError(`${label} was refused: entry "${file.path}" ${reason}; nothing was uploaded`);
    total += file.uncompressedSize;
    if (file.uncompressedSize > 1024 * 1024 && file.uncompressedSize / Math.max(1, file.compressedSize) > limits.maxRatio) {
      throw new ZipRefusedError(
        `${label} was refused: entry "${file.path}" expands ${Math.round(file.uncompressedSize / Math.max(1, file.compressedSize))}-fold (limit ${limits.maxRatio}), which looks like a zip bomb`,
      );
    }
  }
  if (total > limits.maxTotalBytes) {
    throw new ZipRefusedError(`${label} would expand to ${total} bytes, more than the limit of ${limits.maxTotalBytes}`);
  }
}

function unsafePathReason(path: string): string | undefined {
  if (path.includes('\0')) return 'contains a NUL character';
  const p = path.replace(/\\/g, '/');
  if (p.startsWith('/') || /^[A-Za-z]:/.test(p)) return 'is an absolute path';
  if (p.split('/').some((segment) => segment === '..')) return 'climbs out of the archive with ".."';
  return undefined;
}

function normaliseKey(path: string): string {
  return posix.normalize(path.replace(/\\/g, '/')).replace(/\/+$/, '').replace(/^\.\//, '');
}
