import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EmulatorHandle } from '../../src/emulator/index.js';
import { Client, clientFor, expectNoContractViolations, startTestEmulator } from './helpers.js';

let handle: EmulatorHandle;
let client: Client;
let settings: Client;

beforeAll(async () => {
  handle = await startTestEmulator();
  client = await clientFor(handle);
  settings = new Client(handle.settingsUrl, client.bearer);
});
afterAll(() => handle.close());
afterEach(() => expectNoContractViolations(handle));

describe('models (settings host)', () => {
  it('lists enabled models, filters by modelType and includes disabled ones on request', async () => {
    const enabled = await settings.get('/models');
    expect(enabled.status).toBe(200);
    const names = enabled.body.map((m: { name: string }) => m.name);
    expect(names).not.toContain('Ferry Legacy');
    expect(names.length).toBeGreaterThanOrEqual(4);
    const all = await settings.get('/models', { includeDisabled: true });
    expect(all.body.map((m: { name: string }) => m.name)).toContain('Ferry Legacy');
    const chat = await settings.get('/models', { modelType: 1, includeDisabled: true });
    expect(chat.body.map((m: { name: string }) => m.name)).toEqual(['Ferry Large', 'Ferry Mini', 'Ferry Legacy']);
    expect((await settings.get('/models', { modelType: 'chat' })).status).toBe(400);
  });

  it('gets models by id and by repeated identifiers, the literal route first', async () => {
    const [first, second] = (await settings.get('/models')).body;
    expect((await settings.get(`/models/${first.objectIdentifier}`)).body).toEqual(first);
    const both = await settings.get('/models/get-by-identifiers', { modelIdentifiers: [first.objectIdentifier, second.objectIdentifier, '3f0b8c1e-0000-4000-8000-000000000000'] });
    expect(both.status).toBe(200);
    expect(both.body).toEqual([first, second]);
    const one = await settings.get('/models/get-by-identifiers', { modelIdentifiers: [second.objectIdentifier] });
    expect(one.body).toEqual([second]);
    expect((await settings.get('/models/3f0b8c1e-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await settings.get('/models/not-a-uuid')).status).toBe(400);
    expect((await settings.get('/models/get-by-identifiers', { modelIdentifiers: ['nope'] })).status).toBe(400);
  });

  it('is served only on the settings host', async () => {
    expect((await client.get('/models')).status).toBe(404);
  });
});

describe('embeddings', () => {
  const norm = (v: number[]) => Math.hypot(...v);

  it('is deterministic, unit length, with default and custom dimensions', async () => {
    const a = await client.post('/inference/embeddings', { input: 'the quick brown fox' });
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({ object: 'list', model: 'ferry-embedding-1', usage: { prompt_tokens: 4, total_tokens: 4 } });
    const vector = a.body.data[0].embedding as number[];
    expect(vector).toHaveLength(256);
    expect(norm(vector)).toBeCloseTo(1, 9);
    const again = await client.post('/inference/embeddings', { input: 'the quick brown fox', dimensions: null });
    expect(again.body.data[0].embedding).toEqual(vector);
    const other = await client.post('/inference/embeddings', { input: 'the quick brown cat' });
    expect(other.body.data[0].embedding).not.toEqual(vector);
    const wide = await client.post('/inference/embeddings', { input: 'x', dimensions: 3072 });
    expect(wide.body.data[0].embedding).toHaveLength(3072);
    expect(norm(wide.body.data[0].embedding)).toBeCloseTo(1, 9);
  });

  it('answers 400 outside 1..3072 dimensions and for a null or missing input', async () => {
    for (const body of [{ input: 'x', dimensions: 0 }, { input: 'x', dimensions: 3073 }, { input: null }, {}, { input: 'x', dimensions: 1.5 }]) {
      expect((await client.post('/inference/embeddings', body)).status).toBe(400);
    }
  });
});

describe('notifications', () => {
  it('lists newest first, marks read and deletes', async () => {
    handle.notify('contoso', { title: 'First', message: 'one', type: 'documentUploadCompleted' });
    handle.notify('contoso', { title: 'Second', message: 'two', type: 'documentUploadCompleted', resourceIdentifiers: { upload: 'u1' } });
    handle.notify('fabrikam', { title: 'Elsewhere', message: 'x', type: 'documentUploadCompleted' });
    const listed = await client.get('/notifications');
    expect(listed.status).toBe(200);
    expect(listed.body.map((n: { title: string }) => n.title)).toEqual(['Second', 'First']);
    expect(listed.body[0]).toMatchObject({ isRead: false, resourceIdentifiers: { upload: 'u1' } });
    const id = listed.body[0].objectIdentifier;
    const patched = await client.patch(`/notifications/${id}`, { isRead: true });
    expect(patched.status).toBe(204);
    expect(patched.text).toBe('');
    expect((await client.get('/notifications')).body[0].isRead).toBe(true);
    expect((await client.get('/notifications', { pageSize: 1, pageNumber: 2 })).body.map((n: { title: string }) => n.title)).toEqual(['First']);
    expect((await client.delete(`/notifications/${id}`)).status).toBe(204);
    expect((await client.delete(`/notifications/${id}`)).status).toBe(404);
    expect((await client.patch(`/notifications/${id}`, { isRead: false })).status).toBe(404);
    expect((await client.patch('/notifications/not-a-uuid', { isRead: false })).status).toBe(400);
    const fabrikam = await clientFor(handle, 1);
    const theirs = (await fabrikam.get('/notifications')).body;
    expect(theirs.map((n: { title: string }) => n.title)).toEqual(['Elsewhere']);
    expect((await fabrikam.delete(`/notifications/${listed.body[1].objectIdentifier}`)).status).toBe(404);
  });
});
