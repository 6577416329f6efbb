// A local folder as a destination (`ferry pull`). Each entry is written under a temporary name in
// its folder, given the source's time, and renamed into place: no half-written file ever sits
// under its final name, and a file with the entry's size and time is one that landed. A file in
// the way that ferry did not write is never overwritten: the entry fails as a conflict. Names the
// file system cannot hold are mapped by one rule (docs/cli.md, "ferry pull"), and reported.
import { createHash, randomBytes } from 'node:crypto';
import { close as closeFd, closeSync, futimes as futimesFd, futimesSync, open as openFd, openSync, renameSync, rmSync, write as writeFd, writeSync } from 'node:fs';
import { lstat, mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { dirname, isAbsolute, join, posix, relative, sep } from 'node:path';
import { ConfigurationError, FerryError } from '../../api/errors.js';
import type { FileEntry } from '../../sync/types.js';
import { visible } from '../names.js';
import { hash53, NumberByKey } from '../../hashed-keys.js';
import type { CheckpointStore, ItemRecord } from '../../store/types.js';
import type { Slot } from '../../slots.js';
import type { Destination, Placement, WriteContext } from '../../sync/engine.js';

/** Files up to this size are written with synchronous calls once their bytes are in (writeSmall). */
const SYNC_WRITE_MAX = 64 * 1024;

const openAsync = promisify(openFd);
const closeAsync = promisify(closeFd);
const futimesAsync = promisify(futimesFd);
const writeAsync = (fd: number, chunk: Buffer, offset: number, length: number): Promise<number> =>
  new Promise((resolve, reject) => writeFd(fd, chunk, offset, length, null, (err, n) => (err ? reject(err) : resolve(n))));

/** A local file is in the way and ferry did not write it: kept, and the entry fails. */
export class LocalConflictError extends FerryError {}

export interface LocalPlacement extends Placement {
  /** The path under the root, after the name rule. */
  local: string;
  /** Why the entry cannot be written, when something is in the way. */
  conflict?: string;
  /** The file is already there, as this entry would write it (an earlier run's write). */
  landed?: boolean;
}

export interface LocalFolderOptions {
  root: string;
  store: CheckpointStore;
  jobKey: string;
  /** Case-insensitive file system (default: probed in the root). */
  caseInsensitive?: boolean | undefined;
  /** Plan only: nothing is created or removed. */
  dryRun?: boolean | undefined;
}

/**
 * Temporary files are `.ferry-<nonce>-<tag>.partial`, the tag a hash of the job's key and the
 * nonce: a killed run's leftovers are recognised as this job's own (in a fresh container too), and
 * a user's file, or a pulled document, that merely looks like one is never deleted.
 */
const PARTIAL = /^\.ferry-([0-9a-f]{8})-([0-9a-f]{8})\.partial$/;

function partialTag(jobKey: string, nonce: string): string {
  return createHash('sha256').update(`${jobKey}\0${nonce}`).digest('hex').slice(0, 8);
}

function partialName(jobKey: string): string {
  const nonce = randomBytes(4).toString('hex');
  return `.ferry-${nonce}-${partialTag(jobKey, nonce)}.partial`;
}

const MAX_NAME_BYTES = 255;
const LISTED = 1_000;

export class LocalFolderDestination implements Destination<LocalPlacement> {
  readonly description: string;
  /** A file renamed into place with the entry's size and time is recognised without an intent. */
  readonly needsIntent = false;
  /** Nothing here is answered from another entry's write: no set of claimed ids is kept for it. */
  readonly asksClaimed = false;
  /**
   * Folders made ready (created, or cleared of a killed run's temporary files), each once;
   * true for a folder this run created: nothing can be in the way there.
   */
  private readonly ready = new Map<string, Promise<boolean>>();
  private caseInsensitive = false;
  /**
   * Mapped paths taken in this run (folded when the file system ignores case) -> the source key
   * holding it, as hashes (slot 0: the key; slot 1, only where case is ignored: the key in lower
   * case), where the two strings were about 200 bytes a file (a pull of 100,000 documents: 290
   * MiB). Made once the case rule is known: 16 bytes a slot where case counts, 24 where not.
   */
  private taken = new NumberByKey(1);
  private readonly renamed: { key: string; local: string; why: string }[] = [];
  private renamedCount = 0;
  /** Folders that could not be made without going through a link or over a file. */
  private readonly foldersRefused: { key: string; why: string }[] = [];

  constructor(private readonly o: LocalFolderOptions) {
    this.description = o.root;
  }

  /** Once per run, however often asked (the job checks the folder before it takes the lock). */
  prepare(): Promise<void> {
    this.prepared ??= this.makeRoot();
    return this.prepared;
  }

  private prepared: Promise<void> | undefined;

  private async makeRoot(): Promise<void> {
    if (this.o.dryRun) return;
    try {
      await mkdir(this.o.root, { recursive: true });
    } catch (err) {
      // Nothing was attempted: the destination itself is not a folder ferry can use (exit 2).
      const code = (err as NodeJS.ErrnoException).code;
      const why = code === 'EEXIST' || code === 'ENOTDIR' ? 'it (or a folder above it) is a file, not a folder' : `it cannot be made (${code ?? (err as Error).message})`;
      throw new ConfigurationError(`cannot pull into ${this.o.root}: ${why}`);
    }
    this.caseInsensitive = this.o.caseInsensitive ?? (await probeCaseInsensitive(this.o.root));
    if (this.caseInsensitive) this.taken = new NumberByKey(2);
  }

  expect(count: number): void {
    this.taken.reserve(count);
  }

  async settle(inFlight: ItemRecord[]): Promise<Map<string, { remoteId: string }>> {
    const landed = new Map<string, { remoteId: string }>();
    const cleaned = new Set<string>();
    for (const item of inFlight) {
      const local = this.map(item.sourceKey).local;
      const final = join(this.o.root, local);
      // Temporary files a killed run left in this folder go first.
      const dir = dirname(final);
      if (!cleaned.has(dir)) {
        cleaned.add(dir);
        // Never through a link: a folder reached by one is somebody else's.
        if (await plainFolderInside(this.o.root, dir)) await removePartials(dir, this.o.jobKey);
      }
      const st = await lstat(final).catch(() => undefined);
      if (st?.isFile() && st.size === item.size && sameTime(st.mtimeMs, item.mtimeMs)) landed.set(item.sourceKey, { remoteId: written(local, item.size, item.mtimeMs) });
    }
    return landed;
  }

  async ensureFolder(key: string): Promise<void> {
    if (this.o.dryRun) return;
    try {
      await makeFolderInside(this.o.root, join(this.o.root, this.map(key, true).local));
    } catch (err) {
      // Not the end of the pull: the folder is reported, and each document for it fails with the reason.
      if (!(err instanceof LocalConflictError)) throw err;
      if (this.foldersRefused.length < LISTED) this.foldersRefused.push({ key, why: err.message });
    }
  }

  async place(entry: Pick<FileEntry, 'key' | 'size' | 'mtimeMs'>): Promise<LocalPlacement> {
    const key = entry.key;
    const { local, why } = this.map(key);
    if (why) this.noteRename(key, local, why);
    const placement: LocalPlacement = { parentId: null, local };
    // In a folder this run created, nothing is in the way: no look needed.
    if (await this.readyFolder(dirname(join(this.o.root, local)))) return placement;
    const st = await lstat(join(this.o.root, local)).catch(() => undefined);
    if (st?.isFile() && st.size === entry.size && sameTime(st.mtimeMs, entry.mtimeMs)) {
      // What this entry would write is there: a run stopped after the rename wrote it.
      placement.landed = true;
    } else if (st) {
      const ours = parseWritten(this.o.store.fingerprint(this.o.jobKey, key)?.remoteId);
      const isOurs = st.isFile() && ours?.local === local && ours.size === st.size && sameTime(st.mtimeMs, ours.mtimeMs);
      if (!isOurs) {
        placement.conflict = st.isFile()
          ? `a local file ferry did not write (or that changed since) is in the way (${st.size} bytes, modified ${new Date(st.mtimeMs).toISOString()}; the document: ${entry.size} bytes of ${new Date(entry.mtimeMs).toISOString()}); it was kept`
          : 'a local folder or other entry is in the way; it was kept';
      }
    }
    return placement;
  }

  async write(entry: FileEntry, placement: LocalPlacement, ctx?: Pick<WriteContext, 'slot' | 'cancel'>): Promise<{ remoteId: string; found?: boolean }> {
    if (placement.conflict) throw new LocalConflictError(`conflict: ${placement.conflict}`);
    if (placement.landed) return { remoteId: written(placement.local, entry.size, entry.mtimeMs), found: true };
    const final = join(this.o.root, placement.local);
    const dir = dirname(final);
    await this.readyFolder(dir);
    const temp = join(dir, partialName(this.o.jobKey));
    if (entry.size <= SYNC_WRITE_MAX) return this.writeSmall(entry, placement.local, temp, final, ctx?.slot);
    let fd: number | undefined;
    try {
      const body = entry.openAsync ? await entry.openAsync(ctx?.slot) : entry.open();
      // One descriptor for the bytes and the time (no second lookup of the path), closed here. A
      // plain descriptor, not a FileHandle: measured on 10,000 files of 4 KiB, the handle's
      // bookkeeping made the same five system calls 25 % slower.
      fd = await openAsync(temp, 'wx');
      let bytes = 0;
      try {
        for await (const chunk of body as AsyncIterable<Buffer>) {
          // Cut off (a limit under --cutoff-mode hard): the partial file goes, the next run fetches it whole.
          ctx?.cancel?.throwIfAborted();
          let done = 0;
          while (done < chunk.length) done += await writeAsync(fd, chunk, done, chunk.length - done);
          bytes += chunk.length;
        }
      } finally {
        body.destroy();
      }
      if (bytes !== entry.size) throw new FerryError(`the content of ${entry.key} was ${bytes} bytes, not the ${entry.size} its source said`);
      // The time first, the name last: a file under its final name is whole and dated.
      const time = new Date(entry.mtimeMs);
      await futimesAsync(fd, time, time);
      const closing = fd;
      fd = undefined;
      await closeAsync(closing);
      await rename(temp, final);
      return { remoteId: written(placement.local, entry.size, entry.mtimeMs) };
    } catch (err) {
      if (fd !== undefined) await closeAsync(fd).catch(() => undefined);
      await rm(temp, { force: true });
      throw err;
    }
  }

  /**
   * A small file: its bytes are read from the network first (at most SYNC_WRITE_MAX of them, so
   * memory stays bounded), then written, dated and renamed with synchronous calls, the same steps
   * as a large file's. Measured on 10,000 files of 4 KiB: five thread-pool round trips per file
   * made the pull 0.89 of a bare download loop; these five calls on the main thread, 1.19.
   */
  private async writeSmall(entry: FileEntry, local: string, temp: string, final: string, slot: Slot | undefined): Promise<{ remoteId: string }> {
    const body = entry.openAsync ? await entry.openAsync(slot) : entry.open();
    const chunks: Buffer[] = [];
    let bytes = 0;
    try {
      for await (const chunk of body as AsyncIterable<Buffer>) {
        bytes += chunk.length;
        if (bytes > entry.size) break;
        chunks.push(chunk);
      }
    } finally {
      body.destroy();
    }
    if (bytes !== entry.size) {
      const was = bytes > entry.size ? `more than ${entry.size}` : String(bytes);
      throw new FerryError(`the content of ${entry.key} was ${was} bytes, not the ${entry.size} its source said`);
    }
    let fd: number | undefined;
    try {
      fd = openSync(temp, 'wx');
      const content = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      for (let done = 0; done < content.length; ) done += writeSync(fd, content, done, content.length - done);
      // The time first, the name last: a file under its final name is whole and dated.
      const time = new Date(entry.mtimeMs);
      futimesSync(fd, time, time);
      const closing = fd;
      fd = undefined;
      closeSync(closing);
      renameSync(temp, final);
      return { remoteId: written(local, entry.size, entry.mtimeMs) };
    } catch (err) {
      if (fd !== undefined) closeSync(fd);
      rmSync(temp, { force: true });
      throw err;
    }
  }

  /** Creates the folder, or clears it of a killed run's temporary files; true when it is new. */
  private readyFolder(dir: string): Promise<boolean> {
    if (this.o.dryRun) return Promise.resolve(false);
    let ready = this.ready.get(dir);
    if (!ready) {
      ready = makeFolderInside(this.o.root, dir).then(async (created) => {
        if (created) return true;
        await removePartials(dir, this.o.jobKey);
        return false;
      });
      this.ready.set(dir, ready);
    }
    return ready;
  }

  report(): Record<string, unknown> {
    return { renamed: this.renamed, renamedCount: this.renamedCount, caseInsensitive: this.caseInsensitive, ...(this.foldersRefused.length ? { foldersRefused: this.foldersRefused } : {}) };
  }

  private noteRename(key: string, local: string, why: string): void {
    if (this.renamed.some((r) => r.key === key)) return;
    this.renamedCount++;
    if (this.renamed.length < LISTED) this.renamed.push({ key, local, why });
  }

  /** The name rule, segment by segment; then a case collision is told apart by a hash. */
  private map(key: string, isFolder = false): { local: string; why?: string } {
    const reasons = new Set<string>();
    const segments = key.split('/').map((segment) => {
      const { name, why } = mapSegment(segment);
      if (why) reasons.add(why);
      return name;
    });
    let local = segments.join('/');
    // Two documents never share a local path: `.` mapped to `%2E` beside a document named `%2E`,
    // or names that differ only by case where the file system ignores it. The first listed keeps
    // the path; the other gets a hash of its full key before its extension, and is reported.
    const slot = this.caseInsensitive ? local.normalize('NFC').toLocaleLowerCase('en-US') : local;
    const owner = this.taken.get(slot);
    const mine = hash53(key);
    if (owner !== undefined && owner !== mine && !isFolder) {
      const byCase = this.caseInsensitive && this.taken.get(slot, 1) === hash53(key.toLocaleLowerCase('en-US'));
      const contested = local;
      local = posix.join(posix.dirname(local), shorten(posix.basename(local), hash(key)));
      reasons.add(byCase ? 'another name differs from it only by case, which this file system does not tell apart' : `another document maps to the same local path ("${visible(contested)}")`);
      this.take(this.caseInsensitive ? local.normalize('NFC').toLocaleLowerCase('en-US') : local, key, mine);
    } else if (owner === undefined) this.take(slot, key, mine);
    return reasons.size ? { local, why: [...reasons].join('; ') } : { local };
  }

  private take(slot: string, key: string, keyHash: number): void {
    this.taken.set(slot, keyHash);
    if (this.caseInsensitive) this.taken.set(slot, hash53(key.toLocaleLowerCase('en-US')), 1);
  }
}

/** One path segment the local file system can hold (the rule of docs/cli.md). */
export function mapSegment(segment: string): { name: string; why?: string } {
  if (segment === '.' || segment === '..') return { name: segment.replace(/\./g, '%2E'), why: `"${segment}" is not a name a file can have` };
  let name = segment.replace(/[\u0000-\u001f\u007f]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
  let why = name !== segment ? 'control characters written as %XX' : undefined;
  if (Buffer.byteLength(name) > MAX_NAME_BYTES) {
    name = shorten(name, hash(segment));
    why = `${why ? `${why}; ` : ''}longer than ${MAX_NAME_BYTES} bytes, shortened with a hash of the full name`;
  }
  return why ? { name, why } : { name };
}

/** `~hash` before the extension (kept when short), the stem cut so that the name fits 255 bytes. */
function shorten(name: string, tag: string): string {
  const dot = name.lastIndexOf('.');
  const ext = dot > 0 && Buffer.byteLength(name.slice(dot)) <= 16 ? name.slice(dot) : '';
  let stem = ext ? name.slice(0, dot) : name;
  const room = MAX_NAME_BYTES - Buffer.byteLength(`~${tag}${ext}`);
  while (Buffer.byteLength(stem) > room) stem = [...stem].slice(0, -1).join('');
  return `${stem}~${tag}${ext}`;
}

/** File times go through seconds as a float (utimes): a millisecond time may come back a hair off. */
function sameTime(statMs: number, wantedMs: number): boolean {
  return Math.abs(statMs - wantedMs) < 1;
}

function hash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 8);
}

