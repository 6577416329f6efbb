// TLS as users meet it: verification is always on; a private CA is trusted only when given.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { tmpdir } from 'node:os';
import { FerryClient, ConnectionError } from '../../src/api/index.js';
import { AUDIENCE, CLIENT_ID, SECRET } from '../helpers/test-server.js';

let server: Server;
let url: string;
let cert: Buffer;
/** The content of the big upload's file. */
const uploaded = randomBytes(3 * 1024 * 1024 + 7);

beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-tls-'));
  // A throwaway self-signed certificate for 127.0.0.1, made with the system's openssl.
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  cert = await readFile(join(dir, 'cert.pem'));
  server = createServer({ key: await readFile(join(dir, 'key.pem')), cert }, (req, res) => {
    res.setHeader('content-type', 'application/json');
    if (req.url === '/auth/oauth/token') {
      const payload = Buffer.from(JSON.stringify({ exp: Math.floor(Date.now() / 1000) + 3600 })).toString('base64url');
      return res.end(JSON.stringify({ access_token: `e30.${payload}.sig`, token_type: 'Bearer', expires_in: 3600 }));
    }
    if (req.method === 'POST') {
      // An upload: what arrived, said back (whether it holds the file whole, and how it came).
      void req.toArray().then((chunks) => {
        const body = Buffer.concat(chunks);
        res.end(JSON.stringify({ objectIdentifier: 'd1', name: body.includes(uploaded) ? 'whole' : 'not whole', isDirectory: false, size: body.length, contentType: String(req.headers.connection ?? 'none') }));
      });
      return;
    }
    res.end(JSON.stringify({ items: [{ objectIdentifier: 'p1' }], totalCount: 1 }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

const options = () => ({
  address: { baseUrl: url, settingsUrl: `${url}/settings`, authUrl: `${url}/auth` },
  credentials: { clientId: CLIENT_ID, clientSecret: SECRET, audience: AUDIENCE },
  retry: { maxRetries: 0 },
});

describe('TLS', () => {
  it('refuses a certificate it cannot verify, saying why', async () => {
    const client = new FerryClient(options());
    const err = (await client.projects.list().page(1).catch((e: unknown) => e)) as ConnectionError;
    await client.close();
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err.message).toMatch(/SELF_SIGNED|self-signed|unable to verify/i);
    expect(err.message).not.toContain(SECRET);
  });

  it('trusts a private CA given with the ca option', async () => {
    const client = new FerryClient({ ...options(), ca: cert });
    const page = await client.projects.list().page(1);
    await client.close();
    expect(page.items).toEqual([{ objectIdentifier: 'p1' }]);
  });

  it('a big upload from disk goes through undici (the bulk sender speaks plain http only), whole', async () => {
    const path = join(await mkdtemp(join(tmpdir(), 'ferry-tls-up-')), 'big.bin');
    await writeFile(path, uploaded);
    const client = new FerryClient({ ...options(), ca: cert });
    try {
      const doc = await client.documents.upload('p', { path }, { documentUploadIdentifier: 'u1' });
      expect(doc.name).toBe('whole');
      // undici's own connection, kept alive: not the bulk sender's (`connection: close`).
      expect(doc.contentType).toBe('keep-alive');
      expect(doc.size).toBeGreaterThan(uploaded.length);
    } finally {
      await client.close();
      await rm(dirname(path), { recursive: true, force: true });
    }
  });
});
