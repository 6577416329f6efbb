// The sha256 of an upload taken as it is sent (src/api/content-hash.ts): on a worker thread where
// the process has cores to spare, reading the sender's shared buffers. What it must keep: the
// digest of exactly the bytes given, in order, whichever thread takes it; a buffer let go of only
// once it has been read; digests under way at once kept apart; an abandoned one lets go of its
// buffers. And the body reader (multipart.ts) that waits on it: the same bytes as the body read as a
// stream, the field made from the digest after the file, with its buffers written over as soon as
// they are let go of, as the bulk sender does.
import { describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { contentHash, hashableBuffer, hashesElsewhere, type ContentHash } from '../../src/api/content-hash.js';
import { buildMultipart, type BodyReader } from '../../src/api/multipart.js';
import { useTempDirs } from '../helpers/temp.js';

const tempDir = useTempDirs();

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const digestOf = (hash: ContentHash) => new Promise<string | Error>((resolve) => hash.digest(resolve));

/** `content` given to `hash` through one reused buffer, each chunk written only once the last is let go of. */
async function hashThrough(hash: ContentHash, content: Buffer, chunk: number, shared: boolean): Promise<number> {
  const buffer = hashableBuffer(chunk, shared);
  let released = 0;
  for (let at = 0; at < content.length; at += chunk) {
    const n = content.copy(buffer, 0, at, Math.min(at + chunk, content.length));
    await new Promise<void>((resolve) => hash.update(buffer.subarray(0, n), () => resolve()));
    released++;
    // The buffer is written over at once: a thread still reading it would hash the wrong bytes.
    buffer.fill(0xa5);
  }
  return released;
}

describe('a content hash', () => {
  it('is taken off this thread where the process has three cores or more, in shared memory', () => {
    expect(hashesElsewhere()).toBe(availableParallelism() >= 3);
    expect(hashableBuffer(16, true).buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(hashableBuffer(16, false).buffer).not.toBeInstanceOf(SharedArrayBuffer);
  });

  for (const [elsewhere, shared] of [[true, true], [true, false], [false, false]] as const) {
    it(`digests exactly the bytes given, each buffer let go of once read (${elsewhere ? 'on a thread of its own' : 'on this thread'}, ${shared ? 'shared' : 'a caller\'s own'} buffers)`, async () => {
      const content = randomBytes(5 * 1024 * 1024 + 13);
      const hash = contentHash(elsewhere);
      expect(await hashThrough(hash, content, 256 * 1024, shared)).toBe(Math.ceil(content.length / (256 * 1024)));
      expect(await digestOf(hash)).toBe(sha(content));
    });
  }

  it('keeps digests under way at once apart', async () => {
    const contents = [randomBytes(3 * 1024 * 1024), randomBytes(1024 * 1024 + 1), Buffer.alloc(0)];
    const hashes = contents.map(() => contentHash(true));
    await Promise.all(contents.map((c, i) => hashThrough(hashes[i]!, c, 64 * 1024, true)));
    expect(await Promise.all(hashes.map(digestOf))).toEqual(contents.map(sha));
  });

  it('abandoned with buffers still being read, lets go of them; the next digest is whole', async () => {
    const hash = contentHash(true);
    const buffers = [hashableBuffer(1024 * 1024, true), hashableBuffer(1024 * 1024, true)];
    const released = buffers.map((b) => {
      b.fill(7);
      return new Promise<void>((resolve) => hash.update(b, resolve));
    });
    hash.abandon();
    await Promise.all(released);
    const content = randomBytes(2 * 1024 * 1024);
    const next = contentHash(true);
    await hashThrough(next, content, 1024 * 1024, true);
    expect(await digestOf(next)).toBe(sha(content));
  });
});

/** The body as the bulk sender reads it: three reused buffers, each written over once the reader lets go of it. */
async function pumped(reader: BodyReader, size: number): Promise<Buffer> {
  const spare = [reader.allocate(size), reader.allocate(size), reader.allocate(size)];
  const out: Buffer[] = [];
  for (;;) {
    await new Promise<void>((resolve) => {
      if (reader.ready(resolve)) resolve();
    });
    const buffer = spare.pop() as Buffer;
    const n = reader.read(buffer);
    if (n === 0) break;
    out.push(Buffer.from(buffer.subarray(0, n)));
    await new Promise<void>((resolve) => reader.reusable(buffer, resolve));
    buffer.fill(0x5a);
    spare.push(buffer);
  }
  reader.close();
  return Buffer.concat(out);
}

describe('a body read into reused buffers, its file hashed for a field after it', () => {
  for (const elsewhere of [true, false]) {
    it(`is the same bytes as the body streamed, the field naming the content (${elsewhere ? 'hashed on a thread of its own' : 'hashed on the reading thread'})`, async () => {
      const content = randomBytes(3 * 1024 * 1024 + 5);
      const path = join(await tempDir('ferry-hash-reader-'), 'big.bin');
      await writeFile(path, content);
      const parts = [
        { name: 'file', file: { path } },
        { name: 'metadataJson', fromSha256: (sha256: string) => JSON.stringify({ 'ferry.sha256': sha256 }) },
      ];
      const body = await buildMultipart(parts);
      const read = await pumped(body.reader!(elsewhere), 1024 * 1024);
      expect(read.length).toBe(body.length);
      const streamed: Buffer[] = [];
      for await (const chunk of (await buildMultipart(parts)).open()) streamed.push(Buffer.from(chunk));
      // The boundaries differ from body to body: compared with them blanked out.
      const blank = (b: Buffer) => b.toString('latin1').replace(/-*ferry[0-9a-f]+[0-9a-z]{8}/g, 'BOUNDARY');
      expect(blank(read)).toBe(blank(Buffer.concat(streamed)));
      expect(read.toString('latin1')).toContain(`{"ferry.sha256":"${sha(content)}"}`);
    });
  }
});
