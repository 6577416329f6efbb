import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FerryClient, AuthenticationError } from '../../src/api/index.js';
import { clientOptionsFor, json, startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer;
let client: FerryClient;
let now: number;

beforeEach(async () => {
  server = await startTestServer();
  now = Date.now();
  server.clock = () => now;
  client = new FerryClient({ ...clientOptionsFor(server), now: () => now, retry: { baseDelayMs: 1 } });
  server.handle('GET', '/projects', ({ res }) => json(res, 200, { items: [], totalCount: 0 }));
});
afterEach(async () => {
  await client.close();
  await server.close();
});

const fifty = () => Promise.all(Array.from({ length: 50 }, () => client.projects.list().page(1)));

describe('access tokens', () => {
  it('fetches one token for 50 concurrent calls and reuses it', async () => {
    await fifty();
    expect(server.tokenRequests).toBe(1);
    expect(server.hits.get('GET /projects')).toBe(50);
    await fifty();
    expect(server.tokenRequests).toBe(1);
  });

  it('renews once, ahead of expiry, when 50 calls find the token about to expire', async () => {
    server.tokenLifetimeSeconds = 600;
    await fifty();
    expect(server.tokenRequests).toBe(1);
    // 30 s before expiry is inside the renewal window (a tenth of a 10-minute life, at most 60 s).
    now += 570_000;
    await fifty();
    expect(server.tokenRequests).toBe(2);
    await fifty();
    expect(server.tokenRequests).toBe(2);
  });

  it('reads the lifetime from the exp claim, not expires_in', async () => {
    server.tokenLifetimeSeconds = 120;
    const token = await client.transport.tokens.token();
    const claims = JSON.parse(Buffer.from(token.value.split('.')[1]!, 'base64url').toString());
    expect(token.expiresAt).toBe(claims.exp * 1000);
    expect(token.issuedAt).toBe(claims.iat * 1000);
  });

  it('on a 401 refreshes the token once and retries the call', async () => {
    await client.projects.list().page(1);
    server.revoked.add(server.issued[0]!);
    await client.projects.list().page(1);
    expect(server.tokenRequests).toBe(2);
    expect(server.hits.get('GET /projects')).toBe(3);
  });

  it('gives up after one refresh when the service keeps answering 401', async () => {
    server.handle('GET', '/projects', ({ res }) => json(res, 401, { title: 'Unauthorized', status: 401 }));
    const err = await client.projects.list().page(1).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AuthenticationError);
    expect(server.tokenRequests).toBe(2);
    expect(server.hits.get('GET /projects')).toBe(2);
  });

  it('names the client, not the secret, when the auth server refuses the credentials', async () => {
    const bad = new FerryClient({
      ...clientOptionsFor(server),
      credentials: { clientId: 'test-client', clientSecret: 'wrong-secret-123', audience: 'x' },
    });
    const err = (await bad.projects.list().page(1).catch((e: unknown) => e)) as Error;
    await bad.close();
    expect(err).toBeInstanceOf(AuthenticationError);
    expect(err.message).toContain('invalid_client');
    expect(err.message).not.toContain('wrong-secret-123');
  });
});
