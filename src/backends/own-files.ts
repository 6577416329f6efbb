// The one owner of "open a file for writing inside a folder ferry keeps" (issue 76): ferry never
// writes through a link it did not make, the rule tar and rsync (--safe-links) learnt from their
// CVEs. A file is created new (O_EXCL: anything at the name, a dangling link included, refuses it)
// and renamed into place, which replaces a link planted at the name and never follows it; or a
// file ferry wrote is opened again with O_NOFOLLOW and refused unless it is one plain file with one
// name (a hard link would carry the write to its other name). Node has no openat2, so a folder on
// the way is checked by its caller (destination.ts walks a pull's folders component by component).
import { randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, ftruncateSync, lstatSync, openSync, renameSync, rmSync, type Stats } from 'node:fs';
import { createWriteStream, type WriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import { basename, dirname, join } from 'node:path';
import { FerryError } from '../errors.js';
import { visible } from '../text.js';

/** Something other than a plain file of ferry's stands where it writes: refused, left as it is. */
export class LinkRejectedError extends FerryError {}

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_APPEND } = constants;

function linkInTheWay(path: string, what: string): LinkRejectedError {
  return new LinkRejectedError(`refused: ${visible(path)} is ${what}; ferry never writes through a link it did not make (it was left as it is: remove it and run again)`);
}

/** What stands at a name, in words, when it is not a plain file with one name; undefined when it is. */
function oddity(st: Stats): string | undefined {
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (!st.isFile()) return 'not a plain file';
  if (st.nlink !== 1) return `a hard link (one file with ${st.nlink} names)`;
  return undefined;
}

/**
 * Throws LinkRejectedError when something other than a plain file with one name is at `path`
 * (nothing there is fine): for a file ferry reads back before it writes it again.
 */
export function rejectLinkAt(path: string): void {
  const st = lstatSync(path, { throwIfNoEntry: false });
  const odd = st && oddity(st);
  if (odd) throw linkInTheWay(path, odd);
}

/** A new file at `path` (mode as given): fails with EEXIST when anything, a link included, is at its name. */
export function createNew(path: string, mode = 0o666): number {
  return openSync(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
}

/**
 * A file ferry wrote, opened again to add to it (`append`) or to write it from the start
 * (`rewrite`): refused when its name is a symbolic link, another kind of file, or one of several
 * names of a file (checked before anything is truncated). ENOENT as it comes.
 */
export function openOwn(path: string, how: 'append' | 'rewrite'): number {
  let fd: number;
  try {
    fd = openSync(path, O_WRONLY | O_NOFOLLOW | (how === 'append' ? O_APPEND : 0));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw linkInTheWay(path, 'a symbolic link');
    throw err;
  }
  const odd = oddity(fstatSync(fd));
  if (odd) {
    closeSync(fd);
    throw linkInTheWay(path, odd);
  }
  if (how === 'rewrite') ftruncateSync(fd, 0);
  return fd;
}

/** A name beside `path` for a file that becomes it: hidden, random, never one that exists. */
export function besideName(path: string): string {
  return join(dirname(path), `.${basename(path)}.ferry-${randomBytes(6).toString('hex')}.tmp`);
}

/** A write stream of a new file at `path` (createNew's rule: nothing at the name, a link included). */
export function newFileStream(path: string): WriteStream {
  return createWriteStream(path, { flags: 'wx' });
}

/** `text` as the whole of the file at `path`, by replaceWhole. */
export function writeWhole(path: string, text: string | Buffer): Promise<void> {
  return replaceWhole(path, async (out) => {
    out.end(text);
    await finished(out);
  });
}

/**
 * The whole file written by `write` into a new file beside `path` (created as createNew creates,
 * a stream `write` ends), then renamed over it: a link planted at `path` is replaced, never
 * followed, and a reader never sees half of it. The new file is removed when `write` fails.
 */
export async function replaceWhole(path: string, write: (out: WriteStream) => Promise<void>): Promise<void> {
  const temp = besideName(path);
  const out = newFileStream(temp);
  try {
    await write(out);
    if (!out.closed) await finished(out);
    renameSync(temp, path);
  } catch (err) {
    out.destroy();
    rmSync(temp, { force: true });
    throw err;
  }
}
