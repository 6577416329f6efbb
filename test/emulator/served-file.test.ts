// A stored blob served from disk (src/emulator/state/served-file.ts) reuses three buffers while it is
// piped into a response, each only after the response wrote it: every byte arrives as stored, in
// order, over a real socket, whatever the file's size against the buffers, for a range, for a
// client that reads slowly (the buffers are all in flight), and read without a pipe; a client that
// goes away leaves no descriptor open.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, get, type Server } from 'node:http';
import { once } from 'node:events';
import { readdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { ServedFile } from '../../src/emulator/state/served-file.js';
import { useTempDirs } from '../helpers/temp.js';

const tempDir = useTempDirs();
const MiB = 1024 * 1024;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const openDescriptors = () => readdirSync('/proc/self/fd').length;

let dir: string;
let server: Server;
let base: string;

beforeAll(async () => {
  dir = await tempDir('ferry-served-');
  // GET /NAME?start=S&end=E pipes the file (its range) into the response, as fastify does a reply's stream.
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const size = Number(url.searchParams.get('size'));
    const start = Number(url.searchParams.get('start') ?? 0);
    const end = Number(url.searchParams.get('end') ?? size - 1);
    const file = new ServedFile(join(dir, url.pathname.slice(1)), start, end);
    res.writeHead(200, { 'content-length': String(end - start + 1) });
    res.on('close', () => file.destroy());
    file.pipe(res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** The body of a GET, read `slowly` (a pause between chunks) or at once. */
async function fetchBody(path: string, slowly = false): Promise<Buffer> {
  const res = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => get(`${base}${path}`, resolve).on('error', reject));
  const chunks: Buffer[] = [];
  for await (const chunk of res) {
    chunks.push(chunk as Buffer);
    if (slowly) await new Promise((r) => setTimeout(r, 2));
  }
  return Buffer.concat(chunks);
}

describe('a blob served from disk', () => {
  for (const size of [0, 1, MiB - 1, MiB, MiB + 1, 3 * MiB, 7 * MiB + 5]) {
    it(`${size} bytes: whole and in order`, async () => {
      const content = randomBytes(size);
      await writeFile(join(dir, `s${size}`), content);
      expect(sha(await fetchBody(`/s${size}?size=${size}`))).toBe(sha(content));
    });
  }

  it('a range: exactly its bytes', async () => {
    const content = randomBytes(5 * MiB + 17);
    await writeFile(join(dir, 'ranged'), content);
    const start = MiB + 3;
    const end = 4 * MiB + 11;
    expect(sha(await fetchBody(`/ranged?size=${content.length}&start=${start}&end=${end}`))).toBe(sha(content.subarray(start, end + 1)));
  });

  it('to a client that reads slowly: no buffer is read into again before the response wrote it', async () => {
    // Every MiB differs from the last, so a buffer reused too early shows as a MiB out of place.
    const content = Buffer.concat(Array.from({ length: 24 }, () => randomBytes(MiB)));
    await writeFile(join(dir, 'slow'), content);
    expect(sha(await fetchBody(`/slow?size=${content.length}`, true))).toBe(sha(content));
  });

  it('read without a pipe (a scan, an import): the same bytes', async () => {
    const content = randomBytes(2 * MiB + 9);
    await writeFile(join(dir, 'iterated'), content);
    const chunks: Buffer[] = [];
    for await (const chunk of new ServedFile(join(dir, 'iterated'), 0, content.length - 1)) chunks.push(chunk as Buffer);
    expect(sha(Buffer.concat(chunks))).toBe(sha(content));
  });

  it('a client that goes away mid-file leaves no descriptor open', async () => {
    const content = randomBytes(40 * MiB);
    await writeFile(join(dir, 'left'), content);
    const before = openDescriptors();
    const res = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => get(`${base}/left?size=${content.length}`, resolve).on('error', reject));
    await once(res, 'data');
    res.destroy();
    // The server sees the close, destroys the file, and closes it once its read under way is done.
    while (openDescriptors() > before) await new Promise((r) => setTimeout(r, 10));
    expect(openDescriptors()).toBeLessThanOrEqual(before);
  });

  it('a file that is gone is ENOENT at once', () => {
    expect(() => new ServedFile(join(dir, 'never'), 0, 10)).toThrow(/ENOENT/);
  });
});
