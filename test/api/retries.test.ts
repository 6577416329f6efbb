import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Readable } from 'node:stream';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import {
  FerryClient,
  ConnectionError,
  NotFoundError,
  RateLimitError,
  ServerError,
  BadRequestError,
  type Document,
} from '../../src/api/index.js';
import type { RetryInfo } from '../../src/api/transport.js';
import { SMALL_BODY } from '../../src/api/multipart.js';
import { clientOptionsFor, json, startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer;
let client: FerryClient;
let retries: RetryInfo[];

const UPLOAD = '/projects/p1/documents';
const doc = { name: 'a.txt', documentUploadObjectIdentifier: 'u1', objectIdentifier: 'd1' };

beforeEach(async () => {
  server = await startTestServer();
  retries = [];
  client = new FerryClient({
    ...clientOptionsFor(server),
    retry: { maxRetries: 4, baseDelayMs: 10, maxDelayMs: 40, maxRetryAfterMs: 5_000 },
    onRetry: (i) => retries.push(i),
  });
});
afterEach(async () => {
  await client.close();
  await server.close();
});

const upload = (opts = {}) =>
  client.documents.upload('p1', { stream: Readable.from([Buffer.from('hello')]), size: 5, filename: 'a.txt' }, { documentUploadIdentifier: 'u1' }, opts);
const uploadFromPath = async (opts = {}) => {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-retry-'));
  await writeFile(join(dir, 'a.txt'), 'hello');
  return client.documents.upload('p1', { path: join(dir, 'a.txt') }, { documentUploadIdentifier: 'u1' }, opts);
};

describe('retries', () => {
  it('retries a lone refusal amid answers after the ordinary backoff, not its Retry-After', async () => {
    server.handle('GET', '/projects', ({ res, seen }) =>
      seen === 0 ? json(res, 429, { title: 'slow down' }, { 'retry-after': '1' }) : json(res, 200, { items: [], totalCount: 0 }),
    );
    await client.projects.list().page(1);
    expect(retries).toHaveLength(1);
    expect(retries[0]).toMatchObject({ status: 429, serverAsked: false });
    // Full jitter under the first backoff ceiling of a refusal (2.5 x 10 ms here), far from the second asked for.
    expect(retries[0]!.delayMs).toBeLessThanOrEqual(25);
  });

  // Four refusals in a row read as an outage: from the fourth on, the wait is the one asked for.
  const refusedFourTimes = (status: number, retryAfter: () => string) =>
    server.handle('GET', '/projects', ({ res, seen }) =>
      seen < 4 ? json(res, status, { title: 'not now' }, { 'retry-after': retryAfter() }) : json(res, 200, { items: [], totalCount: 0 }),
    );

  it('honours Retry-After in seconds once refusals persist', async () => {
    refusedFourTimes(429, () => '1');
    await client.projects.list().page(1);
    expect(retries.map((r) => r.serverAsked)).toEqual([false, false, false, true]);
    expect(retries[3]).toMatchObject({ status: 429, delayMs: 1000 });
  });

  it('honours Retry-After given as an HTTP date', async () => {
    refusedFourTimes(503, () => new Date(Date.now() + 2_000).toUTCString());
    await client.projects.list().page(1);
    expect(retries[3]!.serverAsked).toBe(true);
    expect(retries[3]!.delayMs).toBeGreaterThan(0);
    expect(retries[3]!.delayMs).toBeLessThanOrEqual(2_000);
  });

  it('caps a Retry-After longer than the configured maximum', async () => {
    refusedFourTimes(429, () => '3600');
    const quick = new FerryClient({ ...clientOptionsFor(server), retry: { maxRetries: 4, baseDelayMs: 10, maxDelayMs: 40, maxRetryAfterMs: 50 }, onRetry: (i) => retries.push(i) });
    await quick.projects.list().page(1);
    await quick.close();
    expect(retries[3]!.delayMs).toBe(50);
  });

  it('bounds the backoff and the number of attempts, then throws the last error', async () => {
    server.handle('GET', '/projects', ({ res }) => json(res, 503, { title: 'Service Unavailable', status: 503 }));
    const err = await client.projects.list().page(1).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServerError);
    expect(server.hits.get('GET /projects')).toBe(5);
    expect(retries.map((r) => r.attempt)).toEqual([0, 1, 2, 3]);
    for (const r of retries) expect(r.delayMs).toBeLessThanOrEqual(40);
  });

  it('retries idempotent calls after a connection reset', async () => {
    server.handle('GET', '/projects', ({ res, seen }) => (seen === 0 ? res.socket?.destroy() : json(res, 200, { items: [], totalCount: 0 })));
    await client.projects.list().page(1);
    expect(server.hits.get('GET /projects')).toBe(2);
    expect(retries[0]!.code).toBeDefined();
  });

  it('does not repeat a non-idempotent POST after a 503', async () => {
    server.handle('POST', UPLOAD, async ({ res, body }) => {
      await body();
      json(res, 503, { title: 'Service Unavailable' });
    });
    const err = await uploadFromPath().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServerError);
    expect(server.hits.get(`POST ${UPLOAD}`)).toBe(1);
  });

  it('does not repeat a non-idempotent POST whose connection dropped after the server read it', async () => {
    server.handle('POST', UPLOAD, async ({ res, body }) => {
      await body();
      res.socket?.destroy();
    });
    const err = (await uploadFromPath().catch((e: unknown) => e)) as ConnectionError;
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err.maybeDelivered).toBe(true);
    expect(server.hits.get(`POST ${UPLOAD}`)).toBe(1);
  });

  it('asks didItLand after an ambiguous failure and returns what landed instead of posting again', async () => {
    server.handle('POST', UPLOAD, async ({ res, body }) => {
      await body();
      res.socket?.destroy();
    });
    let asked = 0;
    const result = await uploadFromPath({
      didItLand: async () => {
        asked++;
        return doc as Document;
      },
    });
    expect(result).toEqual(doc);
    expect(asked).toBe(1);
    expect(server.hits.get(`POST ${UPLOAD}`)).toBe(1);
  });

  it('posts again when didItLand says the first attempt did not land', async () => {
    server.handle('POST', UPLOAD, async ({ res, body, seen }) => {
      await body();
      if (seen === 0) json(res, 502, {});
      else json(res, 200, doc);
    });
    const result = await uploadFromPath({ didItLand: async () => undefined });
    expect(result).toEqual(doc);
    expect(server.hits.get(`POST ${UPLOAD}`)).toBe(2);
  });

  it('retries a POST refused with 429, since the service did no work', async () => {
    server.handle('POST', UPLOAD, async ({ res, body, seen }) => {
      await body();
      if (seen === 0) json(res, 429, {}, { 'retry-after': '0' });
      else json(res, 200, doc);
    });
    await expect(uploadFromPath()).resolves.toEqual(doc);
    expect(server.hits.get(`POST ${UPLOAD}`)).toBe(2);
  });

  it('never sends a large one-shot stream body twice', async () => {
    server.handle('POST', UPLOAD, async ({ res, body }) => {
      await body();
      json(res, 429, {}, { 'retry-after': '0' });
    });
    const big = Buffer.alloc(SMALL_BODY + 1, 'b');
    const err = await client.documents
      .upload('p1', { stream: Readable.from([big]), size: big.length, filename: 'big.bin' }, { documentUploadIdentifier: 'u1' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitError);
    expect(server.hits.get(`POST ${UPLOAD}`)).toBe(1);
  });

  it('can send a small one-shot stream body again, since it was read whole', async () => {
    server.handle('POST', UPLOAD, async ({ res, body, seen }) => {
      await body();
      if (seen === 0) json(res, 429, {}, { 'retry-after': '0' });
      else json(res, 200, doc);
    });
    await expect(upload()).resolves.toEqual(doc);
    expect(server.hits.get(`POST ${UPLOAD}`)).toBe(2);
  });
});

