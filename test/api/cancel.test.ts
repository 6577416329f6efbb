import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import { FerryClient, AbortedError, TimeoutError } from '../../src/api/index.js';
import { clientOptionsFor, json, startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer;
let client: FerryClient;

beforeEach(async () => {
  server = await startTestServer();
  // The server below never answers /slow.
  server.handle('GET', '/slow', () => undefined);
});
afterEach(async () => {
  await client.close();
  await server.close();
});

describe('timeouts and cancellation', () => {
  it('ends a call that gets no answer with a request TimeoutError', async () => {
    client = new FerryClient({ ...clientOptionsFor(server), timeoutMs: 100, retry: { maxRetries: 0 } });
    const err = (await client.request({ method: 'GET', path: '/slow' }).catch((e: unknown) => e)) as TimeoutError;
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err.kind).toBe('request');
    expect(err.message).toContain('timed out after 100 ms');
  });

  it('ends a call at its overall deadline however many attempts remain', async () => {
    client = new FerryClient({ ...clientOptionsFor(server), timeoutMs: 60_000, deadlineMs: 150 });
    const err = (await client.request({ method: 'GET', path: '/slow' }).catch((e: unknown) => e)) as TimeoutError;
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err.kind).toBe('deadline');
  });

  it('stops at once when the caller aborts, also while waiting to retry', async () => {
    client = new FerryClient({ ...clientOptionsFor(server), retry: { baseDelayMs: 60_000, maxDelayMs: 60_000 }, random: () => 1 });
    server.handle('GET', '/busy', ({ res }) => json(res, 503, {}));
    const controller = new AbortController();
    const pending = client.request({ method: 'GET', path: '/busy' }, { signal: controller.signal });
    // Abort once the first answer has arrived and the client is sleeping before its retry.
    while ((server.hits.get('GET /busy') ?? 0) === 0) await new Promise((r) => setImmediate(r));
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(AbortedError);
    expect(server.hits.get('GET /busy')).toBe(1);
  });
});

describe('downloads', () => {
  it('streams document content and sends the token only to the service own hosts', async () => {
    client = new FerryClient(clientOptionsFor(server));
    let authSeen: string | undefined = 'unset';
    // Another host: whatever it is, it must not receive our bearer token.
    const foreign = createServer((req, res) => {
      authSeen = req.headers.authorization;
      res.end('foreign bytes');
    });
    await new Promise<void>((r) => foreign.listen(0, '127.0.0.1', r));
    const port = (foreign.address() as { port: number }).port;
    server.handle('GET', '/projects/p/documents/d/content', ({ res }) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end('own bytes');
    });

    const own = await client.documents.download({ name: 'a', url: `${server.url}/projects/p/documents/d/content` });
    expect((await own.body.toArray()).join('')).toBe('own bytes');
    const away = await client.documents.download({ name: 'b', url: `http://127.0.0.1:${port}/x` });
    expect((await away.body.toArray()).join('')).toBe('foreign bytes');
    expect(authSeen).toBeUndefined();

    await new Promise<void>((r) => foreign.close(() => r()));
  });
});
