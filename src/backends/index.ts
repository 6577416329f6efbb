import { mappedSource } from '../sync/mapped-source.js';
import type { PathPatterns } from '../sync/patterns.js';
import { open, stat } from 'node:fs/promises';
import { gunzipSync } from 'node:zlib';
import { FolderSource, type FolderSourceOptions } from './folder/source.js';
import { withPulledNames } from './folder/pulled-names.js';
import type { ArchiveLimits } from './archive-guards.js';
import { SourceError, type Source } from '../sync/types.js';

export type * from '../sync/types.js';
export { SourceError } from '../sync/types.js';

export interface SourceOptions extends FolderSourceOptions {
  /** --max-entries and the other archive guards. */
  archiveLimits?: Partial<ArchiveLimits> | undefined;
  /** --archive-encoding: the code page of archive entry names that do not say. */
  archiveEncoding?: string | undefined;
  /** --strip-components: leading folders taken off each archive entry's path, as tar's option does. */
  stripComponents?: number | undefined;
}

/** What a file holds, by its first bytes (the name is only a hint: a download may be called anything). */
export type ArchiveKind = 'zip' | 'tar' | 'tar.gz';

/**
 * A folder, or a file read in place as an archive: a zip, a tar or a gzip-compressed tar, told
 * apart by content. What it holds is checked before anything is sent (prepare).
 */
export async function openSource(path: string, opts: SourceOptions = {}): Promise<Source> {
  // A code page ferry does not know is said before anything is read (exit 2, naming those it takes).
  const encoding = opts.archiveEncoding !== undefined ? (await import('./archive-encoding.js')).archiveEncoding(opts.archiveEncoding) : undefined;
  const found = await stat(path).catch((err: NodeJS.ErrnoException) => err);
  // A missing archive is a missing file, not a folder (the folder source would say "folder").
  if (found instanceof Error && ARCHIVE_NAME.test(path)) throw new SourceError(`source file ${path} cannot be read: ${found.code ?? found.message}`);
  const isFile = !(found instanceof Error) && found.isFile();
  const kind = isFile ? await archiveKind(path) : undefined;
  // The archive readers (yauzl, tar-stream, iconv-lite) load only for an archive: a folder's start-up does not pay for them.
  // A folder ferry pulled gives its documents' names back (its record of names, folder/pulled-names.ts).
  const strip = opts.stripComponents ?? 0;
  if (strip > 0 && !kind) throw new SourceError(`--strip-components ${strip} is for a zip or a tar: ${path} is a folder, whose paths are its own (mirror the folder inside it instead)`);
  if (strip > 0 && (opts.include?.length || opts.exclude?.length || opts.rules?.length)) throw new SourceError(`--strip-components is not taken with --include, --exclude or --filter-from: their patterns would not know which path, stripped or not, they match`);
  const read = kind ? await openArchive(path, kind, { ...opts, archiveEncoding: encoding }) : await withPulledNames(new FolderSource(path, opts), path, opts);
  const source = strip > 0 ? stripped(read, strip) : read;
  await source.prepare();
  if (!kind && encoding) {
    const said = `--archive-encoding ${encoding} does nothing for a folder: its names are read as the file system gives them (it is for zips and tars)`;
    const before = source.notes?.bind(source);
    return Object.assign(source, { notes: () => [...(before?.() ?? []), said] });
  }
  return source;
}

async function openArchive(path: string, kind: ArchiveKind, opts: SourceOptions): Promise<Source> {
  const patterns: PathPatterns = { include: opts.include, exclude: opts.exclude, rules: opts.rules };
  if (kind === 'zip') {
    const { ZipSource, DEFAULT_ZIP_LIMITS } = await import('./zip/source.js');
    return new ZipSource(path, { ...DEFAULT_ZIP_LIMITS, ...opts.archiveLimits }, { ...patterns, encoding: opts.archiveEncoding });
  }
  const { TarSource } = await import('./tar/source.js');
  const { DEFAULT_ARCHIVE_LIMITS } = await import('./archive-guards.js');
  return new TarSource(path, kind === 'tar.gz', { ...DEFAULT_ARCHIVE_LIMITS, ...opts.archiveLimits }, { ...patterns, encoding: opts.archiveEncoding });
}

/** Names that say "an archive": said as files when they are missing. */
const ARCHIVE_NAME = /\.(zip|tar|tgz|tar\.gz)$/i;

/** Compressions a tarball comes in that ferry does not read, by magic number. */
const UNREAD = [
  { magic: [0x42, 0x5a, 0x68], name: 'bzip2' },
  { magic: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00], name: 'xz' },
  { magic: [0x28, 0xb5, 0x2f, 0xfd], name: 'zstd' },
  { magic: [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c], name: '7z' },
  { magic: [0x52, 0x61, 0x72, 0x21], name: 'rar' },
];

