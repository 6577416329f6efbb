// Large content over plain http is read from its socket into blocks of 1 MiB (src/api/bulk-dispatcher.ts)
// and reaches the caller as undici's own would: the emulator's content whole and in order, a range,
// and against a server that answers otherwise: chunked (sent again through undici), a body that
// ends with the connection, one cut short, a 404, a 401 that renews the token, headers that never come.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { FerryClient, NotFoundError, TimeoutError } from '../../src/api/index.js';
import { mirroredProject, remoteFiles, startService, type Service } from '../helpers/service.js';
import { clientOptionsFor, useTestServer } from '../helpers/test-server.js';
import { join } from 'node:path';
import { useTempDirs } from '../helpers/temp.js';


const tempDir = useTempDirs();
const MiB = 1024 * 1024;
/** A size the client reads in blocks (documents.ts, BULK_MIN). */
const LARGE = 8 * MiB;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function chunksOf(body: AsyncIterable<unknown>): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for await (const c of body) out.push(c as Buffer);
  return out;
}

describe('a large document from the emulator', () => {
  let service: Service;
  let client: FerryClient;
  const content = randomBytes(20 * MiB + 321);
  let doc: { url: string; name: string; size: number };
  beforeAll(async () => {
    service = await startService();
    client = service.client();
    const project = await mirroredProject(client, join(await tempDir('ferry-bulk-'), 'src'), { 'big.bin': content }, 'bulk');
    const [d] = await remoteFiles(client, project);
    doc = { url: d!.url!, name: d!.name, size: d!.size! };
  });
  afterAll(() => service.close());

  it('comes whole, in blocks of 1 MiB (undici alone hands 64 KiB at a time)', async () => {
    const res = await client.documents.download(doc);
    const chunks = await chunksOf(res.body);
    expect(sha(Buffer.concat(chunks))).toBe(sha(content));
    // Blocks, or two a reader took at once: never the socket's 64 KiB reads.
    expect(chunks.length).toBeLessThanOrEqual(21);
    expect(chunks.slice(0, -1).every((c) => c.length >= MiB && c.length % MiB === 0)).toBe(true);
  });

  it('a range comes as the bytes asked', async () => {
    const got = await client.documents.downloadFrom(doc, doc.size, 13 * MiB + 7);
    expect(got.from).toBe(13 * MiB + 7);
    expect(sha(Buffer.concat(await chunksOf(got.body)))).toBe(sha(content.subarray(13 * MiB + 7)));
  });

  it('drained: every byte to the sink in order, what the body held first; the body itself ends empty', async () => {
    const res = await client.documents.download(doc);
    // Let a block reach the body's buffer (and the socket pause) before the caller drains it.
    while (res.body.readableLength === 0) await new Promise((r) => setImmediate(r));
    expect(res.drain).toBeTypeOf('function');
    const hash = createHash('sha256');
    let bytes = 0;
    await res.drain!((b) => {
      hash.update(b);
      bytes += b.length;
    });
    expect(bytes).toBe(content.length);
    expect(hash.digest('hex')).toBe(sha(content));
    expect(await chunksOf(res.body)).toEqual([]);
  });

  it('drained from a range: the bytes asked', async () => {
    const got = await client.documents.downloadFrom(doc, doc.size, 5 * MiB + 3);
    const parts: Buffer[] = [];
    await got.drain!((b) => parts.push(Buffer.from(b)));
    expect(sha(Buffer.concat(parts))).toBe(sha(content.subarray(5 * MiB + 3)));
  });

  it('a sink that throws ends the request with its error, and nothing more reaches it', async () => {
    const res = await client.documents.download(doc);
    const full = Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
    let bytes = 0;
    let after = 0;
    await expect(
      res.drain!((b) => {
        if (bytes >= 3 * MiB) {
          after++;
          throw full;
        }
        bytes += b.length;
      }),
    ).rejects.toBe(full);
    expect(after).toBe(1);
    await expect(chunksOf(res.body)).rejects.toBe(full);
  });

  it('a small one is read through the pool as before', async () => {
    const res = await client.documents.download({ ...doc, size: 1024 });
    const chunks = await chunksOf(res.body);
    expect(sha(Buffer.concat(chunks))).toBe(sha(content));
    expect(chunks.length).toBeGreaterThan(21);
  });
});

