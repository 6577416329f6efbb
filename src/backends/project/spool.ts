// A migrated document's content held while its sha256 is taken, for a service that reads an
// upload's form fields before the file (formOrder fields-first): there the document's metadata,
// its ferry.sha256 among it, goes first, so bytes checked only as they are sent would already be a
// document (kept for good, and found again by its ferry.source). Downloaded once into memory (up
// to IN_MEMORY_MAX) or a scratch file under TMPDIR, hashed on the way, and uploaded from there
// only when they match the source's sha256: the service never holds bytes that are not the
// source's, and a retry sends them again without asking the source twice. Where the service reads
// fields after the file, no spool is needed: the digest follows the file, and the upload is
// stopped before its end on a mismatch (destination.ts).
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { scratchFolder } from '../../scratch.js';
import { ContentMismatchError } from '../content-check.js';
import type { FileInput } from '../../api/multipart.js';
import { FerryError } from '../../errors.js';
import { visible } from '../../text.js';

/** Content up to this size is held in memory: a buffer each, for the upload's few workers at once. */
const IN_MEMORY_MAX = 1024 * 1024;

/** One folder for the process's spooled files, made at the first that needs one. */
let folder: Promise<string> | undefined;

export interface Spooled {
  /** The content as an upload sends it: replayable. */
  file: FileInput;
  /** Its sha256, hex. */
  sha256: string;
  /** Lets go of what holds it (the scratch file). */
  dispose(): Promise<void>;
}

/**
 * `body` (of `size` bytes) read whole and hashed; a mismatch with `expected` (the source's sha256,
 * when it names one) throws ContentMismatchError, and nothing is kept.
 */
export async function spool(body: Readable, size: number, key: string, expected: string | undefined, contentType?: string): Promise<Spooled> {
  const type = contentType ? { contentType } : {};
  const name = posix.basename(key);
  const hash = createHash('sha256');
  const check = { update: (chunk: Buffer) => hash.update(chunk) };
  let bytes = 0;
  let sha256 = '';
  const whole = () => {
    if (bytes !== size) throw new FerryError(`the content of ${visible(key)} was ${bytes} bytes, not the ${size} its source said`);
    sha256 = hash.digest('hex');
    if (expected !== undefined && sha256 !== expected) throw new ContentMismatchError(key, expected, [sha256]);
  };
  if (size <= IN_MEMORY_MAX) {
    const chunks: Buffer[] = [];
    for await (const chunk of body as AsyncIterable<Buffer>) {
      check.update(chunk);
      bytes += chunk.length;
      chunks.push(chunk);
    }
    whole();
    const content = Buffer.concat(chunks);
    return { file: { open: () => Readable.from([content]), size: content.length, filename: name, ...type }, sha256, dispose: async () => undefined };
  }
  folder ??= scratchFolder('spool');
  const path = join(await folder, randomBytes(8).toString('hex'));
  try {
    await pipeline(
      body,
      async function* (source: AsyncIterable<Buffer>) {
        for await (const chunk of source) {
          check.update(chunk);
          bytes += chunk.length;
          yield chunk;
        }
      },
      createWriteStream(path, { flags: 'wx' }),
    );
    whole();
  } catch (err) {
    await rm(path, { force: true });
    throw err;
  }
  return { file: { path, size, filename: name, ...type }, sha256, dispose: () => rm(path, { force: true }) };
}
