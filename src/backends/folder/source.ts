// A local folder as a source: walked by fast-glob as a stream. fast-glob's stream has no
// backpressure, so directory reads are held back while too many entries wait for the consumer;
// that keeps memory flat on trees of millions of files. Unreadable directories become problem
// entries instead of ending the walk; names are read as bytes and judged by the rule of names.ts.
import fg from 'fast-glob';
import * as fs from 'node:fs';
import { realpath } from 'node:fs/promises';
import { relative, resolve, sep } from 'node:path';
import { pathFilter, type PathPatterns } from '../../sync/patterns.js';
import { BoundedBuffer } from '../bounded-buffer.js';
import { checkName } from '../names.js';
import { SourceError, type Source, type SourceEntry } from '../../sync/types.js';

export interface FolderSourceOptions extends PathPatterns {
  /** Upload symlinked files found inside the folder under the link's name (never outside it). */
  followSymlinks?: boolean;
  /** Entries waiting for the consumer before the walk pauses (default 2,000). */
  highWater?: number;
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
    if (!stats.isDirectory()) throw new SourceError(`source ${this.root} is not a folder or a .zip file`);
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
    // A name that is not valid UTF-8 (or holds a control character) must be seen as it is,
    // refused by the name rule and reported, instead of being decoded lossily, failing its stat
    // and taking its whole folder with it. Listings are read as text first (no Buffer per name);
    // one in which a name could be such a name (a U+FFFD from lossy decoding, or a control
    // character) is read again as raw bytes and judged name by name.
    const gatedReaddir = ((path: fs.PathLike, optionsOrCallback: unknown, maybeCallback?: unknown) => {
      type Callback = (err: NodeJS.ErrnoException | null, files: (string | fs.Dirent)[]) => void;
      const callback = (typeof optionsOrCallback === 'function' ? optionsOrCallback : maybeCallback) as Callback;
      const withTypes = (optionsOrCallback as { withFileTypes?: boolean } | undefined)?.withFileTypes === true;
      const failed = (err: NodeJS.ErrnoException) => {
        // The walk goes on; the folder is reported as a failed item with the reason.
        if (String(path) === root) return callback(err, []);
        buffer.push({ kind: 'problem', key: toKey(root, String(path)), outcome: 'failed', reason: `cannot read folder: ${err.code ?? err.message}` });
        return callback(null, []);
      };
      void buffer.open().then(() => {
        if (signal?.aborted) return callback(null, []);
        fs.readdir(path, { withFileTypes: true }, (err, dirents) => {
          if (err) return failed(err);
          if (!dirents.some((d) => SUSPECT.test(d.name))) return callback(null, withTypes ? dirents : dirents.map((d) => d.name));
          fs.readdir(path, { withFileTypes: true, encoding: 'buffer' }, (err, raw) => {
            if (err) return failed(err);
            callback(null, judgeNames(path, raw));
          });
        });
      });
      const judgeNames = (path: fs.PathLike, dirents: fs.Dirent<Buffer>[]): (string | fs.Dirent)[] => {
        const parentKey = toKey(root, String(path));
        const kept: (string | fs.Dirent)[] = [];
        for (const dirent of dirents) {
          const verdict = checkName(dirent.name);
          if (verdict.ok && UNGLOBBABLE.test(verdict.name)) {
            const key = parentKey ? `${parentKey}/${verdict.name}` : verdict.name;
            pending.push(walkAside(root, realRoot, key, dirent.isDirectory(), wanted, follow, (e) => buffer.push(e)));
            continue;
          }
          if (verdict.ok) {
            if (!withTypes) kept.push(verdict.name);
            else {
              (dirent as unknown as { name: string }).name = verdict.name;
              kept.push(dirent as unknown as fs.Dirent);
            }
            continue;
          }
          const key = parentKey ? `${parentKey}/${verdict.key}` : verdict.key;
          const rawPath = Buffer.concat([Buffer.from(`${String(path)}${sep}`), dirent.name]);
          if (dirent.isDirectory()) pending.push(refuseTree(rawPath, key, verdict.reason, wanted, (e) => buffer.push(e)));
          else if (wanted(key)) buffer.push({ kind: 'problem', key, outcome: 'failed', reason: verdict.reason });
        }
        return kept;
      };
    }) as unknown as Readdir;

    // Every path is judged by the one matcher the other sources use (sync/patterns.ts). fast-glob
    // is given the include and exclude patterns only so that it does not go into a folder they
    // leave out (what it yields is judged again); the ordered rules of a filter file it is not.
    const rules = (this.opts.rules?.length ?? 0) > 0;
    const include = !rules && this.opts.include?.length ? this.opts.include : ['**'];
    const stream = fg.stream(include, {
      cwd: root,
      ignore: rules ? [] : (this.opts.exclude ?? []),
      dot: true,
      onlyFiles: false,
      followSymbolicLinks: false,
      objectMode: true,
      stats: true,
      // fast-glob remembers every path to drop duplicates, memory that grows with the tree; one
      // pattern cannot produce a duplicate, so only several include patterns pay for it.
      unique: include.length > 1,
      fs: { readdir: gatedReaddir },
    });
    stream.on('data', (entry: fg.Entry) => {
      const stats = entry.stats as fs.Stats;
      const key = entry.path;
      if (!wanted(key)) return;
      if (stats.isDirectory()) buffer.push({ kind: 'dir', key });
      else if (stats.isFile()) buffer.push(fileEntry(root, key, stats));
      else if (stats.isSymbolicLink()) {
        if (!follow) buffer.push({ kind: 'problem', key, outcome: 'skipped', reason: 'symbolic link (use --follow-symlinks to upload linked files)' });
        else pending.push(resolveLink(root, realRoot, key).then((e) => buffer.push(e)));
      } else buffer.push({ kind: 'problem', key, outcome: 'skipped', reason: 'not a regular file' });
    });
    stream.once('error', (err: Error) => buffer.end(err));
    // Links and refused folders are looked at off the stream; the walk ends once they are done.
    stream.once('end', () => void settleAll(pending).then(() => buffer.end()));
    return buffer;
  }

  async close(): Promise<void> {}
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
async function refuseTree(rawPath: Buffer, key: string, reason: string, wanted: (key: string) => boolean, push: (e: SourceEntry) => void): Promise<void> {
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
    if (dirent.isDirectory()) await refuseTree(Buffer.concat([rawPath, Buffer.from(sep), dirent.name]), childKey, reason, wanted, push);
    else if (wanted(childKey)) push({ kind: 'problem', key: childKey, outcome: 'failed', reason: inside });
  }
}

async function settleAll(pending: Promise<void>[]): Promise<void> {
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
