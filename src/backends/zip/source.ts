// A .zip file as a source, read in place. The central directory is read entry by entry (yauzl,
// lazily, through a block cache: no array of a million entries, no read call per field), and each
// entry is inflated on demand as a stream, so nothing is extracted to disk or held whole in memory.
// The archive is checked whole before anything is read (archive-guards.ts): one bad entry refuses
// it. Entries that cannot be mirrored one by one (symbolic links, names ferry is not sure of,
// encrypted entries, earlier copies of a path that occurs twice) are reported as items, as a
// folder source reports them. Names: zip/names.ts.
import { open as openFile, type FileHandle } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import { posix } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import yauzl from 'yauzl';
import type unzipper from 'unzipper';
import { pathFilter, type PathPatterns } from '../../sync/patterns.js';
import type { Source, SourceEntry } from '../../sync/types.js';
import { ArchiveGuard, DEFAULT_ARCHIVE_LIMITS, RejectedArchive, type ArchiveLimits } from '../archive-guards.js';
import { RepeatedPaths, repeatedReason } from '../archive-repeats.js';
import type { ArchiveNameVerdict, NameRule } from '../archive-encoding.js';
import { zipEntryName } from './names.js';

export type ZipLimits = ArchiveLimits;
export const DEFAULT_ZIP_LIMITS: ZipLimits = DEFAULT_ARCHIVE_LIMITS;

export class ZipRejectedError extends RejectedArchive {}

export interface ZipSourceOptions extends PathPatterns {
  /** --archive-encoding: the code page of names that are neither flagged nor valid UTF-8. */
  encoding?: string | undefined;
}

export class ZipSource implements Source {
  readonly description: string;
  expectedCount: number | undefined;

  private readonly wanted: (key: string) => boolean;
  private reader: BlockReader | undefined;
  private size = 0;
  private repeats: RepeatedPaths | undefined;
  /** Which rule named how many entries, from the check (every entry, whatever the patterns). */
  private readonly rules: Partial<Record<NameRule, number>> = {};
  /** Directories whose entries were handed out: their streams open until the source is closed. */
  private readonly handedOut = new Set<yauzl.ZipFile>();

  constructor(
    private readonly path: string,
    private readonly limits: ZipLimits = DEFAULT_ZIP_LIMITS,
    private readonly options: ZipSourceOptions = {},
  ) {
    this.description = path;
    this.wanted = pathFilter(options);
  }

  takes(key: string): boolean {
    return this.wanted(key);
  }

  async prepare(): Promise<void> {
    if (this.reader) return;
    // The end record says how many entries there are: refuse an absurd count or a truncated
    // archive before a single entry is read.
    const end = await readEndRecord(this.path);
    const guard = new ArchiveGuard(this.path, this.limits, 'nothing was uploaded', ZipRejectedError);
    guard.count(end.entries);
    const reader = await BlockReader.open(this.path).catch((err: NodeJS.ErrnoException) => {
      throw new ZipRejectedError(`${this.path} cannot be read: ${err.code ?? err.message}`);
    });
    this.size = reader.size;
    reader.ref(); // held until close(): the passes open and close directories over it
    this.reader = reader;
    try {
      const repeats = new RepeatedPaths();
      const overlap = new OverlapCheck(end.entries);
      for await (const entry of this.directory()) {
        const name = this.nameOf(entry);
        this.rules[name.rule ?? 'utf8'] = (this.rules[name.rule ?? 'utf8'] ?? 0) + 1;
        guard.entry(name.ok ? name.name : name.key, entry.uncompressedSize, entry.compressedSize);
        overlap.add(entry);
        repeats.count(keyOf(entry, name));
      }
      const clash = overlap.clash();
      if (clash !== undefined) guard.reject(`two entries share the same bytes of the file (at offset ${clash}), the mark of a zip bomb built from overlapping entries`);
      if (repeats.needsSecondPass) {
        let i = 0;
        for await (const entry of this.directory()) repeats.note(keyOf(entry, this.nameOf(entry)), i++);
      }
      repeats.noted();
      this.repeats = repeats;
      this.expectedCount = end.entries;
    } catch (err) {
      await this.close();
      if (err instanceof RejectedArchive) throw err;
      throw new ZipRejectedError(`${this.path} is not a readable zip archive: ${(err as Error).message}; nothing was uploaded`);
    }
  }

