// Blob storage shared by all parts: files under dataDir/blobs, or chunks in memory.
// Both stream in and out; neither holds a whole upload in one buffer. Uploads are read with
// for-await rather than stream.pipeline: on Node 20 a pipeline aborts an AbortController of its own
// when it ends, and the DOMException that builds cost ~85 us of the ~1.6 ms an upload of 16 KiB
// costs this process (profiled, 4,000 uploads).
import { createWriteStream, existsSync, linkSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { once } from 'node:events';
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { BlobStore } from '../context.js';
import { ServedFile } from './served-file.js';

/**
 * What an upload's file stream holds before its reader waits: with the default 16 KiB, each chunk
 * of the request waited for its own write to the disk, one at a time (the main thread idle 5.1 s
 * of a 6 s upload of 1.5 GiB); with more, the chunks that come meanwhile go down in one writev.
 */
const WRITE_BUFFERED = 4 << 20;

/**
 * The whole store kept aside and put back, for the control API's snapshots and reset
 * (src/emulator/control/). Each call is synchronous, so that it happens between two requests and
 * beside the database's own copy. A blob is never changed once stored (a new upload is a new key),
 * so a disk store keeps a copy as hard links: no bytes copied, and none shared with a later write.
 */
export interface BlobCopies {
  /** Keeps every blob stored now under `dir` (a memory store keeps the same buffers under that name); how many and their bytes. */
  saveCopy(dir: string): { files: number; bytes: number };
  /** Makes the store hold exactly what `saveCopy(dir)` kept. */
  loadCopy(dir: string): void;
  /** Forgets what `saveCopy(dir)` kept. */
  dropCopy(dir: string): void;
  /** Removes every blob. */
  clear(): void;
}

export type KeptBlobStore = BlobStore & BlobCopies;

/** Files whose writes are under way end so: never part of a copy. */
const PARTIAL = '.partial';
/** What a restore or reset moves the old tree aside as, before removing it. */
const REPLACED = '.replaced-';

const SAFE_KEY = /^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)*$/;

function checkKey(key: string): string {
  if (!SAFE_KEY.test(key)) throw new Error(`Invalid blob key: ${key}`);
  return key;
}

export function createDiskBlobStore(root: string): KeptBlobStore {
  mkdirSync(root, { recursive: true });
  // A tree a restore or reset moved aside and a crash left behind.
  const parent = dirname(root);
  for (const name of readdirSync(parent)) if (name.startsWith(`${basename(root)}${REPLACED}`)) rmSync(join(parent, name), { recursive: true, force: true });
  const aside = () => `${root}${REPLACED}${process.pid}-${Date.now()}`;
  const pathOf = (key: string) => join(root, checkKey(key));
  return {
    async put(key, source) {
      const target = pathOf(key);
      const partial = `${target}.partial`;
      mkdirSync(dirname(target), { recursive: true });
      let bytes = 0;
      const out = createWriteStream(partial, { highWaterMark: WRITE_BUFFERED });
      const written = finished(out);
      written.catch(() => undefined); // awaited below, and raced with each wait for 'drain'
      try {
        for await (const chunk of source as AsyncIterable<Buffer | string>) {
          bytes += Buffer.byteLength(chunk);
          // A failed write (ENOSPC) settles `written`: a wait for 'drain' alone would never end.
          if (!out.write(chunk)) await Promise.race([once(out, 'drain'), written]);
        }
        out.end();
        await written;
      } catch (error) {
        out.destroy();
        // Its open may still be under way (chunks were buffered meanwhile): the file exists once it closes.
        if (!out.closed) await once(out, 'close');
        try {
          rmSync(partial, { force: true });
        } catch {
          // What stands at the partial path is not ours to remove; the write's own error says more.
        }
        throw error;
      }
      // Rename last so a crash never leaves a half-written blob under its real key.
      renameSync(partial, target);
      return bytes;
    },
    get(key, range) {
      const path = pathOf(key);
      const size = statSync(path, { throwIfNoEntry: false })?.size;
      if (size === undefined) return undefined;
      try {
        return new ServedFile(path, range?.start ?? 0, range?.end ?? size - 1);
      } catch (err) {
        // Removed since (a restore, a reset): as if it never was.
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw err;
      }
    },
    has: (key) => existsSync(pathOf(key)),
    size: (key) => statSync(pathOf(key), { throwIfNoEntry: false })?.size,
    delete: (key) => rmSync(pathOf(key), { force: true }),
    saveCopy: (dir) => linkTree(root, dir),
    dropCopy: (dir) => rmSync(dir, { recursive: true, force: true }),
    loadCopy(dir) {
      // The old tree is moved aside whole, then removed: an upload still finishing in it (its
      // state gate ends it) writes nowhere that is served.
      const old = aside();
      renameSync(root, old);
      mkdirSync(root, { recursive: true });
      linkTree(dir, root);
      rmSync(old, { recursive: true, force: true });
    },
    clear() {
      const old = aside();
      renameSync(root, old);
      mkdirSync(root, { recursive: true });
      rmSync(old, { recursive: true, force: true });
    },
  };
}

/** Hard-links every stored file under `from` to the same place under `to` (made as needed); how many and their bytes. */
function linkTree(from: string, to: string): { files: number; bytes: number } {
  mkdirSync(to, { recursive: true });
  let files = 0;
  let bytes = 0;
  for (const entry of readdirSync(from, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || entry.name.endsWith(PARTIAL)) continue;
    const path = join(entry.parentPath, entry.name);
    const target = join(to, path.slice(from.length));
    mkdirSync(dirname(target), { recursive: true });
    linkSync(path, target);
    files++;
    bytes += statSync(target).size;
  }
  return { files, bytes };
}

export function createMemoryBlobStore(): KeptBlobStore {
  const blobs = new Map<string, Buffer[]>();
  const copies = new Map<string, Map<string, Buffer[]>>();
  return {
    async put(key, source) {
      const chunks: Buffer[] = [];
      let bytes = 0;
      for await (const chunk of source as AsyncIterable<Buffer>) {
        chunks.push(chunk);
        bytes += chunk.length;
      }
      blobs.set(checkKey(key), chunks);
      return bytes;
    },
    get: (key, range) => {
      const chunks = blobs.get(key);
      if (!chunks) return undefined;
      return Readable.from(range ? slice(chunks, range.start, range.end) : chunks, { objectMode: false });
    },
    has: (key) => blobs.has(key),
    size: (key) => blobs.get(key)?.reduce((n, c) => n + c.length, 0),
    delete: (key) => {
      blobs.delete(key);
    },
    saveCopy: (dir) => {
      copies.set(dir, new Map(blobs));
      let bytes = 0;
      for (const chunks of blobs.values()) for (const chunk of chunks) bytes += chunk.length;
      return { files: blobs.size, bytes };
    },
    dropCopy: (dir) => {
      copies.delete(dir);
    },
    loadCopy: (dir) => {
      const kept = copies.get(dir);
      if (!kept) throw new Error(`No copy of the blobs is kept under ${dir}`);
      blobs.clear();
      for (const [key, chunks] of kept) blobs.set(key, chunks);
    },
    clear: () => blobs.clear(),
  };
}

/** The bytes from `start` to `end` (inclusive) of a blob held in chunks, as views of them. */
function* slice(chunks: Buffer[], start: number, end: number): Iterable<Buffer> {
  let at = 0;
  for (const chunk of chunks) {
    const from = Math.max(start - at, 0);
    const to = Math.min(end + 1 - at, chunk.length);
    if (from < to) yield chunk.subarray(from, to);
    at += chunk.length;
    if (at > end) return;
  }
}