/** What ferry wrote at a path, as the checkpoint records it (the item's remote id). */
function written(local: string, size: number, mtimeMs: number): string {
  return JSON.stringify({ local, size, mtimeMs });
}

function parseWritten(remoteId: string | null | undefined): { local: string; size: number; mtimeMs: number } | undefined {
  if (!remoteId?.startsWith('{')) return undefined;
  try {
    return JSON.parse(remoteId) as { local: string; size: number; mtimeMs: number };
  } catch {
    return undefined;
  }
}

/**
 * Makes `dir` exist below `root` without ever going through a symbolic link: each component under
 * the root is looked at (lstat) and made when missing, one at a time. A link or a file in the way
 * refuses the folder (every document for it is a failed item with this reason): a pull writes only
 * beneath its destination. The root itself is the user's to choose, link or not. True when the
 * last component was made by this call.
 */
async function makeFolderInside(root: string, dir: string): Promise<boolean> {
  const rel = relative(root, dir);
  if (rel === '') return false;
  if (rel.startsWith('..') || isAbsolute(rel)) throw new LocalConflictError(`refused: ${dir} is not inside ${root}`);
  let path = root;
  let created = false;
  for (const part of rel.split(sep)) {
    path = join(path, part);
    const st = await lstat(path).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined;
      throw err;
    });
    if (!st) {
      await mkdir(path).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'EEXIST') throw err;
      });
      created = true;
      // Made by another writer at the same moment: look again, it must be a folder.
      const again = await lstat(path);
      if (!again.isDirectory() || again.isSymbolicLink()) throw new LocalConflictError(`refused: ${relative(root, path)} became something other than a folder while it was made`);
      continue;
    }
    created = false;
    if (st.isSymbolicLink()) throw new LocalConflictError(`refused: a symbolic link is in the way at ${relative(root, path)}; ferry never writes through a link (remove it, or pull elsewhere)`);
    if (!st.isDirectory()) throw new LocalConflictError(`refused: a local file is in the way at ${relative(root, path)} where a folder must be; it was kept`);
  }
  return created;
}

/** Whether `dir` is a folder below `root` reached without any symbolic link (nothing is made). */
async function plainFolderInside(root: string, dir: string): Promise<boolean> {
  const rel = relative(root, dir);
  if (rel.startsWith('..') || isAbsolute(rel)) return false;
  let path = root;
  for (const part of rel === '' ? [] : rel.split(sep)) {
    path = join(path, part);
    const st = await lstat(path).catch(() => undefined);
    if (!st || st.isSymbolicLink() || !st.isDirectory()) return false;
  }
  return true;
}

async function removePartials(dir: string, jobKey: string): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    const m = PARTIAL.exec(name);
    if (m && partialTag(jobKey, m[1] as string) === m[2]) await rm(join(dir, name), { force: true });
  }
}

/** Writes a lower-case probe and looks for it by its upper-case name. */
async function probeCaseInsensitive(root: string): Promise<boolean> {
  const name = `.ferry-case-${randomBytes(4).toString('hex')}`;
  const probe = join(root, name);
  await writeFile(probe, '');
  try {
    return (await stat(join(root, name.toUpperCase())).catch(() => undefined)) !== undefined;
  } finally {
    await rm(probe, { force: true });
  }
}
