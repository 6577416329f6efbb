import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { AUDIENCE, CLIENT_ID, SECRET, json, startTestServer, type TestServer } from '../helpers/test-server.js';

const bin = fileURLToPath(new URL('../../bin/ferry.js', import.meta.url));

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

function ferry(args: string[], env: Record<string, string> = {}): Promise<Result> {
  return new Promise((resolve, reject) => {
    // A clean environment: nothing of the developer's own profile leaks in.
    const child = spawn(process.execPath, [bin, ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent', FERRY_LOG_LEVEL: 'silent', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

let server: TestServer;
let env: Record<string, string>;

beforeEach(async () => {
  server = await startTestServer();
  env = {
    FERRY_BASE_URL: server.url,
    FERRY_SETTINGS_URL: `${server.url}/settings`,
    FERRY_AUTH_URL: `${server.url}/auth`,
    FERRY_AUDIENCE: AUDIENCE,
    FERRY_CLIENT_ID: CLIENT_ID,
    FERRY_CLIENT_SECRET: SECRET,
  };
});
afterEach(() => server.close());

describe('ferry', () => {
  it('prints help listing its commands', async () => {
    const r = await ferry(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('api');
    expect(r.stdout).toContain('doctor');
  });

  it('exits 2 with a usage error for an unknown command', async () => {
    const r = await ferry(['frobnicate']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown command 'frobnicate'");
  });
});

describe('ferry api', () => {
  it('prints every item of a paged list with --paginate', async () => {
    const all = Array.from({ length: 7 }, (_, i) => ({ objectIdentifier: `p${i}` }));
    server.handle('GET', '/projects', ({ res, url }) => {
      const page = Number(url.searchParams.get('pageNumber'));
      const size = Number(url.searchParams.get('pageSize'));
      expect(url.searchParams.get('searchText')).toBe('q');
      json(res, 200, { items: all.slice((page - 1) * size, page * size), totalCount: all.length });
    });
    const r = await ferry(['api', 'GET', '/projects?searchText=q', '--paginate', '--page-size', '3'], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(all);
    expect(server.hits.get('GET /projects')).toBe(3);
  });

  it('sends -f and -F fields as a JSON body on POST', async () => {
    let body: unknown;
    server.handle('POST', '/playbooks', async ({ res, body: read }) => {
      body = JSON.parse((await read()).toString());
      json(res, 201, { objectIdentifier: 'pb1' });
    });
    const r = await ferry(['api', 'POST', '/playbooks', '-f', 'name=Contracts', '-F', 'isPrivate=false', '-F', 'organizationWide=true'], env);
    expect(r.code).toBe(0);
    expect(body).toEqual({ name: 'Contracts', isPrivate: false, organizationWide: true });
    expect(JSON.parse(r.stdout)).toEqual({ objectIdentifier: 'pb1' });
  });

  it('sends /models calls to the settings host and -F fields to the query on GET', async () => {
    server.handle('GET', '/settings/models', ({ res, url }) => json(res, 200, [{ name: 'm', includeDisabled: url.searchParams.get('includeDisabled') }]));
    const r = await ferry(['api', 'get', '/models', '-F', 'includeDisabled=true'], env);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([{ name: 'm', includeDisabled: 'true' }]);
  });

  it('prints the service error and exits 1', async () => {
    server.handle('GET', '/projects/nope', ({ res }) => json(res, 404, { title: 'Not Found', status: 404, detail: 'no such project' }));
    const r = await ferry(['api', 'GET', '/projects/nope'], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('GET /projects/nope answered 404: no such project');
  });

  it('exits 2 naming what is missing when no credentials are configured', async () => {
    const r = await ferry(['api', 'GET', '/projects'], { FERRY_BASE_URL: server.url, FERRY_SETTINGS_URL: server.url, FERRY_AUTH_URL: server.url });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/missing client id .*audience .*client secret/);
  });

  it('names a misspelt flag even when it leaves a required one missing, with the flag it was closest to, in a few lines, not the whole help', async () => {
    for (const argv of [['mirror', '/tmp', '--projct', 'x'], ['lock', 'status', '--projct', 'x']]) {
      const r = await ferry(argv, env);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.stderr).toContain("error: unknown option '--projct'");
      expect(r.stderr).toContain('(Did you mean --project?)');
      expect(r.stderr).not.toContain('not specified');
      expect(r.stderr).not.toMatch(/Usage:/);
      expect(r.stderr.trim().split('\n').length).toBeLessThanOrEqual(3);
    }
    // A required flag that is truly missing is still said as such, with the one-line pointer.
    const missing = await ferry(['mirror', '/tmp'], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe("error: required option '--project <id>' not specified\n(add --help to see every flag)\n");
  });

  it('has no flag that takes a secret', async () => {
    const r = await ferry(['api', 'GET', '/projects', '--client-secret', 'x'], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown option '--client-secret'");
  });
});

describe('ferry doctor', () => {
  const healthy = () => {
    server.handle('GET', '/projects', ({ res }) => json(res, 200, { items: [], totalCount: 4 }));
    server.handle('GET', '/settings/models', ({ res }) => json(res, 200, [{ name: 'a' }, { name: 'b' }]));
  };

  it('passes a working profile and reports token expiry and write permission', async () => {
    healthy();
    server.handle('PATCH', '/notifications/*', ({ res }) => json(res, 404, { title: 'Not Found' }));
    const r = await ferry(['doctor'], env);
    expect(r.stdout).toContain('verdict: ready');
    expect(r.stdout).toMatch(/\[ ok \] token: obtained; expires/);
    expect(r.stdout).toContain('4 project(s) visible');
    expect(r.stdout).toContain('2 model(s)');
    expect(r.stdout).toMatch(/\[ ok \] write permission: granted/);
    expect(r.code).toBe(0);
  });

  it('warns when the application can read but not write', async () => {
    healthy();
    server.handle('PATCH', '/notifications/*', ({ res }) => json(res, 403, { title: 'Forbidden' }));
    const r = await ferry(['doctor', '--json'], env);
    const report = JSON.parse(r.stdout);
    expect(report.checks.find((c: { name: string }) => c.name === 'write permission')).toMatchObject({ ok: true, warning: true });
    expect(report.checks.find((c: { name: string }) => c.name === 'write permission').detail).toContain('MISSING');
  });

  it('fails with exit 1 when the token cannot be obtained, without printing the secret', async () => {
    const r = await ferry(['doctor'], { ...env, FERRY_CLIENT_SECRET: 'definitely-wrong-secret' });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/\[FAIL\] token: .*invalid_client/);
    expect(r.stdout + r.stderr).not.toContain('definitely-wrong-secret');
  });
});
