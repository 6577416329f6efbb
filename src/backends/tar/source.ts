// A tar archive (plain, or gzip-compressed) as a source, read in place: never unpacked to disk.
// A tar has no central directory, so the archive is read once whole before anything is sent
// (prepare): every header checked by the guards every archive passes (a path out of the target, a
// device, a size no export has: one refuses the archive, exit 2, nothing created), every file's
// sha256 computed as its bytes go by (so that uploading it is its only other read), and what was
// found written to a list in a temporary file (not memory: a million entries). The run then takes
// its entries from that list; the content of the few it sends is read again (tar/content.ts).
// A rerun over an unchanged archive costs that one read and nothing else.
// Parsing is tar-stream's (ustar, PAX, GNU long names); the names and the guards are ferry's own.
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { createInterface } from 'node:readline';
import { once } from 'node:events';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import tar from 'tar-stream';
import { drain, type TarEntry, type TarHeader } from './header.js';
import { pathFilter, type PathPatterns } from '../../sync/patterns.js';
import type { Source, SourceEntry } from '../../sync/types.js';
import { ArchiveGuard, RejectedArchive, type ArchiveLimits } from '../archive-guards.js';
import { RepeatedPaths, repeatedReason } from '../archive-repeats.js';
import { decodeLegacyName, type ArchiveNameVerdict } from '../archive-encoding.js';
import { checkName, NOT_UTF8 } from '../names.js';
import { visible } from '../../text.js';
import { openContent, type TarContent } from './content.js';
import { scratchFolder } from '../../scratch.js';

/**
 * A compressed stream is judged on the whole (a tar.gz has no sizes per entry): past 16 MiB of
 * output, not before, so that a small archive of empty or repetitive files is never taken for a bomb.
 */
const STREAM_RATIO_FLOOR = 16 * 1024 * 1024;

export interface TarSourceOptions extends PathPatterns {
  /** --archive-encoding: the code page of names that are not UTF-8 (tar names carry none). */
  encoding?: string | undefined;
}

/** One entry as the check found it: a line of the list. */
interface Found {
  /** Its place among the archive's entries (what tar-stream emits: long-name and PAX headers are not entries). */
  i: number;
  key: string;
  kind: 'file' | 'dir' | 'problem' | 'link';
  size?: number;
  mtimeMs?: number;
  sha256?: string;
  /** Where its bytes start in the uncompressed archive. */
  at?: number;
  outcome?: 'failed' | 'skipped';
  reason?: string;
  /** A hard link: the path of the file it links to, met earlier in the archive. */
  linkTo?: string;
}

export class TarSource implements Source {
  readonly description: string;
  expectedCount: number | undefined;

  private readonly wanted: (key: string) => boolean;
  private list: string | undefined;
  private repeats: RepeatedPaths | undefined;
  private content: TarContent | undefined;
  /** Hard links, by their index: the file entry each is a copy of (or why it cannot be). */
  private links = new Map<number, Found>();

  constructor(
    private readonly path: string,
    private readonly gzip: boolean,
    private readonly limits: ArchiveLimits,
    private readonly options: TarSourceOptions = {},
  ) {
    this.description = path;
    this.wanted = pathFilter(options);
  }

  takes(key: string): boolean {
    return this.wanted(key);
  }

  async prepare(): Promise<void> {
    if (this.list) return;
    const folder = await scratchFolder('tar');
    const list = join(folder, 'entries.jsonl');
    try {
      const count = await this.check(list);
      const repeats = new RepeatedPaths();
      for await (const found of readList(list)) repeats.count(found.key);
      if (repeats.needsSecondPass) for await (const found of readList(list)) repeats.note(found.key, found.i);
      repeats.noted();
      this.repeats = repeats;
      if (this.linkCount > 0) this.links = await resolveLinks(list);
      this.expectedCount = count;
      this.list = list;
      this.content = openContent(this.path, this.gzip);
    } catch (err) {
      await rm(folder, { recursive: true, force: true });
      throw err;
    }
  }

