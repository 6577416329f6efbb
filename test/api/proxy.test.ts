// HTTP(S)_PROXY and NO_PROXY as users set them: calls go through the proxy unless excluded.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { FerryClient } from '../../src/api/index.js';
import { clientOptionsFor, json, startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer;
let proxy: Server;
let proxied: string[];
const saved = { HTTP_PROXY: process.env.HTTP_PROXY, NO_PROXY: process.env.NO_PROXY };

beforeEach(async () => {
  server = await startTestServer();
  server.handle('GET', '/projects', ({ res }) => json(res, 200, { items: [], totalCount: 0 }));
  proxied = [];
  // A forward proxy: CONNECT tunnels (what undici's proxy agent opens) and absolute-URL requests.
  proxy = createServer((req, res) => {
    proxied.push(`${req.method} ${req.url}`);
    const upstream = httpRequest(req.url as string, { method: req.method, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    req.pipe(upstream);
  });
  proxy.on('connect', (req, clientSocket, head) => {
    proxied.push(`CONNECT ${req.url}`);
    const [host, port] = String(req.url).split(':');
    const upstream = connect(Number(port), host, () => {
      clientSocket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(clientSocket);
      clientSocket.pipe(upstream);
    });
    upstream.on('error', () => clientSocket.destroy());
    clientSocket.on('error', () => upstream.destroy());
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
});
afterEach(async () => {
  process.env.HTTP_PROXY = saved.HTTP_PROXY;
  process.env.NO_PROXY = saved.NO_PROXY;
  if (saved.HTTP_PROXY === undefined) delete process.env.HTTP_PROXY;
  if (saved.NO_PROXY === undefined) delete process.env.NO_PROXY;
  proxy.closeAllConnections();
  await new Promise<void>((r) => proxy.close(() => r()));
  await server.close();
});

describe('proxies', () => {
  it('sends every call, the token request included, through HTTP_PROXY', async () => {
    process.env.HTTP_PROXY = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    delete process.env.NO_PROXY;
    const client = new FerryClient(clientOptionsFor(server));
    await client.projects.list().page(1);
    await client.close();
    // Whichever way the agent talks to the proxy, every connection to the service went through it.
    const target = new URL(server.url).host;
    expect(proxied.length).toBeGreaterThan(0);
    for (const line of proxied) expect([`CONNECT ${target}`, `POST ${server.url}/auth/oauth/token`, `GET ${server.url}/projects?pageNumber=1&pageSize=100`]).toContain(line);
    expect(server.tokenRequests).toBe(1);
    expect(server.hits.get('GET /projects')).toBe(1);
  });

  it('goes direct for hosts in NO_PROXY', async () => {
    process.env.HTTP_PROXY = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    process.env.NO_PROXY = '127.0.0.1';
    const client = new FerryClient(clientOptionsFor(server));
    await client.projects.list().page(1);
    await client.close();
    expect(proxied).toEqual([]);
    expect(server.hits.get('GET /projects')).toBe(1);
  });
});
