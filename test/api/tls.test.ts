// TLS as users meet it: verification is always on; a private CA is trusted only when given. A big
// upload (8 MiB or more) goes by the bulk sender on a TLS connection of its own (src/api/bulk-dispatcher.ts),
// verified the same way: an unknown CA and a name the certificate does not carry are refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { tmpdir } from 'node:os';
import { FerryClient, ConnectionError } from '../../src/api/index.js';
import { AUDIENCE, CLIENT_ID, SECRET } from '../helpers/test-server.js';
import { throwawayCertificate } from '../helpers/certificates.js';

let server: Server;
let url: string;
let cert: Buffer;
/** A server whose certificate names another address (127.0.0.2) than the one it is reached at. */
let elsewhere: Server;
let elsewhereUrl: string;
let elsewhereCert: Buffer;
let elsewhereConnections = 0;
/** The content of the mid-size upload's file, and of the big one's. */
const uploaded = randomBytes(3 * 1024 * 1024 + 7);
const big = randomBytes(9 * 1024 * 1024 + 3);
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A throwaway certificate for `ip` (test/helpers/certificates.ts): its key and certificate. */
async function certificateFor(dir: string, ip: string): Promise<{ key: Buffer; cert: Buffer }> {
  const files = throwawayCertificate(dir, ip);
  return { key: await readFile(files.key), cert: await readFile(files.cert) };
}

beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-tls-'));
  const own = await certificateFor(dir, '127.0.0.1');
  cert = own.cert;
  server = createServer(own, (req, res) => {
    res.setHeader('content-type', 'application/json');
    if (req.url === '/auth/oauth/token') {
      const payload = Buffer.from(JSON.stringify({ exp: Math.floor(Date.now() / 1000) + 3600 })).toString('base64url');
      return res.end(JSON.stringify({ access_token: `e30.${payload}.sig`, token_type: 'Bearer', expires_in: 3600 }));
    }
    if (req.method === 'POST') {
      // An upload: what arrived, said back (whether it holds the file whole, and how it came).
      void req.toArray().then((chunks) => {
        const body = Buffer.concat(chunks);
        const name = body.includes(big) ? 'whole big' : body.includes(uploaded) ? 'whole' : 'not whole';
        const metadata = /name="metadataJson"\r\n\r\n(\{.*?\})\r\n/.exec(body.toString('latin1'))?.[1];
        res.end(JSON.stringify({ objectIdentifier: 'd1', name, isDirectory: false, size: body.length, contentType: String(req.headers.connection ?? 'none'), ...(metadata ? { metadata: Object.entries(JSON.parse(metadata)).map(([key, value]) => ({ key, value })) } : {}) }));
      });
      return;
    }
    res.end(JSON.stringify({ items: [{ objectIdentifier: 'p1' }], totalCount: 1 }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const other = await certificateFor(dir, '127.0.0.2');
  elsewhereCert = other.cert;
  elsewhere = createServer(other, (req, res) => {
    req.resume();
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ objectIdentifier: 'reached', name: 'reached', isDirectory: false }));
  });
  elsewhere.on('connection', () => elsewhereConnections++);
  await new Promise<void>((r) => elsewhere.listen(0, '127.0.0.1', r));
  elsewhereUrl = `https://127.0.0.1:${(elsewhere.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const s of [server, elsewhere]) {
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
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

  it('an upload from disk under 8 MiB goes through undici, on a kept-alive connection, whole', async () => {
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
  /** `big` written to a file of its own. */
  async function bigFile(): Promise<string> {
    const path = join(await mkdtemp(join(tmpdir(), 'ferry-tls-big-')), 'big.bin');
    await writeFile(path, big);
    return path;
  }

  it('a big upload from disk (8 MiB or more) goes by the bulk sender on a TLS connection of its own, whole, its sha256 after it', async () => {
    const path = await bigFile();
    const client = new FerryClient({ ...options(), ca: cert });
    try {
      const doc = await client.documents.upload('p', { path }, { documentUploadIdentifier: 'u1', metadataAfterFile: (sha256) => ({ 'ferry.sha256': sha256 }) });
      expect(doc.name).toBe('whole big');
      // The bulk sender's own connection (`connection: close`), not undici's kept-alive one.
      expect(doc.contentType).toBe('close');
      expect(doc.metadata).toEqual([{ key: 'ferry.sha256', value: sha(big) }]);
    } finally {
      await client.close();
      await rm(dirname(path), { recursive: true, force: true });
    }
  });

  /**
   * A client whose token comes from the trusted server (through undici), and whose uploads go to
   * the other: the big upload, by the bulk sender, is the only request that meets that certificate.
   */
  const towardElsewhere = (ca: Buffer[], maxRetries: number) =>
    new FerryClient({ address: { baseUrl: elsewhereUrl, settingsUrl: `${elsewhereUrl}/settings`, authUrl: `${url}/auth` }, credentials: { clientId: CLIENT_ID, clientSecret: SECRET, audience: AUDIENCE }, retry: { maxRetries }, ca });

  it('a big upload to a certificate it cannot verify (its CA not given) is refused, saying why, and not retried', async () => {
    const path = await bigFile();
    const client = towardElsewhere([cert], 2);
    const before = elsewhereConnections;
    try {
      const err = (await client.documents.upload('p', { path }, { documentUploadIdentifier: 'u1' }).catch((e: unknown) => e)) as Error;
      expect(err).toBeInstanceOf(ConnectionError);
      expect(err.message).toMatch(/SELF_SIGNED|self-signed|unable to verify/i);
      expect(err.message).not.toContain(SECRET);
      expect(elsewhereConnections - before).toBe(1);
    } finally {
      await client.close();
      await rm(dirname(path), { recursive: true, force: true });
    }
  });

  it('a big upload to a service whose certificate names another address is refused, though its CA is trusted', async () => {
    const path = await bigFile();
    const client = towardElsewhere([cert, elsewhereCert], 0);
    try {
      const err = (await client.documents.upload('p', { path }, { documentUploadIdentifier: 'u1' }).catch((e: unknown) => e)) as Error;
      expect(err).toBeInstanceOf(ConnectionError);
      expect(err.message).toMatch(/ERR_TLS_CERT_ALTNAME_INVALID|not in the cert's list|does not match/i);
    } finally {
      await client.close();
      await rm(dirname(path), { recursive: true, force: true });
    }
  });
});