  async *entries(signal?: AbortSignal): AsyncIterable<SourceEntry> {
    await this.prepare();
    const repeats = this.repeats as RepeatedPaths;
    const content = this.content as TarContent;
    for await (const found of readList(this.list as string)) {
      if (signal?.aborted) return;
      const { key, i } = found;
      // The archive's own top folder (`./`, as GNU tar writes it) is the destination itself.
      if (key === '' || !this.wanted(key)) continue;
      if (found.kind === 'problem') {
        yield { kind: 'problem', key, outcome: found.outcome ?? 'failed', reason: found.reason ?? '' };
        continue;
      }
      const last = repeats.lastIndex(key, i);
      if (found.kind === 'link') {
        // Carried as a copy of the file it links to, under its own path: as tar extracts it.
        const target = this.links.get(i);
        if (last !== i) {
          yield { kind: 'problem', key, outcome: 'skipped', reason: repeatedReason(i, last) };
        } else if (!target || target.kind !== 'file') {
          yield { kind: 'problem', key, outcome: 'failed', reason: `hard link to "${visible(found.linkTo ?? '')}", which the archive does not hold as a file before it: nothing to copy` };
        } else {
          yield this.fileEntry(key, target, content);
        }
        continue;
      }
      if (found.kind === 'dir') {
        if (last === i) yield { kind: 'dir', key };
        continue;
      }
      if (last !== i) {
        yield { kind: 'problem', key, outcome: 'skipped', reason: repeatedReason(i, last) };
        continue;
      }
      yield this.fileEntry(key, found, content);
    }
  }

  /** A file at `key` with the bytes of the entry `found` (itself, or the file a hard link copies). */
  private fileEntry(key: string, found: Found, content: TarContent): SourceEntry {
    const { i, size, at } = found as Required<Found>;
    return { kind: 'file', key, size, mtimeMs: found.mtimeMs as number, sha256: found.sha256, open: () => content.open(i, at, size) };
  }

  /** How often an entry's content had to be read from the start of a compressed archive again (tests; docs). */
  get rereads(): number {
    return this.content?.rereads ?? 0;
  }

  async close(): Promise<void> {
    this.content?.close();
    this.content = undefined;
    const list = this.list;
    this.list = undefined;
    if (list) await rm(join(list, '..'), { recursive: true, force: true });
  }

  private linkCount = 0;

  /** The one read of the whole archive: guards, names, sha256; the list written. Returns the entry count. */
  private async check(list: string): Promise<number> {
    const guard = new ArchiveGuard(this.path, this.limits);
    const out = createWriteStream(list);
    // The list's own failure (a full disk) is the run's error, said after the read, not an unhandled event.
    let listError: Error | undefined;
    out.on('error', (err) => (listError ??= err));
    const file = createReadStream(this.path);
    let compressed = 0;
    let expanded = 0;
    file.on('data', (chunk) => (compressed += chunk.length));
    const extract = tar.extract({ filenameEncoding: 'latin1', allowUnknownFormat: true } as never);
    const reading = pipeline(this.gzip ? [file, createGunzip(), extract] : [file, extract] as never);
    reading.catch(() => undefined); // its failure is met by the loop below
    let i = 0;
    try {
      for await (const item of extract) {
        const entry = item as unknown as TarEntry;
        const header = entry.header;
        const found = this.judge(header, i, guard);
        if (found.kind === 'file') {
          const hash = createHash('sha256');
          let got = 0;
          for await (const chunk of entry) {
            hash.update(chunk);
            got += chunk.length;
            expanded += chunk.length;
            // A compressed archive whose bytes expand past what any real export does (per byte read so far).
            if (this.gzip && expanded > STREAM_RATIO_FLOOR && expanded / Math.max(1, compressed) > this.limits.maxRatio) {
              guard.reject(`it expands ${Math.round(expanded / Math.max(1, compressed))}-fold (limit ${this.limits.maxRatio}), which looks like a gzip bomb`);
            }
          }
          if (got !== found.size) guard.reject(`entry "${visible(found.key)}" holds ${got} bytes where its header says ${found.size}`);
          found.sha256 = hash.digest('hex');
        } else {
          await drain(entry);
        }
        if (!out.write(`${JSON.stringify(found)}\n`)) await once(out, 'drain');
        i++;
      }
      await reading;
    } catch (err) {
      out.destroy();
      file.destroy();
      if (err instanceof RejectedArchive) throw err;
      throw new RejectedArchive(`${this.path} is truncated or damaged after ${i} entries (${damage(err)}): the archive was refused whole and nothing was uploaded`);
    }
    out.end();
    await once(out, 'close');
    if (listError) throw new RejectedArchive(`${this.path} could not be listed: writing ${list} failed (${listError.message}); nothing was uploaded`);
    return i;
  }

