// The emulator's control API (/_emulator/) over real HTTP: its guard, each lever, bad input, and a
// reset while an upload streams in. Every response is held to docs/emulator-control.openapi.yaml
// (validateResponses 'throw' turns a mismatch into a 500, and contractViolations stays empty).
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EmulatorHandle } from '../../src/emulator/index.js';
import { Client, clientFor, expectNoContractViolations, projectOf, startTestEmulator } from './helpers.js';

const ADMIN = 'test-admin-token-0123456789';

describe('the control API', () => {
  let handle: EmulatorHandle;
  let admin: Client;
  let tenant: Client;
  let data: string;

  beforeAll(async () => {
    data = mkdtempSync(join(tmpdir(), 'ferry-control-'));
    handle = await startTestEmulator({ dataDir: data, adminToken: ADMIN });
    admin = new Client(handle.baseUrl, ADMIN);
    tenant = await clientFor(handle);
  });
  afterEach(() => expectNoContractViolations(handle));
  afterAll(async () => {
    await handle.close();
    rmSync(data, { recursive: true, force: true });
  });

  const blobFiles = () => readdirSync(join(data, 'blobs'), { recursive: true }).map(String);
  const projectNames = async () => ((await tenant.get('/projects', { pageSize: 1000 })).body.items as { name: string }[]).map((p) => p.name).sort();

  it('answers health without a token, wants the admin token elsewhere, and refuses a tenant token with 403', async () => {
    expect((await new Client(handle.baseUrl, undefined).get('/_emulator/health')).body).toEqual({ status: 'ready' });
    expect((await new Client(handle.baseUrl, undefined).get('/_emulator/traffic')).status).toBe(401);
    expect((await new Client(handle.baseUrl, 'not-the-token').get('/_emulator/traffic')).status).toBe(401);
    const refused = await tenant.get('/_emulator/traffic');
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toMatch(/tenant's token/);
    expect((await admin.get('/_emulator/traffic')).status).toBe(200);
    // The service's own routes never take the admin token.
    expect((await admin.get('/projects')).status).toBe(401);
    expect(handle.describe().adminToken).toBe(ADMIN);
  });

  it('snapshots the state, restores it, and refuses unknown names (404) and bad ones (400)', async () => {
    const before = await projectNames();
    const taken = await admin.post('/_emulator/snapshots', { name: 'seeded' });
    expect(taken.status).toBe(201);
    expect(taken.body).toMatchObject({ name: 'seeded' });
    expect(taken.body.projects).toBeGreaterThanOrEqual(before.length);
    expect((await admin.post('/_emulator/snapshots', { name: 'seeded' })).status).toBe(409);
    expect((await admin.post('/_emulator/snapshots', { name: 'seeded', replace: true })).status).toBe(201);

    const made = await tenant.post('/projects', { name: 'made after the snapshot', description: null });
    expect(made.status).toBe(200);
    const up = await tenant.upload(made.body.objectIdentifier, 'a.txt', 'after');
    expect(up.status).toBe(200);
    expect(await projectNames()).toContain('made after the snapshot');

    const restored = await admin.post('/_emulator/snapshots/seeded/restore');
    expect(restored.status).toBe(200);
    expect(await projectNames()).toEqual(before);
    expect((await tenant.get(`/projects/${made.body.objectIdentifier}`)).status).toBe(404);
    // The blob of the document made after the snapshot went with it.
    expect(blobFiles().some((f) => f.includes(up.body.objectIdentifier))).toBe(false);
    // The tree the restore moved aside is gone with it.
    expect(readdirSync(data).filter((n) => n.includes('.replaced-'))).toEqual([]);

    const unknown = await admin.post('/_emulator/snapshots/nope/restore');
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toContain('"nope"');
    expect((await admin.delete('/_emulator/snapshots/nope')).status).toBe(404);
    const bad = await admin.post('/_emulator/snapshots', { name: '../escape' });
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toContain('"../escape"');
    expect((await admin.get('/_emulator/snapshots')).body.snapshots.map((s: { name: string }) => s.name)).toEqual(['seeded']);
    expect((await admin.delete('/_emulator/snapshots/seeded')).status).toBe(204);
    expect((await admin.get('/_emulator/snapshots')).body.snapshots).toEqual([]);
  });

  it('sets faults that every service route answers, names a token that does not parse, and clears them', async () => {
    const bad = await admin.put('/_emulator/faults', { spec: '503=1,flood=2' });
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toContain('flood');
    expect((await admin.put('/_emulator/faults', { spec: '503=1' })).status).toBe(200);
    expect((await tenant.get('/projects')).status).toBe(503);
    // The control API itself is never faulted.
    expect((await admin.delete('/_emulator/faults')).status).toBe(204);
    expect((await tenant.get('/projects')).status).toBe(200);
  });

  it('sets a listing lag at run time, and refuses a negative one', async () => {
    expect((await admin.put('/_emulator/listing-lag', { ms: -1 })).status).toBe(400);
    expect((await admin.put('/_emulator/listing-lag', { ms: 'soon' })).status).toBe(400);
    expect((await admin.put('/_emulator/listing-lag', { ms: 600_000 })).status).toBe(200);
    const made = await tenant.post('/projects', { name: 'late to be listed', description: null });
    // Each item draws its own delay in [0, lag], fixed by its id: ten minutes' lag hides it unless its draw is under the test's own time.
    const listed = (await projectNames()).includes('late to be listed');
    expect((await admin.post('/_emulator/clock/advance', { ms: 600_001 })).status).toBe(200);
    expect(await projectNames()).toContain('late to be listed');
    expect((await tenant.get(`/projects/${made.body.objectIdentifier}`)).status).toBe(200);
    expect(listed).toBe(false);
    expect((await admin.put('/_emulator/listing-lag', { ms: 0 })).status).toBe(200);
  });

  it('holds documents pending until processing/drain finishes them', async () => {
    expect((await admin.put('/_emulator/processing', { minDelayMs: 5, maxDelayMs: 1 })).status).toBe(400);
    expect((await admin.put('/_emulator/processing', { minDelayMs: -1 })).status).toBe(400);
    expect((await admin.put('/_emulator/processing', { minDelayMs: 600_000, maxDelayMs: 600_000 })).body).toEqual({ minDelayMs: 600_000, maxDelayMs: 600_000 });
    const upload = randomUUID();
    const up = await tenant.upload(projectOf(handle), 'pending.txt', 'hello', { uploadIdentifier: upload });
    expect(up.status).toBe(200);
    const one = async () => (await tenant.get(`/projects/${projectOf(handle)}/documents`, { uploadObjectIdentifier: upload, flattenList: true })).body.items[0];
    expect(await one()).toMatchObject({ name: 'pending.txt', uploadInProgress: true });
    const drained = await admin.post('/_emulator/processing/drain');
    expect(drained.body.processed).toBeGreaterThanOrEqual(1);
    expect(await one()).toMatchObject({ name: 'pending.txt', uploadInProgress: false, uploadSuccessful: true });
    await admin.put('/_emulator/processing', { minDelayMs: 1, maxDelayMs: 5 });
  });

  it('keeps a document still processing in a snapshot, and processes it again once restored', async () => {
    await admin.put('/_emulator/processing', { minDelayMs: 600_000, maxDelayMs: 600_000 });
    const upload = randomUUID();
    expect((await tenant.upload(projectOf(handle), 'pending-in-snapshot.txt', 'hello', { uploadIdentifier: upload })).status).toBe(200);
    const one = async () => (await tenant.get(`/projects/${projectOf(handle)}/documents`, { uploadObjectIdentifier: upload, flattenList: true })).body.items[0];
    await admin.post('/_emulator/snapshots', { name: 'pending', replace: true });
    await admin.post('/_emulator/processing/drain');
    expect(await one()).toMatchObject({ uploadInProgress: false });
    await admin.post('/_emulator/snapshots/pending/restore');
    expect(await one()).toMatchObject({ uploadInProgress: true });
    expect((await admin.post('/_emulator/processing/drain')).body.processed).toBe(1);
    expect(await one()).toMatchObject({ uploadInProgress: false, uploadSuccessful: true });
    await admin.delete('/_emulator/snapshots/pending');
    await admin.put('/_emulator/processing', { minDelayMs: 1, maxDelayMs: 5 });
  });

  it('advances the clock past a token\'s life (refused then), and refuses a step back', async () => {
    const client = await clientFor(handle);
    expect((await client.get('/projects')).status).toBe(200);
    expect((await admin.post('/_emulator/clock/advance', { ms: -1000 })).status).toBe(400);
    const moved = await admin.post('/_emulator/clock/advance', { ms: 3_601_000 });
    expect(Date.parse(moved.body.now)).toBeGreaterThan(Date.now() + 3_600_000);
    expect((await client.get('/projects')).status).toBe(401);
    tenant = await clientFor(handle);
  });

  it('sets credits, 404 for a tenant that does not exist, and counts traffic without its own requests', async () => {
    const name = handle.tenants[0]!.name;
    expect((await admin.put(`/_emulator/tenants/${name}/credits`, { credits: 0 })).body).toEqual({ credits: 0 });
    expect(handle.credits(name)).toBe(0);
    expect((await admin.put(`/_emulator/tenants/${name}/credits`, { credits: 'lots' })).status).toBe(400);
    expect((await admin.put('/_emulator/tenants/nobody/credits', { credits: 1 })).status).toBe(404);
    handle.setCredits(name, 1_000_000);
    const before = (await admin.get('/_emulator/traffic')).body;
    await tenant.get('/projects');
    await admin.get('/_emulator/modes');
    const after = (await admin.get('/_emulator/traffic')).body;
    expect(after.requests - before.requests).toBe(1);
    expect(after).toEqual(expect.objectContaining(handle.traffic() && { requests: after.requests }));
  });

  it('changes modes while running, says which cannot, and changes none when one is wrong', async () => {
    const modes = await admin.get('/_emulator/modes');
    expect(modes.body.fixed).toEqual(['folders', 'contentRoute', 'timeResolutionMs']);
    const fixed = await admin.put('/_emulator/modes', { folders: 'none' });
    expect(fixed.status).toBe(400);
    expect(fixed.body.detail).toContain('folders');
    const wrong = await admin.put('/_emulator/modes', { range: 'ignored', search: 'fuzzy' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.detail).toContain('fuzzy');
    expect((await admin.get('/_emulator/modes')).body.modes.range).toBe('honoured');
    const changed = await admin.put('/_emulator/modes', { range: 'ignored', maxPageSize: 2 });
    expect(changed.body.modes).toMatchObject({ range: 'ignored', maxPageSize: 2 });
    expect((await tenant.get('/projects', { pageSize: 100 })).body.items.length).toBeLessThanOrEqual(2);
    await admin.put('/_emulator/modes', { range: 'honoured', maxPageSize: null });
  });

  it('resets to the seed and to the start settings, keeping snapshots', async () => {
    const seeded = await projectNames();
    await admin.post('/_emulator/snapshots', { name: 'kept' });
    await tenant.post('/projects', { name: 'gone after reset', description: null });
    await admin.put('/_emulator/faults', { spec: 'latency=1' });
    await admin.put('/_emulator/modes', { search: 'prefix' });
    const reset = await admin.post('/_emulator/reset');
    expect(reset.body).toEqual({ reset: true, snapshots: 1 });
    expect(await projectNames()).toEqual(seeded.filter((n) => n !== 'made after the snapshot' && n !== 'late to be listed'));
    expect((await admin.get('/_emulator/modes')).body.modes.search).toBe('substring');
    // The same clients work after a reset: the seed's credentials.
    expect((await (await clientFor(handle)).get('/projects')).status).toBe(200);
  });

  it('fails an upload that streams in while the state is reset, and keeps nothing of it', async () => {
    const seeded = await projectNames();
    let pushed = 0;
    let resolveHalf: () => void = () => undefined;
    const half = new Promise<void>((resolve) => (resolveHalf = resolve));
    const boundary = 'ferry-control-test';
    const chunk = Buffer.alloc(256 * 1024, 'x');
    // A body that sends 4 MiB, then waits for the reset, then would send 60 more.
    const body = Readable.from(
      (async function* () {
        yield Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="long.txt"\r\ncontent-type: text/plain\r\n\r\n`);
        for (let i = 0; i < 256; i++) {
          yield chunk;
          pushed += chunk.length;
          if (pushed === 4 << 20) {
            resolveHalf();
            await new Promise((r) => setTimeout(r, 50));
          }
        }
        yield Buffer.from(`\r\n--${boundary}--\r\n`);
      })(),
    );
    const upload = request(`${handle.baseUrl}/projects/${projectOf(handle)}/documents?documentUploadIdentifier=${randomUUID()}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tenant.bearer}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
    }).then(
      async (res) => ({ status: res.statusCode, text: await res.body.text() }),
      (error: Error) => ({ status: 0, text: error.message }),
    );
    await half;
    expect((await admin.post('/_emulator/reset')).status).toBe(200);
    const answer = await upload;
    // Either the 503 arrives, or the connection ends before the rest is sent: never a 200.
    expect(answer.status === 503 || answer.status === 0).toBe(true);
    if (answer.status === 503) expect(answer.text).toContain('reset or restored');
    expect(await projectNames()).toEqual(seeded);
    const docs = await tenant.get(`/projects/${projectOf(handle)}/documents`, { flattenList: true, pageSize: 1000 });
    expect(docs.body.items.map((d: { name: string }) => d.name)).not.toContain('long.txt');
    expect(blobFiles().filter((f) => f.endsWith('.partial'))).toEqual([]);
  });

  it('keeps snapshots made with --data across a restart, and serves no control API when turned off', async () => {
    await admin.post('/_emulator/snapshots', { name: 'across-restart', replace: true });
    await handle.close();
    // What a restore killed half way would leave: a tree moved aside, and a snapshot without its info.
    mkdirSync(join(data, 'blobs.replaced-1-2', 'documents'), { recursive: true });
    mkdirSync(join(data, 'snapshots', 'cut-off'), { recursive: true });
    handle = await startTestEmulator({ dataDir: data, adminToken: ADMIN });
    admin = new Client(handle.baseUrl, ADMIN);
    tenant = await clientFor(handle);
    expect((await admin.get('/_emulator/snapshots')).body.snapshots.map((s: { name: string }) => s.name)).toEqual(['across-restart', 'kept']);
    expect(readdirSync(data).filter((n) => n.includes('.replaced-'))).toEqual([]);
    expect(readdirSync(join(data, 'snapshots')).sort()).toEqual(['across-restart', 'kept']);
    expect((await admin.post('/_emulator/snapshots/across-restart/restore')).status).toBe(200);

    const off = await startTestEmulator({ control: false });
    try {
      expect(off.describe().adminToken).toBeUndefined();
      expect((await new Client(off.baseUrl, undefined).get('/_emulator/health')).status).toBe(404);
    } finally {
      await off.close();
    }
  });
});