  async *entries(signal?: AbortSignal): AsyncIterable<SourceEntry> {
    await this.prepare();
    const repeats = this.repeats as RepeatedPaths;
    const mtimeFallback = Date.now();
    let i = -1;
    for await (const { entry, zipfile } of this.directory(true)) {
      i++;
      if (signal?.aborted) return;
      const name = this.nameOf(entry);
      const key = keyOf(entry, name);
      if (key === '' || key === '.') continue; // the archive's own top folder: the destination itself
      // The same patterns as a folder's, by the same matcher: a path left out is not seen at all.
      if (!this.wanted(key)) continue;
      if (!name.ok) {
        yield { kind: 'problem', key, outcome: 'failed', reason: name.reason };
        continue;
      }
      const last = repeats.lastIndex(key, i);
      if (isDirectory(entry, name.name)) {
        if (last === i) yield { kind: 'dir', key };
        continue;
      }
      if (last !== i) {
        yield { kind: 'problem', key, outcome: 'skipped', reason: repeatedReason(i, last) };
        continue;
      }
      if (isSymlink(entry)) {
        yield { kind: 'problem', key, outcome: 'skipped', reason: 'symbolic link entry (links are not uploaded)' };
        continue;
      }
      if (entry.isEncrypted()) {
        yield { kind: 'problem', key, outcome: 'failed', reason: 'the entry is encrypted: ferry takes no passwords; extract it with the password and mirror the folder' };
        continue;
      }
      if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) {
        yield { kind: 'problem', key, outcome: 'failed', reason: `the entry is compressed with method ${entry.compressionMethod} (not stored or deflate), which ferry cannot read: re-zip it with deflate` };
        continue;
      }
      const mtime = entry.getLastModDate().getTime();
      yield { kind: 'file', key, size: entry.uncompressedSize, mtimeMs: Number.isNaN(mtime) ? mtimeFallback : mtime, open: () => openEntry(zipfile, entry) };
    }
  }

  /** What a person should know of how the names were read: names ferry decoded in cp437 without being told. */
  notes(): string[] {
    const guessed = this.rules['cp437-default'] ?? 0;
    if (guessed === 0) return [];
    return [`${guessed} name${guessed === 1 ? '' : 's'} read as cp437, the zip default (the archive does not say which code page): if they look wrong, pass --archive-encoding (e.g. cp850, cp932)`];
  }

  /** How many entries each naming rule decided (the dry run's JSON). */
  nameRules(): Partial<Record<NameRule, number>> {
    return { ...this.rules };
  }

  async close(): Promise<void> {
    const reader = this.reader;
    this.reader = undefined;
    for (const zipfile of this.handedOut) zipfile.close();
    this.handedOut.clear();
    reader?.unref();
  }

  private nameOf(entry: yauzl.Entry): ArchiveNameVerdict {
    return zipEntryName({ raw: entry.fileNameRaw, flags: entry.generalPurposeBitFlag, extraFields: entry.extraFields }, this.options.encoding);
  }

  /** One pass over the central directory, an entry at a time (with its directory, for streams when `withFile`). */
  private directory(withFile: true): AsyncIterable<{ entry: yauzl.Entry; zipfile: yauzl.ZipFile }>;
  private directory(): AsyncIterable<yauzl.Entry>;
  private async *directory(withFile = false): AsyncIterable<yauzl.Entry | { entry: yauzl.Entry; zipfile: yauzl.ZipFile }> {
    const reader = this.reader;
    if (!reader) return;
    const zipfile = await yauzl.fromRandomAccessReaderPromise(reader, this.size, { lazyEntries: true, autoClose: false, decodeStrings: false, validateEntrySizes: true, strictFileNames: false });
    if (withFile) this.handedOut.add(zipfile);
    try {
      for (;;) {
        const entry = await new Promise<yauzl.Entry | undefined>((resolve, reject) => {
          const onEntry = (e: yauzl.Entry) => finish(() => resolve(e));
          const onEnd = () => finish(() => resolve(undefined));
          const onError = (err: Error) => finish(() => reject(err));
          const finish = (then: () => void) => {
            zipfile.off('entry', onEntry).off('end', onEnd).off('error', onError);
            then();
          };
          zipfile.on('entry', onEntry).on('end', onEnd).on('error', onError);
          zipfile.readEntry();
        });
        if (!entry) return;
        yield withFile ? { entry, zipfile } : entry;
      }
    } finally {
      // A directory whose entries were handed out stays open for their streams until close().
      if (!withFile) zipfile.close();
    }
  }
}