describe('errors', () => {
  it('maps statuses to error kinds carrying the ProblemDetails and request id', async () => {
    server.handle('GET', '/projects/nope', ({ res }) =>
      json(res, 404, { type: 'about:blank', title: 'Not Found', status: 404, detail: 'project nope does not exist' }, { 'x-request-id': 'req-42' }),
    );
    const err = (await client.projects.get('nope').catch((e: unknown) => e)) as NotFoundError;
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err.status).toBe(404);
    expect(err.method).toBe('GET');
    expect(err.path).toBe('/projects/nope');
    expect(err.problem?.detail).toBe('project nope does not exist');
    expect(err.requestId).toBe('req-42');
    expect(err.message).toContain('GET /projects/nope answered 404: project nope does not exist');
  });

  it('keeps a non-JSON error body as text', async () => {
    server.handle('POST', '/projects', ({ res }) => {
      res.writeHead(400, { 'content-type': 'text/plain' });
      res.end('name is required');
    });
    const err = (await client.projects.create({ name: null, description: null } as never).catch((e: unknown) => e)) as BadRequestError;
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err.body).toBe('name is required');
  });

  it('reports a refused connection as a ConnectionError that was not delivered', async () => {
    const url = server.url;
    await server.close();
    const offline = new FerryClient({
      address: { baseUrl: url, settingsUrl: url, authUrl: url },
      credentials: { clientId: 'c', clientSecret: 's', audience: 'a' },
      retry: { maxRetries: 1, baseDelayMs: 1 },
    });
    const err = (await offline.projects.list().page(1).catch((e: unknown) => e)) as ConnectionError;
    await offline.close();
    server = await startTestServer();
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err.message).toContain('ECONNREFUSED');
  });
});
