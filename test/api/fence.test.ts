// A write's fence (CallOptions.fence): asked as undici hands the request to its socket, after
// everything the request waited for (a connection, a paused process), and before each block of a
// large body while more is to come. Closed at the socket, the request is never written; closed
// mid-body, the body is cut short and the service gets no whole request. Either way the attempt
// goes back through beforeSend, which decides again (src/api/transport.ts).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { FerryClient } from '../../src/api/index.js';
import { clientOptionsFor, json, startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer;
let client: FerryClient;
let received = 0;

beforeEach(async () => {
  received = 0;
  server = await startTestServer();
  server.handle('POST', '/write', ({ res }) => {
    received++;
    json(res, 200, { ok: true });
  });
  client = new FerryClient(clientOptionsFor(server));
});
afterEach(async () => {
  await client.close();
  await server.close();
});

describe('the fence of a write', () => {
  it('closed when the request reaches its socket: nothing is written, beforeSend decides again, the next attempt goes', async () => {
    let fenceAsked = 0;
    let beforeSendAsked = 0;
    const answer = await client.request(
      { method: 'POST', path: '/write', json: { x: 1 } },
      { beforeSend: async () => void beforeSendAsked++, fence: () => ++fenceAsked > 2 },
    );
    expect(answer).toEqual({ ok: true });
    expect(fenceAsked).toBe(3);
    expect(beforeSendAsked).toBe(3);
    expect(received).toBe(1);
  });

  it('a big upload from disk (the bulk sender, bulk-dispatcher.ts): closed, not a byte of it is written; open, it goes whole once', async () => {
    const content = randomBytes(2 * 1024 * 1024 + 9);
    const path = join(await mkdtemp(join(tmpdir(), 'ferry-fence-')), 'big.bin');
    await writeFile(path, content);
    const bodies: { connection: string | undefined; body: Buffer }[] = [];
    server.handle('POST', '/projects/p/documents', async ({ req, res, body }) => {
      bodies.push({ connection: req.headers.connection, body: await body() });
      json(res, 200, { objectIdentifier: 'd1', name: 'big.bin', isDirectory: false });
    });
    let fenceAsked = 0;
    try {
      await client.documents.upload('p', { path }, { documentUploadIdentifier: 'u1' }, { fence: () => ++fenceAsked > 2 });
    } finally {
      await rm(dirname(path), { recursive: true, force: true });
    }
    // Closed twice at the socket, then open there and before each block while bytes remained.
    expect(fenceAsked).toBeGreaterThan(3);
    expect(bodies).toHaveLength(1);
    expect(bodies[0]?.connection).toBe('close');
    expect(bodies[0]?.body.includes(content)).toBe(true);
  });

  it('what beforeSend throws when asked again ends the write unsent (a lease found lost)', async () => {
    class Lost extends Error {}
    let asked = 0;
    const err = await client
      .request({ method: 'POST', path: '/write', json: {} }, { beforeSend: async () => { if (++asked > 1) throw new Lost('lost'); }, fence: () => false })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Lost);
    expect(received).toBe(0);
  });

  it('a fence that never opens gives up after a few tries, unsent', async () => {
    const err = (await client.request({ method: 'POST', path: '/write', json: {} }, { fence: () => false }).catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(/was not sent: the run could not confirm it may still write/);
    expect(received).toBe(0);
  });
  for (const how of ['from disk, by the bulk sender', 'from a stream'] as const) {
    it(`closed in the middle of a big body ${how} (a process continued past its lease): the body is cut short, no whole request reaches the service`, async () => {
      const content = randomBytes(4 * 1024 * 1024);
      const dir = await mkdtemp(join(tmpdir(), 'ferry-fence-'));
      const path = join(dir, 'big.bin');
      await writeFile(path, content);
      let reached = 0;
      const whole: number[] = [];
      server.handle('POST', '/projects/p/documents', async ({ req, res, body }) => {
        reached++;
        const got = await body().catch(() => undefined);
        if (got?.length === Number(req.headers['content-length'])) whole.push(got.length);
        json(res, 200, { objectIdentifier: 'd1', name: 'big.bin', isDirectory: false });
      });
      const chunks = Array.from({ length: 64 }, (_, i) => content.subarray(i * 65_536, (i + 1) * 65_536));
      const file = how === 'from a stream' ? { open: () => Readable.from(chunks), size: content.length, filename: 'big.bin' } : { path };
      // Open at the socket and for the first two blocks, closed from then on.
      let asked = 0;
      try {
        const err = (await client.documents.upload('p', file, { documentUploadIdentifier: 'u1' }, { fence: () => ++asked <= 3 }).catch((e: unknown) => e)) as Error;
        expect(err).toBeInstanceOf(Error);
        expect(err.message).toMatch(/was not sent: the run could not confirm it may still write/);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
      expect(reached).toBeLessThanOrEqual(1);
      expect(whole).toEqual([]);
    });
  }
});
