// The sha256 of an upload taken as it is sent (src/api/content-hash.ts): on a worker thread where
// the process has a core to spare, reading the sender's shared buffers. What it must keep: the
// digest of exactly the bytes given, in order, whichever thread takes it; a buffer let go of only
// once it has been read; digests under way at once kept apart; an abandoned one lets go of its buffers.
import { describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { contentHash, hashableBuffer, hashesElsewhere, type ContentHash } from '../../src/api/content-hash.js';

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
  it('is taken off this thread where the process has more than one core, in shared memory', () => {
    expect(hashesElsewhere()).toBe(availableParallelism() > 1);
    expect(hashableBuffer(16, true).buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(hashableBuffer(16, false).buffer).not.toBeInstanceOf(SharedArrayBuffer);
  });

  for (const shared of [true, false]) {
    it(`digests exactly the bytes given, each buffer let go of once read (${shared ? 'shared' : 'a caller\'s own'} buffers)`, async () => {
      const content = randomBytes(5 * 1024 * 1024 + 13);
      const hash = contentHash();
      expect(await hashThrough(hash, content, 256 * 1024, shared)).toBe(Math.ceil(content.length / (256 * 1024)));
      expect(await digestOf(hash)).toBe(sha(content));
    });
  }

  it('keeps digests under way at once apart', async () => {
    const contents = [randomBytes(3 * 1024 * 1024), randomBytes(1024 * 1024 + 1), Buffer.alloc(0)];
    const hashes = contents.map(() => contentHash());
    await Promise.all(contents.map((c, i) => hashThrough(hashes[i]!, c, 64 * 1024, true)));
    expect(await Promise.all(hashes.map(digestOf))).toEqual(contents.map(sha));
  });

  it('abandoned with buffers still being read, lets go of them; the next digest is whole', async () => {
    const hash = contentHash();
    const buffers = [hashableBuffer(1024 * 1024, true), hashableBuffer(1024 * 1024, true)];
    const released = buffers.map((b) => {
      b.fill(7);
      return new Promise<void>((resolve) => hash.update(b, resolve));
    });
    hash.abandon();
    await Promise.all(released);
    const content = randomBytes(2 * 1024 * 1024);
    const next = contentHash();
    await hashThrough(next, content, 1024 * 1024, true);
    expect(await digestOf(next)).toBe(sha(content));
  });
});
