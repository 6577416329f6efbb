// A local folder as a source. fast-glob walks the folders (and keeps out of those the patterns
// rule out); each folder's files are read here through the readdir it is given, a batch at a time
// (fs.opendir) and only while the consumer keeps up, since fast-glob's stream has no backpressure
// and reads a folder whole: memory stays flat on a tree of millions of files and on one folder of
// hundreds of thousands. Unreadable folders become problem entries instead of ending the walk;
// suspect names are read again as bytes and judged by the rule of names.ts.
import type fg from 'fast-glob';
import { fastGlob } from '../../libraries.js';
import * as fs from 'node:fs';
import { realpath } from 'node:fs/promises';
import { relative, resolve, sep } from 'node:path';
import { pathFilter, type PathPatterns } from '../../sync/patterns.js';
import { BoundedBuffer } from '../bounded-buffer.js';
import { checkName } from '../names.js';
import { SourceError, type Source, type SourceEntry } from '../../sync/types.js';

/** The reason an entry gone between its folder's listing and its lstat is skipped with (a scan counts these as vanished). */
export const REMOVED_WHILE_READ = 'removed while its folder was read';

export interface FolderSourceOptions extends PathPatterns {
  /** Upload symlinked files found inside the folder under the link's name (never outside it). */
  followSymlinks?: boolean;
  /** Entries waiting for the consumer before the walk pauses (default 2,000). */
  highWater?: number;
  /**
   * Take names holding control characters (a comparison: `check` of a pulled folder, whose names
   * need only be compared). Left out, they are refused as an upload would refuse them.
   */
  carryControl?: boolean;
}

type Readdir = typeof fs.readdir;

/**
 * What a name read as text shows when its bytes may break the rule (lossy decoding, a control), or
 * when fast-glob would not see it (below).
 */
