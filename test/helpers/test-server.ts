// A small purpose-built HTTP server for the client's transport tests: it issues tokens and lets
// each test script the answers, so retries, 401s and paging can be provoked on real loopback HTTP.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createHmac } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach } from 'vitest';
import { FerryClient } from '../../src/api/index.js';

export interface Handled {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  /** How many requests with this method and path came before this one. */
  seen: number;
  body(): Promise<Buffer>;
}

export type Handler = (h: Handled) => void | Promise<void>;

export interface TestServer {
  url: string;
  /** Token requests received. */
  tokenRequests: number;
  /** Every access token issued, so tests can look for them in logs. */
  issued: string[];
  /** Tokens the server no longer accepts (answers 401). */
  revoked: Set<string>;
  /** Requests per "METHOD /path". */
  hits: Map<string, number>;
  /** Lifetime of the next tokens, seconds, relative to `clock()`. */
  tokenLifetimeSeconds: number;
  clock: () => number;
  /** Route `METHOD path`; a path ending in `/*` matches any path below it. */
  handle(method: string, path: string, handler: Handler): void;
  close(): Promise<void>;
}

export const SECRET = 's3cr3t-client-secret-value';
export const CLIENT_ID = 'test-client';
export const AUDIENCE = 'https://api.example.test/v2';

export async function startTestServer(): Promise<TestServer> {
  const routes = new Map<string, Handler>();
  const state: TestServer = {
    url: '',
    tokenRequests: 0,
    issued: [],
    revoked: new Set(),
    hits: new Map(),
    tokenLifetimeSeconds: 3600,
    clock: Date.now,
    handle(method, path, handler) {
      routes.set(`${method} ${path}`, handler);
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const key = `${req.method} ${url.pathname}`;
    const seen = state.hits.get(key) ?? 0;
    state.hits.set(key, seen + 1);
    const body = async () => Buffer.concat(await req.toArray());

    if (key === 'POST /auth/oauth/token') {
      state.tokenRequests++;
      const form = new URLSearchParams((await body()).toString());
      if (form.get('client_secret') !== SECRET || form.get('client_id') !== CLIENT_ID) {
        return json(res, 401, { error: 'invalid_client', error_description: 'unknown client or wrong secret' });
      }
      const token = issueToken(state.clock(), state.tokenLifetimeSeconds, state.issued.length);
      state.issued.push(token);
      return json(res, 200, { access_token: token, token_type: 'Bearer', expires_in: state.tokenLifetimeSeconds });
    }

    const auth = req.headers.authorization ?? '';
    const token = auth.replace(/^Bearer /, '');
    if (!state.issued.includes(token) || state.revoked.has(token)) {
      return json(res, 401, { title: 'Unauthorized', status: 401, detail: 'token missing, unknown or revoked' });
    }
    const handler = routes.get(key) ?? [...routes].find(([k]) => k.endsWith('/*') && key.startsWith(k.slice(0, -1)))?.[1];
    if (!handler) return json(res, 404, { title: 'Not Found', status: 404, detail: `no route ${key}` });
    await handler({ req, res, url, seen, body });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  state.url = `http://127.0.0.1:${port}`;
  return state;
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

function issueToken(now: number, lifetimeSeconds: number, serial: number): string {
  const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const iat = Math.floor(now / 1000);
  const head = enc({ alg: 'HS256', typ: 'JWT' });
  const payload = enc({ iat, exp: iat + lifetimeSeconds, jti: serial, permissions: ['read', 'write'] });
  const sig = createHmac('sha256', 'test-key').update(`${head}.${payload}`).digest('base64url');
  return `${head}.${payload}.${sig}`;
}

/** Client options pointing at a test server. */
export function clientOptionsFor(server: TestServer) {
  return {
    address: { baseUrl: server.url, settingsUrl: `${server.url}/settings`, authUrl: `${server.url}/auth` },
    credentials: { clientId: CLIENT_ID, clientSecret: SECRET, audience: AUDIENCE },
  };
}

/** A fresh test server and a client of it for each test of the calling file (or describe block). */
export function useTestServer(): { readonly server: TestServer; readonly client: FerryClient } {
  let server: TestServer | undefined;
  let client: FerryClient | undefined;
  beforeEach(async () => {
    server = await startTestServer();
    client = new FerryClient(clientOptionsFor(server));
  });
  afterEach(async () => {
    await client?.close();
    await server?.close();
  });
  return {
    get server() {
      if (!server) throw new Error('useTestServer: the server exists only inside a test');
      return server;
    },
    get client() {
      if (!client) throw new Error('useTestServer: the client exists only inside a test');
      return client;
    },
  };
}

export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}