/** A fresh stream of the entry's content (inflated, its size checked against the directory's). */
function openEntry(zipfile: yauzl.ZipFile, entry: yauzl.Entry): Readable {
  const out = new PassThrough();
  zipfile.openReadStream(entry, (err, stream) => {
    if (err) {
      out.destroy(err);
      return;
    }
    stream.on('error', (e) => out.destroy(e));
    out.on('close', () => stream.destroy());
    stream.pipe(out);
  });
  return out;
}

function keyOf(entry: yauzl.Entry, name: ArchiveNameVerdict): string {
  const text = name.ok ? name.name : name.key;
  return normaliseKey(text, backslashSeparates(entry));
}

function isDirectory(entry: yauzl.Entry, name: string): boolean {
  return name.endsWith('/') || (backslashSeparates(entry) && name.endsWith('\\'));
}

/**
 * Entries whose bytes overlap another's: the "better zip bomb" (Fifield, 2019) makes every entry
 * inflate the same kernel. Each entry's span is known from the directory only in part (the local
 * header's extra field is not), so a span runs from its local header to at least 30 bytes, its
 * name and its compressed data further: overlapping those is certain, never a false alarm.
 * 16 bytes an entry, sorted once if the directory is not already in file order.
 */
class OverlapCheck {
  private starts: Float64Array;
  private ends: Float64Array;
  private n = 0;
  private ordered = true;

  constructor(expected: number) {
    this.starts = new Float64Array(Math.max(16, expected));
    this.ends = new Float64Array(Math.max(16, expected));
  }

  add(entry: yauzl.Entry): void {
    if (this.n === this.starts.length) {
      this.starts = grow(this.starts);
      this.ends = grow(this.ends);
    }
    const start = entry.relativeOffsetOfLocalHeader;
    if (this.n > 0 && start < (this.starts[this.n - 1] as number)) this.ordered = false;
    this.starts[this.n] = start;
    this.ends[this.n] = start + 30 + entry.fileNameLength + entry.compressedSize;
    this.n++;
  }

  /** The offset where two entries' bytes meet, or undefined. */
  clash(): number | undefined {
    let order: Uint32Array | undefined;
    if (!this.ordered) {
      order = new Uint32Array(this.n).map((_, i) => i);
      const starts = this.starts;
      order.sort((a, b) => (starts[a] as number) - (starts[b] as number));
    }
    let reach = -1;
    for (let k = 0; k < this.n; k++) {
      const i = order ? (order[k] as number) : k;
      const start = this.starts[i] as number;
      if (start < reach) return start;
      reach = Math.max(reach, this.ends[i] as number);
    }
    return undefined;
  }
}

function grow(a: Float64Array): Float64Array {
  const b = new Float64Array(a.length * 2);
  b.set(a);
  return b;
}

/**
 * The file under yauzl, read a block at a time: yauzl asks for each directory entry's 46 bytes
 * and then its name in two reads, which for a million entries is two million read calls; here
 * they come from a 1 MiB block read once. Content streams read the file directly.
 */
class BlockReader extends yauzl.RandomAccessReader {
  private static readonly BLOCK = 1024 * 1024;
  /** A few blocks, most recent last: passes over the directory may run side by side (a terminal's census beside the run's own). */
  private static readonly KEPT = 4;
  private blocks: { at: number; bytes: Buffer }[] = [];

  declare ref: () => void;
  declare unref: () => void;

  private constructor(
    private readonly path: string,
    private readonly handle: FileHandle,
    readonly size: number,
  ) {
    super();
    // yauzl counts its users (each directory, each open stream) and closes the file at none.
    // Each pass over the directory listens for the file's close: more than ten passes are no leak.
    this.setMaxListeners(0);
  }

  static async open(path: string): Promise<BlockReader> {
    const handle = await openFile(path, 'r');
    const { size } = await handle.stat().catch(async (err: unknown) => {
      await handle.close();
      throw err;
    });
    return new BlockReader(path, handle, size);
  }

  override _readStreamForRange(start: number, end: number): Readable {
    return createReadStream(this.path, { start, end: end - 1 });
  }

