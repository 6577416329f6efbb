// The emulator's blob stores on their own: what an upload leaves behind when it ends well, when its
// body breaks off, and when the disk refuses the write.
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDiskBlobStore, createMemoryBlobStore } from '../../src/emulator/state/blobs.js';
import type { BlobStore } from '../../src/emulator/context.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'ferry-blobs-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** `count` chunks of 64 KiB, chunk i filled with byte i; optionally breaking off after `failAfter`. */
function chunks(count: number, failAfter?: number): Readable {
  return Readable.from(
    (function* () {
      for (let i = 0; i < count; i++) {
        if (i === failAfter) throw new Error('the client went away');
        yield Buffer.alloc(64 * 1024, i);
      }
    })(),
    { objectMode: false },
  );
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of stream as AsyncIterable<Buffer>) parts.push(part);
  return Buffer.concat(parts);
}

describe.each([
  ['on disk', () => createDiskBlobStore(join(root, 'blobs'))],
  ['in memory', () => createMemoryBlobStore()],
] as [string, () => BlobStore][])('the blob store %s', (_, make) => {
  it('stores a body of many chunks byte for byte and counts its bytes', async () => {
    const blobs = make();
    expect(await blobs.put('documents/a', chunks(40))).toBe(40 * 64 * 1024);
    const back = await readAll(blobs.get('documents/a') as NodeJS.ReadableStream);
    expect(back.length).toBe(40 * 64 * 1024);
    for (let i = 0; i < 40; i++) expect(back[i * 64 * 1024], `chunk ${i}`).toBe(i);
  });

  it('keeps nothing of a body that breaks off', async () => {
    const blobs = make();
    await expect(blobs.put('documents/b', chunks(40, 20))).rejects.toThrow('the client went away');
    expect(blobs.has('documents/b')).toBe(false);
  });
});

describe('the blob store on disk', () => {
  it('leaves no partial file behind a body that breaks off', async () => {
    const blobs = createDiskBlobStore(join(root, 'blobs'));
    await expect(blobs.put('documents/c', chunks(40, 20))).rejects.toThrow('the client went away');
    expect(await readdir(join(root, 'blobs', 'documents'))).toEqual([]);
  });

  it('fails a write the disk refuses, without waiting for ever, and stores nothing', async () => {
    const blobs = createDiskBlobStore(join(root, 'blobs'));
    // The partial file's path is taken by a folder: the open fails once the first chunks are queued.
    await mkdir(join(root, 'blobs', 'documents', 'd.partial'), { recursive: true });
    await expect(blobs.put('documents/d', chunks(40))).rejects.toMatchObject({ code: 'EISDIR' });
    expect(blobs.has('documents/d')).toBe(false);
  });

  it('fails a write the disk refused while the body was slow to come', async () => {
    const blobs = createDiskBlobStore(join(root, 'blobs'));
    await mkdir(join(root, 'blobs', 'documents', 'e.partial'), { recursive: true });
    // The open has failed before the second chunk arrives: that write is refused at once, and no
    // 'drain' or 'error' follows it.
    const slow = Readable.from(
      (async function* () {
        yield Buffer.alloc(1024, 1); // under the write stream's high-water mark: no wait for drain
        await new Promise((resolve) => setTimeout(resolve, 200));
        yield Buffer.alloc(64 * 1024, 2);
      })(),
      { objectMode: false },
    );
    await expect(blobs.put('documents/e', slow)).rejects.toMatchObject({ code: 'EISDIR' });
    expect(blobs.has('documents/e')).toBe(false);
  });
});
