// A big upload from a file on disk over plain http is sent by the bulk sender (src/api/bulk-dispatcher.ts):
// from three reused buffers filled by synchronous reads, on a connection of its own. What it must
// keep: every byte in order with the sha256 field after them made from them, against the emulator
// and a server of the test's; an answer that comes first (a refusal; a 503, then sent again), a 100 Continue, a chunked
// answer; a file that is shorter or longer than counted; a connection cut mid-body; the file never
// left open.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readlinkSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ConnectionError, FerryClient, FerryError } from '../../src/api/index.js';
import { startService, type Service } from '../helpers/service.js';
import { clientOptionsFor, json, useTestServer } from '../helpers/test-server.js';
import { useTempDirs } from '../helpers/temp.js';

const tempDir = useTempDirs();
const MiB = 1024 * 1024;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** Descriptors this process holds open on `path`. */
function openOn(path: string): number {
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === path;
    } catch {
      return false;
    }
  }).length;
}

async function bigFile(size: number): Promise<{ path: string; content: Buffer }> {
  const content = randomBytes(size);
  const path = join(await tempDir('ferry-bulk-up-'), 'big.bin');
  await writeFile(path, content);
  return { path, content };
}

/** The upload's parts as a server reads them: each field's name and bytes (a test's own small parser). */
function formParts(body: Buffer, contentType: string): Map<string, Buffer> {
  const boundary = /boundary=(.+)$/.exec(contentType)?.[1];
  if (!boundary) throw new Error(`no boundary in ${contentType}`);
  const parts = new Map<string, Buffer>();
  const delimiter = Buffer.from(`--${boundary}`);
  let at = body.indexOf(delimiter);
  for (;;) {
    const start = at + delimiter.length;
    if (body.subarray(start, start + 2).toString() === '--') break;
    const headEnd = body.indexOf('\r\n\r\n', start);
    const name = /name="([^"]+)"/.exec(body.toString('latin1', start, headEnd))?.[1] ?? '';
    const next = body.indexOf(delimiter, headEnd);
    parts.set(name, body.subarray(headEnd + 4, next - 2));
    at = next;
  }
  return parts;
}

describe('a big upload to the emulator', () => {
  let service: Service;
  let client: FerryClient;
  beforeAll(async () => {
    service = await startService();
    client = service.client({ formOrder: 'any' });
  });
  afterAll(() => service.close());

  it('arrives whole, and the sha256 sent after the file is the content\'s', async () => {
    const { path, content } = await bigFile(5 * MiB + 3);
    const project = (await client.projects.create({ name: 'bulk upload', description: 'x' })).objectIdentifier;
    let sent = '';
    const doc = await client.documents.upload(project, { path }, {
      documentUploadIdentifier: 'a1b2c3d4-0000-4000-8000-000000000001',
      metadataAfterFile: (sha256) => {
        sent = sha256;
        return { 'ferry.sha256': sha256 };
      },
    });
    expect(sent).toBe(sha(content));
    const listed = [];
    for await (const d of client.documents.list(project, { flattenList: true })) listed.push(d);
    expect(listed.map((d) => d.objectIdentifier)).toEqual([doc.objectIdentifier]);
    expect(listed[0]?.metadata?.find((m) => m.key === 'ferry.sha256')?.value).toBe(sha(content));
    const res = await client.documents.download({ url: doc.url!, name: doc.name, size: doc.size! });
    expect(sha(Buffer.concat(await res.body.toArray()))).toBe(sha(content));
    expect(openOn(path)).toBe(0);
  });
});

