// Blob storage shared by all parts: files under dataDir/blobs, or chunks in memory.
// Both stream in and out; neither holds a whole upload in one buffer.
import { createReadStream, createWriteStream, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BlobStore } from '../context.js';

const SAFE_KEY = /^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)*$/;

function checkKey(key: string): string {
  if (!SAFE_KEY.test(key)) throw new Error(`Invalid blob key: ${key}`);
  return key;
}

export function createDiskBlobStore(root: string): BlobStore {
  mkdirSync(root, { recursive: true });
  const pathOf = (key: string) => join(root, checkKey(key));
  return {
    async put(key, source) {
      const target = pathOf(key);
      const partial = `${target}.partial`;
      mkdirSync(dirname(target), { recursive: true });
      let bytes = 0;
      try {
        await pipeline(
          source,
          async function* count(chunks: AsyncIterable<Buffer | string>) {
            for await (const chunk of chunks) {
              bytes += Buffer.byteLength(chunk);
              yield chunk;
            }
          },
          createWriteStream(partial),
        );
      } catch (error) {
        rmSync(partial, { force: true });
        throw error;
      }
      // Rename last so a crash never leaves a half-written blob under its real key.
      renameSync(partial, target);
      return bytes;
    },
    get: (key) => (existsSync(pathOf(key)) ? createReadStream(pathOf(key)) : undefined),
    has: (key) => existsSync(pathOf(key)),
    delete: (key) => rmSync(pathOf(key), { force: true }),
  };
}

export function createMemoryBlobStore(): BlobStore {
  const blobs = new Map<string, Buffer[]>();
  return {
    async put(key, source) {
      const chunks: Buffer[] = [];
      let bytes = 0;
      await pipeline(
        source,
        new Writable({
          write(chunk: Buffer, _encoding, done) {
            chunks.push(chunk);
            bytes += chunk.length;
            done();
          },
        }),
      );
      blobs.set(checkKey(key), chunks);
      return bytes;
    },
    get: (key) => {
      const chunks = blobs.get(key);
      return chunks ? Readable.from(chunks, { objectMode: false }) : undefined;
    },
    has: (key) => blobs.has(key),
    delete: (key) => {
      blobs.delete(key);
    },
  };
}
