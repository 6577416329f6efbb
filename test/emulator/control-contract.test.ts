// docs/emulator-control.openapi.yaml holds the control API: every operation it lists is served,
// every control route served is in it, and every response (success, 400, 401, 403, 404, 409) is
// held to it (validateResponses 'throw' turns a mismatch into a 500, recorded as a violation).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmulatorHandle } from '../../src/emulator/index.js';
import { Client, clientFor, startTestEmulator } from './helpers.js';

const ADMIN = 'contract-admin-token';
const spec = parse(readFileSync(fileURLToPath(new URL('../../docs/emulator-control.openapi.yaml', import.meta.url)), 'utf8')) as {
  paths: Record<string, Record<string, { responses: Record<string, unknown>; requestBody?: unknown }>>;
};
const operations = Object.entries(spec.paths).flatMap(([path, item]) =>
  Object.entries(item)
    .filter(([method]) => ['get', 'put', 'post', 'delete'].includes(method))
    .map(([method, op]) => ({ method: method.toUpperCase(), path, statuses: Object.keys(op.responses) })),
);

/** A body each operation takes, and a path with its parameters filled in. */
function call(path: string, tenant: string): { url: string; body?: unknown } {
  const url = path.replace('{name}', path.includes('tenants') ? tenant : 'kept');
  const bodies: Record<string, unknown> = {
    '/_emulator/snapshots': { name: 'kept', replace: true },
    '/_emulator/faults': { spec: 'latency=0' },
    '/_emulator/listing-lag': { ms: 0 },
    '/_emulator/modes': { range: 'honoured' },
    '/_emulator/processing': { minDelayMs: 1, maxDelayMs: 5 },
    '/_emulator/clock/advance': { ms: 0 },
    '/_emulator/tenants/{name}/credits': { credits: 1_000_000 },
  };
  return { url, body: bodies[path] };
}