const SUSPECT = /[\ufffd\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/**
 * fast-glob's matcher (picomatch, whose `.` is a regular expression's) never matches a name holding
 * a line or paragraph separator: such entries are taken out of its listing and walked here.
 */
const UNGLOBBABLE = /[\u2028\u2029]/;

export class FolderSource implements Source {
  readonly description: string;
  private readonly root: string;
  private readonly wanted: (key: string) => boolean;

  constructor(root: string, private readonly opts: FolderSourceOptions = {}) {
    this.root = resolve(root);
    this.description = this.root;
    this.wanted = pathFilter(opts);
  }

  async prepare(): Promise<void> {
    let stats: fs.Stats;
    try {
      stats = await fs.promises.stat(this.root);
    } catch (err) {
      throw new SourceError(`source folder ${this.root} cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    if (!stats.isDirectory()) throw new SourceError(`source ${this.root} is not a folder, a zip or a tar`);
  }

  entries(signal?: AbortSignal): AsyncIterable<SourceEntry> {
    return this.walk(signal);
  }

  takes(key: string): boolean {
    return this.wanted(key);
  }

  batches(signal?: AbortSignal): AsyncIterable<SourceEntry[]> {
    return this.walk(signal).batches();
  }

  private walk(signal?: AbortSignal): BoundedBuffer<SourceEntry> {
    const buffer = new BoundedBuffer<SourceEntry>(this.opts.highWater ?? 2_000);
    const root = this.root;
    const realRoot = fs.realpathSync(root);
    const pending: Promise<void>[] = [];
    const wanted = this.wanted;
    const follow = this.opts.followSymlinks === true;
    // fast-glob is handed the subfolders only: by itself it read a folder whole and lstat'd every
    // name in it at once (one folder of 200,000 files held 703-887 MiB).
    let handedOn: Promise<void> = Promise.resolve();
    const readFolder = ((path: fs.PathLike, optionsOrCallback: unknown, maybeCallback?: unknown) => {
      type Callback = (err: NodeJS.ErrnoException | null, files: (string | fs.Dirent)[]) => void;
      const callback = (typeof optionsOrCallback === 'function' ? optionsOrCallback : maybeCallback) as Callback;
      const withTypes = (optionsOrCallback as { withFileTypes?: boolean } | undefined)?.withFileTypes === true;
      const folder = String(path);
      // fast-glob reads several folders at once; each folder's files are handed on only once those
      // of the folders asked for before it are, so that a folder's files reach the engine together
      // (as its per-folder digests want them). Meanwhile it reads and looks at its first batch; a
      // folder without files gives fast-glob its subfolders at once.
      const turn = handedOn;
      const read = filesOf(folder, turn);
      handedOn = Promise.all([turn, read.catch(() => undefined)]).then(() => undefined);
      read.then(
        (folders) => callback(null, withTypes ? folders : folders.map((d) => d.name)),
        (err: NodeJS.ErrnoException) => {
          // The walk goes on; the folder is reported as a failed item with the reason.
          if (folder === root) return callback(err, []);
          buffer.push({ kind: 'problem', key: toKey(root, folder), outcome: 'failed', reason: `cannot read folder: ${err.code ?? err.message}` });
          return callback(null, []);
        },
      );
    }) as unknown as Readdir;

    /** A folder's own files, a batch at a time; resolves to its subfolders, for fast-glob. */
    const filesOf = async (folder: string, turn: Promise<void>): Promise<fs.Dirent[]> => {
      const parentKey = toKey(root, folder);
      const keyOf = (name: string) => (parentKey ? `${parentKey}/${name}` : name);
      const folders: fs.Dirent[] = [];
      let batch: { key: string; path: string }[] = [];
      const take = async (): Promise<boolean> => {
        if (batch.length === 0) return !signal?.aborted;
        const entries = await lookAt(batch, follow, root, realRoot);
        batch = [];
        await turn;
        await buffer.open();
        if (signal?.aborted) return false;
        for (const e of entries) buffer.push(e);
        return true;
      };
      const file = (name: string) => {
        const key = keyOf(name);
        if (wanted(key)) batch.push({ key, path: `${folder}${sep}${name}` });
      };
      /** One more file; once the batch is full, handed on (resolves false: the walk is stopping). */
      const feed = (name: string): true | Promise<boolean> => {
        file(name);
        return batch.length < BATCH ? true : take();
      };
      const fed = async (names: string[]): Promise<boolean> => {
        for (const name of names) {
          const more = feed(name);
          if (more !== true && !(await more)) return false;
        }
        return true;
      };
      // A name that is not valid UTF-8 (or holds a control character) must be seen as it is,
      // refused by the name rule and reported, instead of being decoded lossily and failing its
      // lstat. Names are read as text (no Buffer per name); one that could be such a name (a
      // U+FFFD from lossy decoding, a control character) is passed over and, once the folder is
      // read, the folder is read again as bytes for those names alone.
      let suspect = false;
      // A folder of up to SORTED_MAX files is walked in name order, as a whole-folder read gives
      // it (dry runs, reports and progress list it so, the same on every machine); a larger one
      // goes in the file system's order, since sorting it would hold it whole.
      let window: string[] | undefined = [];
      for await (const dirent of await fs.promises.opendir(folder, { bufferSize: BATCH })) {
        if (SUSPECT.test(dirent.name)) suspect = true;
        else if (dirent.isDirectory()) folders.push(dirent);
        else if (window && window.length < SORTED_MAX) window.push(dirent.name);
        else {
          if (window && !(await fed(window))) return [];
          window = undefined;
          const more = feed(dirent.name);
          if (more !== true && !(await more)) return [];
        }
      }
      if (window && !(await fed(window.sort(byName)))) return [];
      if (!(await take())) return [];
      folders.sort((a, b) => byName(a.name, b.name));
      if (!suspect) return folders;
      // (Node's types for opendir leave out the 'buffer' encoding, which it takes: names as Buffers.)
      const rawNames = { bufferSize: BATCH, encoding: 'buffer' } as unknown as fs.OpenDirOptions;
      for await (const dirent of await fs.promises.opendir(folder, rawNames)) {
        const raw = dirent.name as unknown as Buffer;
        if (!SUSPECT.test(raw.toString('utf8'))) continue;
        const verdict = checkName(raw, this.opts.carryControl === true);
        if (verdict.ok && UNGLOBBABLE.test(verdict.name)) {
          pending.push(walkAside(root, realRoot, keyOf(verdict.name), dirent.isDirectory(), wanted, follow, (e) => buffer.push(e)));
        } else if (verdict.ok && dirent.isDirectory()) {
          (dirent as unknown as { name: string }).name = verdict.name;
          folders.push(dirent as unknown as fs.Dirent);
        } else if (verdict.ok) {
          const more = feed(verdict.name);
          if (more !== true && !(await more)) return [];
        } else if (dirent.isDirectory()) {
          const rawPath = Buffer.concat([Buffer.from(`${folder}${sep}`), raw]);
          pending.push(rejectTree(rawPath, keyOf(verdict.key), verdict.reason, wanted, (e) => buffer.push(e)));
        } else if (wanted(keyOf(verdict.key))) buffer.push({ kind: 'problem', key: keyOf(verdict.key), outcome: 'failed', reason: verdict.reason });
      }
      if (!(await take())) return [];
      return folders;
    };

    // Every path is judged by the one matcher the other sources use (sync/patterns.ts). fast-glob
    // is given the include and exclude patterns only so that it does not go into a folder they
    // leave out (what it yields is judged again); the ordered rules of a filter file it is not.
    // A pattern with no wildcard (`--include 'report 2024.pdf'`, one file) fast-glob answers with a
    // stat of its own, past the readdir every entry is taken from here: such a set is walked whole.
    const rules = (this.opts.rules?.length ?? 0) > 0;
    const include = !rules && this.opts.include?.length && this.opts.include.every((p) => fastGlob().isDynamicPattern(p)) ? this.opts.include : ['**'];
    const stream = fastGlob().stream(include, {
      cwd: root,
      ignore: rules ? [] : (this.opts.exclude ?? []),
      dot: true,
      onlyFiles: false,
      followSymbolicLinks: false,
      objectMode: true,
      // fast-glob remembers every path to drop duplicates, memory that grows with the tree; one
      // pattern cannot produce a duplicate, so only several include patterns pay for it.
      unique: include.length > 1,
      // Folders read at once (its default: one per core). Each hands its files on in turn, so more
      // are read ahead: 8 walk a tree of 100,000 files in folders of 100 as fast as a whole-folder
      // read did (0.46-0.54 s; 2: 0.61-0.67 s).
      concurrency: 8,
      fs: { readdir: readFolder },
    });
    stream.on('data', (entry: fg.Entry) => {
      // Only folders reach fast-glob (readFolder keeps the rest).
      if (entry.dirent.isDirectory() && wanted(entry.path)) buffer.push({ kind: 'dir', key: entry.path });
    });
    stream.once('error', (err: Error) => buffer.end(err));
    // Links and refused folders are looked at off the stream; the walk ends once they are done.
    stream.once('end', () => void allDone(pending).then(() => buffer.end()));
    return buffer;
  }

  async close(): Promise<void> {}
}

/** Names read from a folder before the walk waits for the consumer: the most lstat'd at once. */
const BATCH = 256;

/** The most files of one folder walked in name order (held, names only, to be sorted). */
const SORTED_MAX = 10_000;

/** Name order: by UTF-16 code unit, which for names without astral characters is byte order. */
function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** What each of a folder's names is: an lstat apiece, all of a batch at once. */
function lookAt(batch: { key: string; path: string }[], follow: boolean, root: string, realRoot: string): Promise<SourceEntry[]> {
  return new Promise((done) => {
    const entries: SourceEntry[] = new Array(batch.length);
    let left = batch.length;
    if (left === 0) return done(entries);
    const answer = (i: number, e: SourceEntry) => {
      entries[i] = e;
      if (--left === 0) done(entries);
    };
    batch.forEach(({ key, path }, i) => {
      fs.lstat(path, (err, stats) => {
        if (err) {
          // Gone between the folder's listing and its lstat: nothing left to send, said all the same.
          if (err.code === 'ENOENT') return answer(i, { kind: 'problem', key, outcome: 'skipped', reason: REMOVED_WHILE_READ });
          return answer(i, { kind: 'problem', key, outcome: 'failed', reason: `cannot read: ${err.code ?? err.message}` });
        }
        if (stats.isFile()) return answer(i, fileEntry(root, key, stats));
        if (!stats.isSymbolicLink()) return answer(i, { kind: 'problem', key, outcome: 'skipped', reason: 'not a regular file' });
        if (!follow) return answer(i, { kind: 'problem', key, outcome: 'skipped', reason: 'symbolic link (use --follow-symlinks to upload linked files)' });
        void resolveLink(root, realRoot, key).then((e) => answer(i, e));
      });
    });
  });
}

function fileEntry(root: string, key: string, stats: fs.Stats): SourceEntry {
  const path = `${root}${sep}${key}`;
  return { kind: 'file', key, size: stats.size, mtimeMs: Math.trunc(stats.mtimeMs), path, open: () => fs.createReadStream(path) };
}

/** Links are followed only to regular files inside the source; folders are never followed (loops). */
async function resolveLink(root: string, realRoot: string, key: string): Promise<SourceEntry> {
  try {
    const target = await realpath(resolve(root, key));
    if (target !== realRoot && !target.startsWith(realRoot + sep)) {
      return { kind: 'problem', key, outcome: 'skipped', reason: 'symbolic link pointing outside the source folder' };
    }
    const stats = await fs.promises.stat(target);
    if (stats.isDirectory()) {
      return { kind: 'problem', key, outcome: 'skipped', reason: `symbolic link to a folder (its content is mirrored at ${relative(realRoot, target) || '.'})` };
    }
    if (!stats.isFile()) return { kind: 'problem', key, outcome: 'skipped', reason: 'symbolic link to something that is not a file' };
    return { kind: 'file', key, size: stats.size, mtimeMs: Math.trunc(stats.mtimeMs), path: target, open: () => fs.createReadStream(target) };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { kind: 'problem', key, outcome: code === 'ELOOP' ? 'skipped' : 'failed', reason: code === 'ELOOP' ? 'symbolic link loop' : `broken symbolic link: ${code}` };
  }
}

/**
 * An entry fast-glob cannot match (its name holds U+2028 or U+2029): a file is looked at here, a
 * folder walked by a source of its own, its keys put under this one's and filtered by the same rule.
 */
async function walkAside(root: string, realRoot: string, key: string, isDirectory: boolean, wanted: (key: string) => boolean, follow: boolean, push: (e: SourceEntry) => void): Promise<void> {
  const path = `${root}${sep}${key.split('/').join(sep)}`;
  if (isDirectory) {
    if (wanted(`${key}/`) || wanted(key)) push({ kind: 'dir', key });
    const inner = new FolderSource(path, { followSymlinks: follow });
    for await (const e of inner.entries()) {
      const k = `${key}/${e.key}`;
      if (e.kind === 'file' && !wanted(k)) continue;
      push({ ...e, key: k } as SourceEntry);
    }
    return;
  }
  if (!wanted(key)) return;
  try {
    const stats = await fs.promises.lstat(path);
    if (stats.isFile()) push(fileEntry(root, key, stats));
    else if (stats.isSymbolicLink()) push(follow ? await resolveLink(root, realRoot, key) : { kind: 'problem', key, outcome: 'skipped', reason: 'symbolic link (use --follow-symlinks to upload linked files)' });
    else push({ kind: 'problem', key, outcome: 'skipped', reason: 'not a regular file' });
  } catch (err) {
    push({ kind: 'problem', key, outcome: 'failed', reason: `cannot read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` });
  }
}

/**
 * A folder whose own name is refused cannot be mirrored, nor can anything in it (no document
 * could carry its path): every file inside is a failed item with the reason, an empty folder one
 * item itself. Read by raw bytes, since the names inside may be as unreadable as its own.
 */
async function rejectTree(rawPath: Buffer, key: string, reason: string, wanted: (key: string) => boolean, push: (e: SourceEntry) => void): Promise<void> {
  const inside = `inside a folder that cannot be mirrored: ${reason}`;
  let dirents: fs.Dirent<Buffer>[];
  try {
    dirents = await fs.promises.readdir(rawPath, { withFileTypes: true, encoding: 'buffer' });
  } catch (err) {
    push({ kind: 'problem', key, outcome: 'failed', reason: `${reason}; its content cannot be read either: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` });
    return;
  }
  if (dirents.length === 0 && wanted(key)) push({ kind: 'problem', key, outcome: 'failed', reason });
  for (const dirent of dirents) {
    const verdict = checkName(dirent.name);
    const childKey = `${key}/${verdict.ok ? verdict.name : verdict.key}`;
    if (dirent.isDirectory()) await rejectTree(Buffer.concat([rawPath, Buffer.from(sep), dirent.name]), childKey, reason, wanted, push);
    else if (wanted(childKey)) push({ kind: 'problem', key: childKey, outcome: 'failed', reason: inside });
  }
}

async function allDone(pending: Promise<void>[]): Promise<void> {
  // New work may be added while waiting (a refused folder found late in the walk).
  let done = 0;
  while (done < pending.length) {
    const upTo = pending.length;
    await Promise.all(pending.slice(done, upTo));
    done = upTo;
  }
}

function toKey(root: string, path: string): string {
  return relative(root, path).split(sep).join('/');
}