  override read(buffer: Buffer, offset: number, length: number, position: number, callback: (err: Error | null, bytesRead?: number) => void): void {
    const kept = this.blocks.find((b) => position >= b.at && position + length <= b.at + b.bytes.length);
    if (kept) {
      kept.bytes.copy(buffer, offset, position - kept.at, position - kept.at + length);
      setImmediate(() => callback(null, length));
      return;
    }
    const size = Math.max(length, Math.min(BlockReader.BLOCK, this.size - position));
    const block = Buffer.allocUnsafe(size);
    this.handle.read(block, 0, size, position).then(({ bytesRead }) => {
      const bytes = block.subarray(0, bytesRead);
      this.blocks.push({ at: position, bytes });
      if (this.blocks.length > BlockReader.KEPT) this.blocks.shift();
      const n = Math.min(length, bytesRead);
      bytes.copy(buffer, offset, 0, n);
      callback(null, n);
    }, (err: Error) => callback(err));
  }

  override close(callback: (err: Error | null) => void): void {
    this.handle.close().then(() => callback(null), (err: Error) => callback(err));
  }
}

/**
 * What unzipper's central directory gives per entry, with the fields it sets but does not type
 * (the playbook archive reader, which reads small archives whole, uses it).
 */
export type ZipFile = unzipper.File & { pathBuffer?: Buffer; externalFileAttributes?: number; versionMadeBy?: number };

/** Refuses an archive read whole (a playbook archive) that would write outside the target, a bomb, or one beyond the limits. */
export function checkArchive(
  label: string,
  files: readonly { path: string; uncompressedSize: number; compressedSize: number }[],
  limits: ZipLimits,
  consequence = 'nothing was uploaded',
): void {
  const guard = new ArchiveGuard(label, limits, consequence, ZipRejectedError);
  guard.count(files.length, consequence);
  for (const file of files) guard.entry(file.path, file.uncompressedSize, file.compressedSize);
}

/**
 * The zip format separates folders with `/` only, but DOS and Windows tools wrote `\`: as Info-ZIP's
 * unzip does, a backslash is read as a separator in entries made on those hosts (MS-DOS/FAT, OS/2
 * HPFS, NTFS, VFAT) and is part of the name elsewhere, so `a\b.txt` zipped on Unix stays one file.
 * (The path safety check reads it as a separator everywhere: refusing more is the safe side.)
 */
const BACKSLASH_HOSTS = new Set([0, 6, 11, 14]);
function backslashSeparates(entry: { versionMadeBy?: number }): boolean {
  return BACKSLASH_HOSTS.has((entry.versionMadeBy ?? 0) >> 8);
}

/** Unix mode bits sit in the high half of the external attributes of entries made on Unix. */
export function isSymlink(file: { externalFileAttributes?: number; versionMadeBy?: number }): boolean {
  const attributes = file.externalFileAttributes ?? 0;
  return ((file.versionMadeBy ?? 0) >> 8 === 3 || attributes >>> 16 !== 0) && ((attributes >>> 16) & 0o170000) === 0o120000;
}

/**
 * Reads the end-of-central-directory record (and its zip64 twin) from the tail of the file: the
 * entry count, and whether the central directory it points to lies inside the file. Hand-written
 * because the readers report a cut file only as "unexpected EOF" or "FILE_ENDED".
 */
export async function readEndRecord(path: string): Promise<{ entries: number }> {
  const handle = await openFile(path, 'r').catch((err: NodeJS.ErrnoException) => {
    throw new ZipRejectedError(`${path} cannot be read: ${err.code ?? err.message}`);
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
      throw new ZipRejectedError(`${path} is not a zip archive, or it is truncated: its end-of-central-directory record is missing (was the download or copy cut short?)`);
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
        if (record.readUInt32LE(0) !== 0x06064b50) throw new ZipRejectedError(`${path} is damaged: its zip64 end record is not where the locator says`);
        entries = Number(record.readBigUInt64LE(32));
        directorySize = Number(record.readBigUInt64LE(40));
        directoryOffset = Number(record.readBigUInt64LE(48));
      }
    }
    if (directoryOffset + directorySize > endOffset) {
      throw new ZipRejectedError(`${path} is truncated or damaged: its central directory (${directorySize} bytes at offset ${directoryOffset}) runs past the end of the data (${endOffset} bytes)`);
    }
    return { entries };
  } finally {
    await handle.close();
  }
}

function normaliseKey(path: string, backslashSeparates: boolean): string {
  return posix.normalize(backslashSeparates ? path.replace(/\\/g, '/') : path).replace(/\/+$/, '').replace(/^\.\//, '');
}