describe('a large body from a server that answers otherwise', () => {
  const t = useTestServer();
  const url = () => `${t.server.url}/content/doc`;
  const body = randomBytes(3 * MiB + 5);

  it('chunked: the same GET through undici, the body whole', async () => {
    let asked = 0;
    t.server.handle('GET', '/content/doc', ({ res }) => {
      asked++;
      res.writeHead(200, { 'transfer-encoding': 'chunked' });
      res.end(body);
    });
    const res = await t.client.documents.download({ url: url(), name: 'd', size: LARGE });
    // Read by undici: no read buffer to drain from.
    expect(res.drain).toBeUndefined();
    expect(sha(Buffer.concat(await chunksOf(res.body)))).toBe(sha(body));
    expect(asked).toBe(2);
  });

  it('ending with the connection (no Content-Length): the body whole', async () => {
    t.server.handle('GET', '/content/doc', ({ res }) => {
      res.useChunkedEncodingByDefault = false;
      res.shouldKeepAlive = false;
      res.writeHead(200, { connection: 'close' });
      res.end(body);
    });
    const res = await t.client.documents.download({ url: url(), name: 'd', size: LARGE });
    expect(sha(Buffer.concat(await chunksOf(res.body)))).toBe(sha(body));
  });

  it('cut short while drained: the drain fails, as a dropped connection', async () => {
    t.server.handle('GET', '/content/doc', ({ res }) => {
      res.writeHead(200, { 'content-length': String(10 * MiB) });
      res.write(body, () => res.destroy());
    });
    const res = await t.client.documents.download({ url: url(), name: 'd', size: LARGE });
    let bytes = 0;
    await expect(res.drain!((b) => void (bytes += b.length))).rejects.toMatchObject({ code: 'UND_ERR_SOCKET' });
    expect(bytes).toBeLessThanOrEqual(body.length);
  });

  it('cut short: the body fails, as a dropped connection (never shorter and quiet)', async () => {
    t.server.handle('GET', '/content/doc', ({ res }) => {
      res.writeHead(200, { 'content-length': String(10 * MiB) });
      res.write(body, () => res.destroy());
    });
    const res = await t.client.documents.download({ url: url(), name: 'd', size: LARGE });
    await expect(chunksOf(res.body)).rejects.toMatchObject({ code: 'UND_ERR_SOCKET' });
  });

  it('404: NotFoundError with the service\'s words', async () => {
    t.server.handle('GET', '/content/doc', ({ res }) => {
      const text = JSON.stringify({ title: 'Not Found', status: 404, detail: 'no such blob' });
      res.writeHead(404, { 'content-type': 'application/problem+json', 'content-length': String(text.length) });
      res.end(text);
    });
    await expect(t.client.documents.download({ url: url(), name: 'd', size: LARGE })).rejects.toBeInstanceOf(NotFoundError);
  });

  it('401: the token is renewed and the GET sent again, with the new one', async () => {
    const seen: string[] = [];
    t.server.handle('GET', '/content/doc', ({ req, res }) => {
      seen.push(String(req.headers.authorization));
      if (seen.length === 1) {
        res.writeHead(401, { 'content-length': '0' });
        res.end();
        return;
      }
      res.writeHead(200, { 'content-length': String(body.length) });
      res.end(body);
    });
    const res = await t.client.documents.download({ url: url(), name: 'd', size: LARGE });
    expect(sha(Buffer.concat(await chunksOf(res.body)))).toBe(sha(body));
    expect(seen).toHaveLength(2);
    expect(seen[1]).not.toBe(seen[0]);
    expect(t.server.tokenRequests).toBe(2);
  });

  it('headers that never come: a timeout, after the retries', async () => {
    let asked = 0;
    t.server.handle('GET', '/content/doc', () => {
      asked++;
    });
    const client = new FerryClient({ ...clientOptionsFor(t.server), timeoutMs: 200, retry: { maxRetries: 1, baseDelayMs: 1, maxDelayMs: 1 } });
    try {
      await expect(client.documents.download({ url: url(), name: 'd', size: LARGE })).rejects.toBeInstanceOf(TimeoutError);
      expect(asked).toBe(2);
    } finally {
      await client.close();
    }
  });
});
