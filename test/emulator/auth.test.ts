import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EmulatorHandle } from '../../src/emulator/index.js';
import { Client, clientFor, expectNoContractViolations, projectOf, startTestEmulator, token } from './helpers.js';

let handle: EmulatorHandle;

beforeAll(async () => {
  handle = await startTestEmulator({ tokenTtlSeconds: 60 });
});
afterAll(() => handle.close());
afterEach(() => expectNoContractViolations(handle));

async function tokenRequest(form: Record<string, string>, contentType = 'application/x-www-form-urlencoded') {
  const res = await request(`${handle.authUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': contentType },
    body: new URLSearchParams(form).toString(),
  });
  return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
}

describe('token endpoint', () => {
  it('issues a bearer JWT for client credentials', async () => {
    const tenant = handle.tenants[0]!;
    const res = await tokenRequest({ grant_type: 'client_credentials', client_id: tenant.clientId, client_secret: tenant.clientSecret, audience: handle.audience });
    expect(res.status).toBe(200);
    expect(res.body.token_type).toBe('Bearer');
    expect(res.body.expires_in).toBe(60);
    const claims = JSON.parse(Buffer.from(String(res.body.access_token).split('.')[1]!, 'base64url').toString());
    expect(claims).toMatchObject({ tenant: tenant.name, client_id: tenant.clientId, aud: handle.audience, permissions: ['read', 'write'] });
    expect(claims.exp - claims.iat).toBe(60);
  });

  it('answers OAuth errors for bad requests and bad clients', async () => {
    const tenant = handle.tenants[0]!;
    const good = { grant_type: 'client_credentials', client_id: tenant.clientId, client_secret: tenant.clientSecret, audience: handle.audience };
    expect(await tokenRequest({ ...good, grant_type: 'password' })).toMatchObject({ status: 400, body: { error: 'unsupported_grant_type' } });
    expect(await tokenRequest({ ...good, audience: 'https://elsewhere' })).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
    const { client_secret: _omitted, ...missing } = good;
    expect(await tokenRequest(missing)).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
    expect(await tokenRequest({ ...good, client_secret: 'wrong-secret' })).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
    expect(await tokenRequest({ ...good, client_id: 'nobody' })).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
  });
});

describe('bearer tokens', () => {
  it('answers 401 ProblemDetails for missing, malformed, forged and expired tokens', async () => {
    const valid = await token(handle);
    const [header, payload] = valid.split('.');
    const forgedPayload = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), tenant: 'fabrikam' })).toString('base64url');
    for (const bearer of [undefined, 'not-a-jwt', `${header}.${forgedPayload}.${valid.split('.')[2]}`]) {
      const res = await new Client(handle.baseUrl, bearer).get('/projects');
      expect(res.status).toBe(401);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toMatchObject({ status: 401, title: 'Unauthorized' });
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    }
    const client = new Client(handle.baseUrl, valid);
    expect((await client.get('/projects')).status).toBe(200);
    handle.advanceClock(61_000);
    const expired = await client.get('/projects');
    expect(expired.status).toBe(401);
    expect(expired.body.detail).toMatch(/expired/);
  });

  it('rejects a token signed for another audience', async () => {
    const now = Math.floor(Date.now() / 1000) + 10_000_000;
    const foreign = handle.signToken({ sub: 'contoso-sync', client_id: 'contoso-sync', tenant: 'contoso', permissions: ['read'], aud: 'https://other', iat: now, exp: now + 60 });
    expect((await new Client(handle.baseUrl, foreign).get('/projects')).status).toBe(401);
  });
});

describe('permissions and tenancy', () => {
  it('refuses every write of a read-only client with 403 but lets it read', async () => {
    const reader = await clientFor(handle, 0, true);
    const project = projectOf(handle);
    expect((await reader.get('/projects')).status).toBe(200);
    const writes = [
      reader.post('/projects', { name: 'x', description: null }),
      reader.put(`/projects/${project}`, { name: 'x', description: null }),
      reader.delete(`/projects/${project}`),
      reader.post('/inference/embeddings', { input: 'hello' }),
      reader.patch('/notifications/8f0e2d8c-39a4-4e55-9b57-3d8f5c1f2a11', { isRead: true }),
      reader.upload(project, 'a.txt', 'a'),
    ];
    for (const res of await Promise.all(writes)) {
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ status: 403 });
    }
  });

  it('answers 404 with no data for another tenant’s resources', async () => {
    const fabrikam = await clientFor(handle, 1);
    const contosoProject = projectOf(handle, 0);
    for (const path of [`/projects/${contosoProject}`, `/projects/${contosoProject}/documents`, `/projects/${contosoProject}/analytics`]) {
      const res = await fabrikam.get(path);
      expect(res.status).toBe(404);
      expect(res.text).not.toContain('Contoso onboarding');
    }
    const listed = await fabrikam.get('/projects');
    expect(listed.body.items.map((p: { objectIdentifier: string }) => p.objectIdentifier)).not.toContain(contosoProject);
    const definition = handle.tenants[0]!.organizationMetadata[0]!.objectIdentifier;
    expect((await fabrikam.get(`/projects/organization-metadata/${definition}/options`)).status).toBe(404);
  });
});