  /** One header: the guards, its name, what kind of entry it is. */
  private judge(header: TarHeader, i: number, guard: ArchiveGuard): Found {
    const name = this.nameOf(header);
    const text = name.ok ? name.name : name.key;
    guard.entry(text, header.size ?? 0);
    const key = normaliseKey(text);
    const type = header.type;
    if (type === 'character-device' || type === 'block-device' || type === 'fifo') {
      guard.reject(`entry "${visible(text)}" is a ${type.replace('-', ' ')}, which no export of documents holds`);
    }
    if (!name.ok) return { i, key, kind: 'problem', outcome: 'failed', reason: name.reason };
    if (type === 'directory') return { i, key, kind: 'dir' };
    if (type === 'symlink') return { i, key, kind: 'problem', outcome: 'skipped', reason: 'symbolic link entry (links are not uploaded)' };
    if (type === 'link') {
      this.linkCount++;
      return { i, key, kind: 'link', linkTo: normaliseKey(this.linkTarget(header)) };
    }
    if (type === 'file' || type === 'contiguous-file') {
      return { i, key, kind: 'file', size: header.size ?? 0, mtimeMs: header.mtime ? header.mtime.getTime() : 0, at: header.byteOffset ?? 0 };
    }
    return { i, key, kind: 'problem', outcome: 'failed', reason: `a tar entry of type ${type ?? 'unknown'}, which ferry does not carry` };
  }

  /** A hard link's target, read as names are (PAX linkpath, or the header's bytes). */
  private linkTarget(header: TarHeader): string {
    const pax = header.pax?.linkpath;
    if (pax !== undefined) return pax;
    const verdict = this.nameOf({ ...header, name: header.linkname ?? '', pax: null });
    return verdict.ok ? verdict.name : verdict.key;
  }

  /**
   * A PAX path is UTF-8 by the standard (tar-stream decodes it; a byte that was not UTF-8 comes back
   * as U+FFFD, refused: never a name made up); ustar and GNU names are bytes, read as ferry reads any
   * name, or in the code page --archive-encoding names (no default: a tar says nothing of it).
   */
  private nameOf(header: TarHeader): ArchiveNameVerdict {
    const pax = header.pax;
    if (pax?.path !== undefined) {
      if (pax.path.includes('\ufffd')) {
        const key = pax.path;
        return { ok: false, key, shown: visible(key), reason: 'the PAX path is not valid UTF-8 (the bytes that are not show as U+FFFD); the service takes UTF-8 names only: rename it' };
      }
      return checkName(Buffer.from(pax.path, 'utf8'));
    }
    const raw = Buffer.from(header.name, 'latin1');
    const verdict = checkName(raw);
    if (verdict.ok || verdict.reason !== NOT_UTF8) return verdict;
    return decodeLegacyName(raw, this.options.encoding, false, verdict);
  }
}

/**
 * Each hard link's target as the archive held it when the link was met (the last entry with that
 * path before it): one more read of the list, only for an archive with links, keeping only those.
 */
async function resolveLinks(list: string): Promise<Map<number, Found>> {
  const wanted = new Set<string>();
  for await (const found of readList(list)) if (found.kind === 'link' && found.linkTo !== undefined) wanted.add(found.linkTo);
  const latest = new Map<string, Found>();
  const links = new Map<number, Found>();
  for await (const found of readList(list)) {
    if (found.kind === 'link') {
      const target = latest.get(found.linkTo ?? '');
      if (target) links.set(found.i, target);
    }
    if (wanted.has(found.key)) latest.set(found.key, found.kind === 'link' ? (links.get(found.i) ?? found) : found);
  }
  return links;
}

async function* readList(list: string): AsyncIterable<Found> {
  const lines = createInterface({ input: createReadStream(list), crlfDelay: Infinity });
  for await (const line of lines) if (line) yield JSON.parse(line) as Found;
}

function damage(err: unknown): string {
  const message = (err as Error).message ?? String(err);
  if (/unexpected end|Unexpected end/i.test(message)) return 'it ends in the middle of an entry: was the download or copy cut short?';
  return message;
}

function normaliseKey(path: string): string {
  return posix.normalize(path).replace(/\/+$/, '').replace(/^(\.\/)+/, '').replace(/^\.$/, '');
}
