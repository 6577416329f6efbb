// A local folder as a source: walked by fast-glob as a stream. fast-glob's stream has no
// backpressure, so directory reads are held back while too many entries wait for the consumer;
// that keeps memory flat on trees of millions of files. Unreadable directories become problem
// entries instead of ending the walk.
import fg from 'fast-glob';
import * as fs from 'node:fs';
import { realpath } from 'node:fs/promises';
import { relative, resolve, sep } from 'node:path';
import { BoundedBuffer } from './gate.js';
import { SourceError, type Source, type SourceEntry } from './types.js';

export interface FolderSourceOptions {
  include?: string[];
  exclude?: string[];
  /** Upload symlinked files found inside the folder under the link's name (never outside it). */
  followSymlinks?: boolean;
  /** Entries waiting for the consumer before the walk pauses (default 2,000). */
  highWater?: number;
}

type Readdir = typeof fs.readdir;

export class FolderSource implements Source {
  readonly description: string;
  private readonly root: string;

  constructor(root: string, private readonly opts: FolderSourceOptions = {}) {
    this.root = resolve(root);
    this.description = this.root;
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
    const buffer = new BoundedBuffer<SourceEntry>(this.opts.highWater ?? 2_000);
    const root = this.root;
    const realRoot = fs.realpathSync(root);
    const gatedReaddir = ((path: fs.PathLike, options: unknown, callback: (err: NodeJS.ErrnoException | null, files: fs.Dirent[]) => void) => {
      void buffer.open().then(() => {
        if (signal?.aborted) return callback(null, []);
        fs.readdir(path, options as { withFileTypes: true }, (err, files) => {
          if (err) {
            // The walk goes on; the folder is reported as a failed item with the reason.
            if (String(path) !== root) buffer.push({ kind: 'problem', key: toKey(root, String(path)), outcome: 'failed', reason: `cannot read folder: ${err.code ?? err.message}` });
            else return callback(err, []);
            return callback(null, []);
          }
          callback(null, files);
        });
      });
    }) as unknown as Readdir;

    const stream = fg.stream(this.opts.include?.length ? this.opts.include : ['**'], {
      cwd: root,
      ignore: this.opts.exclude ?? [],
      dot: true,
      onlyFiles: false,
      followSymbolicLinks: false,
      objectMode: true,
      stats: true,
      // fast-glob remembers every path to drop duplicates, memory that grows with the tree; one
      // pattern cannot produce a duplicate, so only several include patterns pay for it.
      unique: (this.opts.include?.length ?? 0) > 1,
      fs: { readdir: gatedReaddir },
    });
    const follow = this.opts.followSymlinks === true;
    const pending: Promise<void>[] = [];
    stream.on('data', (entry: fg.Entry) => {
      const stats = entry.stats as fs.Stats;
      const key = entry.path;
      if (stats.isDirectory()) buffer.push({ kind: 'dir', key });
      else if (stats.isFile()) buffer.push(fileEntry(root, key, stats));
      else if (stats.isSymbolicLink()) {
        if (!follow) buffer.push({ kind: 'problem', key, outcome: 'skipped', reason: 'symbolic link (use --follow-symlinks to upload linked files)' });
        else pending.push(resolveLink(root, realRoot, key).then((e) => buffer.push(e)));
      } else buffer.push({ kind: 'problem', key, outcome: 'skipped', reason: 'not a regular file' });
    });
    stream.once('error', (err: Error) => buffer.end(err));
    stream.once('end', () => void Promise.all(pending).then(() => buffer.end()));
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

function toKey(root: string, path: string): string {
  return relative(root, path).split(sep).join('/');
}