describe('a big upload to a server that answers otherwise', () => {
  const t = useTestServer();
  const route = '/projects/p/documents';
  const upload = (client: FerryClient, file: { path: string; size?: number }) =>
    client.documents.upload('p', file, { documentUploadIdentifier: 'u-1', metadataAfterFile: (sha256) => ({ 'ferry.sha256': sha256 }) });
  const document = { objectIdentifier: 'd-1', name: 'big.bin', isDirectory: false };

  it('goes on a connection of its own, Content-Length exact, the file\'s bytes and then its sha256', async () => {
    const { path, content } = await bigFile(3 * MiB + 11);
    let seen: { connection?: string; length?: string; body: Buffer; type?: string } | undefined;
    t.server.handle('POST', route, async ({ req, res, body }) => {
      seen = { connection: req.headers.connection, length: req.headers['content-length'], type: req.headers['content-type'], body: await body() };
      json(res, 200, document);
    });
    await upload(t.client, { path });
    expect(seen?.connection).toBe('close');
    expect(Number(seen?.length)).toBe(seen?.body.length);
    const parts = formParts(seen!.body, seen!.type!);
    expect(sha(parts.get('file')!)).toBe(sha(content));
    expect(JSON.parse(parts.get('metadataJson')!.toString())).toEqual({ 'ferry.sha256': sha(content) });
    expect(openOn(path)).toBe(0);
  });

  it('a 100 Continue before the answer is passed over', async () => {
    const { path } = await bigFile(MiB + 1);
    t.server.handle('POST', route, async ({ res, body }) => {
      res.writeContinue();
      await body();
      json(res, 200, document);
    });
    await expect(upload(t.client, { path })).resolves.toMatchObject({ objectIdentifier: 'd-1' });
  });

  it('a chunked answer is read whole', async () => {
    const { path } = await bigFile(MiB + 1);
    t.server.handle('POST', route, async ({ res, body }) => {
      await body();
      res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
      const text = JSON.stringify({ ...document, name: 'x'.repeat(70_000) });
      res.write(text.slice(0, 40_000));
      res.end(text.slice(40_000));
    });
    await expect(upload(t.client, { path })).resolves.toMatchObject({ objectIdentifier: 'd-1', name: 'x'.repeat(70_000) });
  });

  it('an answer before the end of the body (a refusal) ends the upload with the service\'s words, the file closed', async () => {
    const { path } = await bigFile(24 * MiB);
    let received = 0;
    t.server.handle('POST', route, async ({ req, res }) => {
      req.once('data', (chunk: Buffer) => {
        received += chunk.length;
        json(res, 400, { title: 'Bad Request', status: 400, detail: 'this tenant takes no more today' });
      });
    });
    await expect(upload(t.client, { path })).rejects.toThrow(/takes no more today/);
    expect(received).toBeLessThan(24 * MiB);
    expect(openOn(path)).toBe(0);
  });

  it('a 503 given before the end of the body, the upload known not to have landed: sent again from the start, whole', async () => {
    const { path, content } = await bigFile(24 * MiB);
    const bodies: Buffer[] = [];
    t.server.handle('POST', route, async ({ req, res, seen, body }) => {
      if (seen === 0) {
        req.once('data', () => json(res, 503, { title: 'Service Unavailable', status: 503, detail: 'busy' }, { 'retry-after': '0' }));
        return;
      }
      bodies.push(await body());
      json(res, 200, document);
    });
    const client = new FerryClient({ ...clientOptionsFor(t.server), retry: { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 1 } });
    try {
      // An upload is retried only where it can be told whether the first attempt landed (it did not).
      const answer = client.documents.upload('p', { path }, { documentUploadIdentifier: 'u-1', metadataAfterFile: (sha256) => ({ 'ferry.sha256': sha256 }) }, { didItLand: async () => undefined });
      await expect(answer).resolves.toMatchObject({ objectIdentifier: 'd-1' });
    } finally {
      await client.close();
    }
    expect(bodies).toHaveLength(1);
    expect(sha(formParts(bodies[0]!, `boundary=${/^--(\S+)\r\n/.exec(bodies[0]!.toString('latin1', 0, 200))![1]}`).get('file')!)).toBe(sha(content));
    expect(openOn(path)).toBe(0);
  });

  it('a file shorter than counted: refused naming it, never sent short', async () => {
    const { path } = await bigFile(2 * MiB);
    let complete = false;
    t.server.handle('POST', route, async ({ req, res, body }) => {
      const got = await body().catch(() => Buffer.alloc(0));
      complete = got.length === Number(req.headers['content-length']);
      json(res, 200, document);
    });
    const err = await upload(t.client, { path, size: 2 * MiB + 100 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FerryError);
    expect(String((err as Error).message)).toMatch(/big\.bin shrank while it was being uploaded/);
    expect(complete).toBe(false);
    expect(openOn(path)).toBe(0);
  });

  it('a file longer than counted: refused naming it', async () => {
    const { path } = await bigFile(2 * MiB);
    t.server.handle('POST', route, async ({ res, body }) => {
      await body().catch(() => undefined);
      json(res, 200, document);
    });
    await expect(upload(t.client, { path, size: 2 * MiB - 100 })).rejects.toThrow(/big\.bin grew while it was being uploaded/);
    expect(openOn(path)).toBe(0);
  });

  it('a connection cut mid-body: the upload fails as a dropped connection, the file closed', async () => {
    const { path } = await bigFile(24 * MiB);
    t.server.handle('POST', route, async ({ req }) => {
      req.once('data', () => req.socket.destroy());
    });
    const client = new FerryClient({ ...clientOptionsFor(t.server), retry: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 } });
    try {
      await expect(upload(client, { path })).rejects.toBeInstanceOf(ConnectionError);
    } finally {
      await client.close();
    }
    expect(openOn(path)).toBe(0);
  });
});