/**
 * Zip by its local header or end record (an empty zip is an end record alone), a tar by the
 * `ustar` magic or a valid header checksum (pre-POSIX tars), gzip by its two magic bytes and then
 * the tar inside. A self-extracting zip (a program with the archive after it) is read as a zip
 * when its name says so. Anything else is refused naming what it is not.
 */
export async function archiveKind(path: string): Promise<ArchiveKind> {
  const handle = await open(path, 'r').catch((err: NodeJS.ErrnoException) => {
    throw new SourceError(`${path} cannot be read: ${err.code ?? err.message}`);
  });
  try {
    const head = Buffer.alloc(64 * 1024);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    const bytes = head.subarray(0, bytesRead);
    if (bytes.length >= 4 && bytes[0] === 0x50 && bytes[1] === 0x4b && [0x0304, 0x0506, 0x0708].includes(bytes.readUInt16BE(2))) return 'zip';
    if (looksLikeTar(bytes)) return 'tar';
    if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
      if (looksLikeTar(gunzipHead(bytes))) return 'tar.gz';
      throw new SourceError(`${path} is gzip-compressed, but what it holds is not a tar archive: ferry reads folders, zips, and tars (plain or gzip-compressed); nothing was read`);
    }
    for (const { magic, name } of UNREAD) {
      if (magic.every((b, i) => bytes[i] === b)) throw new SourceError(`${path} is ${name}-compressed, which ferry does not read: decompress it (or make a .tar.gz or .zip) and mirror that; nothing was read`);
    }
    if (/\.zip$/i.test(path)) return 'zip'; // the zip reader says what is wrong with it (truncated, a program in front)
    if (/\.(tar|tgz|tar\.gz)$/i.test(path)) throw new SourceError(`${path} is not a tar archive (its first block is not a tar header: damaged, or another format named .tar); nothing was read`);
    throw new SourceError(`${path} is a file, but neither a zip nor a tar archive: ferry mirrors folders, zips and tars (plain or gzip-compressed); for one file, mirror its folder with --include '${posixName(path)}' (as rclone copies one file with --include)`);
  } finally {
    await handle.close();
  }
}

/** The first bytes a gzip stream gives, as far as the bytes at hand go (a truncated stream gives what it has). */
function gunzipHead(bytes: Buffer): Buffer {
  try {
    return gunzipSync(bytes, { finishFlush: 2 /* Z_SYNC_FLUSH: a cut stream is no error here */ });
  } catch {
    return Buffer.alloc(0);
  }
}

/** A 512-byte tar header: `ustar` at 257, or the header's checksum right (old v7 tars have no magic). */
export function looksLikeTar(bytes: Buffer): boolean {
  if (bytes.length < 512) return false;
  if (bytes.subarray(257, 262).toString('latin1') === 'ustar') return true;
  const stored = parseInt(bytes.subarray(148, 156).toString('latin1').replace(/\0.*$/, '').trim(), 8);
  if (!Number.isFinite(stored)) return false;
  let sum = 0;
  for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 32 : (bytes[i] as number);
  return sum === stored && bytes[0] !== 0;
}

/** Runs `work`, then closes the source whatever happened (an archive's file and temporary list, a manifest's rows). */
export async function closing<T>(source: Source, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } finally {
    await source.close();
  }
}

/** A file's own name as an --include pattern takes it (its glob characters escaped), quoted for a shell. */
function posixName(path: string): string {
  return (path.split(/[\\/]/).pop() ?? path).replace(/[*?[\]{}!]/g, (c) => `\\${c}`).replace(/'/g, `'\\''`);
}

/**
 * The archive's entries with their first `n` folders taken off (`archive-2019/a/b.pdf` -> `a/b.pdf`
 * for 1), as tar's --strip-components: a folder an archive tool wrapped everything in is not carried.
 * A file sitting above those folders is left out, said; the folders themselves are not carried.
 */
function stripped(inner: Source, n: number): Source {
  const cut = (key: string) => key.split('/').slice(n).join('/');
  const depth = (key: string) => key.split('/').length;
  return mappedSource(inner, (entry) => {
    if (entry.kind === 'dir') return depth(entry.key) > n ? { ...entry, key: cut(entry.key) } : { kind: 'problem', key: entry.key, outcome: 'skipped', reason: `a folder --strip-components ${n} takes off` };
    if (depth(entry.key) <= n) return entry.kind === 'problem' ? entry : { kind: 'problem', key: entry.key, outcome: 'skipped', reason: `sits above the folders --strip-components ${n} takes off: not carried` };
    return { ...entry, key: cut(entry.key) };
  });
}
