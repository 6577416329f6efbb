// A .zip file as a source, read in place: the central directory gives names and sizes, and each
// entry is inflated on demand as a stream, so nothing is extracted to disk or held whole in memory.
// The archive is checked as a whole before anything is read: one bad entry refuses the archive.
// Entries that cannot be mirrored one by one (symbolic links, refused names, earlier copies of a
// path that occurs twice) are reported as items, as a folder source reports them.
import unzipper from 'unzipper';
import { pathFilter, type PathPatterns } from '../../sync/patterns.js';
import { open as openFile } from 'node:fs/promises';
import { posix } from 'node:path';
import { checkName } from '../names.js';
import { SourceError, type Source, type SourceEntry } from '../../sync/types.js';

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

  private readonly wanted: (key: string) => boolean;

  constructor(
    private readonly path: string,
    private readonly limits: ZipLimits = DEFAULT_ZIP_LIMITS,
    patterns: PathPatterns = {},
  ) {
    this.description = path;
    this.wanted = pathFilter(patterns);
  }

  private directory: unzipper.CentralDirectory | undefined;

  takes(key: string): boolean {
    return this.wanted(key);
  }

  async prepare(): Promise<void> {
    if (this.directory) return;
    // The end record says how many entries there are: refuse a huge or truncated archive before
    // unzipper reads (and holds) a single entry.
    const end = await readEndRecord(this.path);
    if (end.entries > this.limits.maxEntries) {
      throw new ZipRefusedError(`${this.path} holds ${end.entries} entries, more than the limit of ${this.limits.maxEntries}; nothing was read`);
    }
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
    const files = (this.directory as unzipper.CentralDirectory).files as ZipFile[];
    const mtimeFallback = Date.now();
    // A path that occurs twice: the last entry is mirrored, the earlier ones are skipped items.
    const last = new Map<string, number>();
    files.forEach((file, i) => last.set(keyOf(file), i));
    for (const [i, file] of files.entries()) {
      if (signal?.aborted) return;
      const verdict = checkName(file.pathBuffer ?? Buffer.from(file.path));
      // The same patterns as a folder's, by the same matcher: a path left out is not seen at all.
      if (!this.wanted(verdict.ok ? keyOf(file) : normaliseKey(verdict.key, backslashSeparates(file)))) continue;
      if (!verdict.ok) {
        yield { kind: 'problem', key: normaliseKey(verdict.key, backslashSeparates(file)), outcome: 'failed', reason: verdict.reason };
        continue;
      }
      const key = keyOf(file);
      const isDir = file.type === 'Directory' || file.path.endsWith('/') || (backslashSeparates(file) && file.path.endsWith('\\'));
      if (isDir) {
        if (last.get(key) === i) yield { kind: 'dir', key };
        continue;
      }
      if (last.get(key) !== i) {
        yield { kind: 'problem', key, outcome: 'skipped', reason: `the archive holds this path more than once (entry ${i + 1}); the last entry with it (entry ${(last.get(key) as number) + 1}) is mirrored` };
        continue;
      }
      if (isSymlink(file)) {
        yield { kind: 'problem', key, outcome: 'skipped', reason: 'symbolic link entry (links are not uploaded)' };
        continue;
      }
      const mtime = file.lastModifiedDateTime instanceof Date ? file.lastModifiedDateTime.getTime() : mtimeFallback;
      yield { kind: 'file', key, size: file.uncompressedSize, mtimeMs: Number.isNaN(mtime) ? 0 : mtime, open: () => file.stream() };
    }
  }

  async close(): Promise<void> {}
}