describe('the control API against its contract', () => {
  let handle: EmulatorHandle;
  let admin: Client;
  let tenant: Client;
  const seen = new Map<string, Set<string>>();

  let data: string;

  beforeAll(async () => {
    data = mkdtempSync(join(tmpdir(), 'ferry-control-contract-'));
    handle = await startTestEmulator({ adminToken: ADMIN, dataDir: data });
    admin = new Client(handle.baseUrl, ADMIN);
    tenant = await clientFor(handle);
  });
  afterAll(async () => {
    await handle.close();
    rmSync(data, { recursive: true, force: true });
  });

  const send = async (who: Client, method: string, path: string, url: string, json?: unknown) => {
    const res = await who.call(method, url, json !== undefined ? { json } : {});
    const key = `${method} ${path}`;
    if (!seen.has(key)) seen.set(key, new Set());
    seen.get(key)!.add(String(res.status));
    return res;
  };

  it('serves every operation it lists, each answer as it declares, and 401 and 403 where it says', async () => {
    // POST /snapshots first: the restore and delete below need one.
    const ordered = [...operations].sort((a, b) => (a.method === 'POST' && a.path === '/_emulator/snapshots' ? -1 : b.method === 'POST' && b.path === '/_emulator/snapshots' ? 1 : a.method === 'DELETE' ? 1 : b.method === 'DELETE' ? -1 : 0));
    for (const op of ordered) {
      const { url, body } = call(op.path, handle.tenants[0]!.name);
      const ok = await send(admin, op.method, op.path, url, body);
      expect(ok.status, `${op.method} ${url}: ${ok.text}`).toBeLessThan(300);
      expect(op.statuses).toContain(String(ok.status));
      if (op.path === '/_emulator/health') continue;
      expect((await send(new Client(handle.baseUrl, undefined), op.method, op.path, url, body)).status).toBe(401);
      expect((await send(tenant, op.method, op.path, url, body)).status).toBe(403);
    }
    // The failures each route declares: a bad body, an unknown name, a name taken.
    expect((await send(admin, 'POST', '/_emulator/snapshots', '/_emulator/snapshots', { name: 'a/b' })).status).toBe(400);
    await send(admin, 'POST', '/_emulator/snapshots', '/_emulator/snapshots', { name: 'taken' });
    expect((await send(admin, 'POST', '/_emulator/snapshots', '/_emulator/snapshots', { name: 'taken' })).status).toBe(409);
    expect((await send(admin, 'POST', '/_emulator/snapshots/{name}/restore', '/_emulator/snapshots/missing/restore')).status).toBe(404);
    expect((await send(admin, 'DELETE', '/_emulator/snapshots/{name}', '/_emulator/snapshots/missing')).status).toBe(404);
    expect((await send(admin, 'PUT', '/_emulator/faults', '/_emulator/faults', { spec: 'what=1' })).status).toBe(400);
    expect((await send(admin, 'PUT', '/_emulator/listing-lag', '/_emulator/listing-lag', { ms: -1 })).status).toBe(400);
    expect((await send(admin, 'PUT', '/_emulator/modes', '/_emulator/modes', { timeResolutionMs: 1000 })).status).toBe(400);
    expect((await send(admin, 'PUT', '/_emulator/processing', '/_emulator/processing', { maxDelayMs: 1.5 })).status).toBe(400);
    expect((await send(admin, 'POST', '/_emulator/clock/advance', '/_emulator/clock/advance', { ms: -1 })).status).toBe(400);
    expect((await send(admin, 'PUT', '/_emulator/tenants/{name}/credits', '/_emulator/tenants/nobody/credits', { credits: 1 })).status).toBe(404);
    expect((await send(admin, 'GET', '/_emulator/tenants/{name}/credits', '/_emulator/tenants/nobody/credits')).status).toBe(404);
    expect((await send(admin, 'PUT', '/_emulator/tenants/{name}/credits', `/_emulator/tenants/${handle.tenants[0]!.name}/credits`, { credits: 'many' })).status).toBe(400);
    expect((await admin.call('PUT', '/_emulator/faults', { body: '{not json', headers: { 'content-type': 'application/json' } })).status).toBe(400);
    expect((await send(admin, 'POST', '/_emulator/snapshots/{name}/restore', '/_emulator/snapshots/bad!name/restore')).status).toBe(400);
    expect((await send(admin, 'DELETE', '/_emulator/snapshots/{name}', '/_emulator/snapshots/bad!name')).status).toBe(400);
    // A snapshot of another schema (an emulator of another version) is refused, and nothing changes.
    const db = new Database(join(data, 'snapshots', 'taken', 'state.sqlite'));
    db.prepare('INSERT INTO schema_migrations (part, version) VALUES (?, ?)').run('from-a-later-version', 0);
    db.close();
    const other = await send(admin, 'POST', '/_emulator/snapshots/{name}/restore', '/_emulator/snapshots/taken/restore');
    expect(other.status).toBe(409);
    expect(other.body.detail).toContain('another schema');

    expect(handle.contractViolations).toEqual([]);
    // Every status the contract declares for an operation was seen, and none it does not.
    for (const op of operations) {
      const key = `${op.method} ${op.path}`;
      expect([...(seen.get(key) ?? [])].sort(), key).toEqual([...op.statuses].sort());
    }
  });

  it('lists every control route the emulator declares, and the emulator declares every one it lists', () => {
    const source = readFileSync(fileURLToPath(new URL('../../src/emulator/control/routes.ts', import.meta.url)), 'utf8');
    const declared = [...source.matchAll(/route\('(GET|POST|PUT|DELETE)', '([^']+)'/g)].map((m) => `${m[1]} /_emulator/${m[2]!.replace(/:([a-z]+)/g, '{$1}')}`);
    expect(declared.length).toBeGreaterThan(10);
    expect(declared.sort()).toEqual(operations.map((o) => `${o.method} ${o.path}`).sort());
  });
});