/** Refuses archives that would write outside the target, bombs, and archives beyond the limits. */
export function checkArchive(
  label: string,
  files: readonly { path: string; uncompressedSize: number; compressedSize: number }[],
  limits: ZipLimits,
  consequence = 'nothing was uploaded',
): void {
  if (files.length > limits.maxEntries) {
    throw new ZipRefusedError(`${label} holds ${files.length} entries, more than the limit of ${limits.maxEntries}`);
  }
  let total = 0;
  for (const file of files) {
    const reason = unsafePathReason(file.path);
    if (reason) throw new ZipRefusedError(`${label} was refused: entry "${file.path}" ${reason}; ${consequence}`);
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

/** What unzipper's central directory gives per entry, with the fields it sets but does not type. */
export type ZipFile = unzipper.File & { pathBuffer?: Buffer; externalFileAttributes?: number; versionMadeBy?: number };

function keyOf(file: ZipFile): string {
  return normaliseKey(file.path, backslashSeparates(file));
}

/**
 * The zip format separates folders with `/` only, but DOS and Windows tools wrote `\`: as Info-ZIP's
 * unzip does, a backslash is read as a separator in entries made on those hosts (MS-DOS/FAT, OS/2
 * HPFS, NTFS, VFAT) and is part of the name elsewhere, so `a\b.txt` zipped on Unix stays one file.
 * (The path safety check reads it as a separator everywhere: refusing more is the safe side.)
 */
const BACKSLASH_HOSTS = new Set([0, 6, 11, 14]);
function backslashSeparates(file: ZipFile): boolean {
  return BACKSLASH_HOSTS.has((file.versionMadeBy ?? 0) >> 8);
}

/** Unix mode bits sit in the high half of the external attributes of entries made on Unix. */
export function isSymlink(file: ZipFile): boolean {
  const attributes = file.externalFileAttributes ?? 0;
  return ((file.versionMadeBy ?? 0) >> 8 === 3 || attributes >>> 16 !== 0) && ((attributes >>> 16) & 0o170000) === 0o120000;
}

/**
 * Reads the end-of-central-directory record (and its zip64 twin) from the tail of the file: the
 * entry count, and whether the central directory it points to lies inside the file. Hand-written
 * because unzipper reads every entry before it tells the count, and reports a cut file only as
 * "FILE_ENDED".
 */
export async function readEndRecord(path: string): Promise<{ entries: number }> {
  const handle = await openFile(path, 'r').catch((err: NodeJS.ErrnoException) => {
    throw new ZipRefusedError(`${path} cannot be read: ${err.code ?? err.message}`);
  });
  try {
    const { size } = await handle.stat();
    const tailLength = Math.min(size, 22 + 0xffff);
    const tail = Buffer.alloc(tailLength);
    await handle.read(tail, 0, tailLength, size - tailLength);
    let at = -1;
    for (let i = tailLength - 22; i >= 0; i--) {
      if (tail.readUInt32LE(i) === 0x06054b50 && i + 22 + tail.readUInt16LE(i + 20) <= tailLength) {
        at = i;
        break;
      }
    }
    if (at < 0) {
      throw new ZipRefusedError(`${path} is not a zip archive, or it is truncated: its end-of-central-directory record is missing (was the download or copy cut short?)`);
    }
    const endOffset = size - tailLength + at;
    let entries = tail.readUInt16LE(at + 10);
    let directorySize = tail.readUInt32LE(at + 12);
    let directoryOffset = tail.readUInt32LE(at + 16);
    if (entries === 0xffff || directoryOffset === 0xffffffff || directorySize === 0xffffffff) {
      const locator = at >= 20 ? tail.subarray(at - 20, at) : undefined;
      if (locator && locator.readUInt32LE(0) === 0x07064b50) {
        const record = Buffer.alloc(56);
        const recordOffset = Number(locator.readBigUInt64LE(8));
        await handle.read(record, 0, 56, recordOffset);
        if (record.readUInt32LE(0) !== 0x06064b50) throw new ZipRefusedError(`${path} is damaged: its zip64 end record is not where the locator says`);
        entries = Number(record.readBigUInt64LE(32));
        directorySize = Number(record.readBigUInt64LE(40));
        directoryOffset = Number(record.readBigUInt64LE(48));
      }
    }
    if (directoryOffset + directorySize > endOffset) {
      throw new ZipRefusedError(`${path} is truncated or damaged: its central directory (${directorySize} bytes at offset ${directoryOffset}) runs past the end of the data (${endOffset} bytes)`);
    }
    return { entries };
  } finally {
    await handle.close();
  }
}

function normaliseKey(path: string, backslashSeparates: boolean): string {
  return posix.normalize(backslashSeparates ? path.replace(/\\/g, '/') : path).replace(/\/+$/, '').replace(/^\.\//, '');
}
