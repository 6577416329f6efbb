// The emulator as a service that lists late (--listing-lag): new items show in lists and searches
// only their own delay after their create, out of order; removed ones stay listed as long; reads
// by id never wait. The emulator's clock is moved instead of waited for, so nothing here is timed.
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EmulatorHandle } from '../../src/emulator/index.js';
import { type Client, clientFor, expectNoContractViolations, startTestEmulator } from './helpers.js';

const LAG = 3_000;
let handle: EmulatorHandle;
let client: Client;

beforeAll(async () => {
  handle = await startTestEmulator({ listingLagMs: LAG });
  client = await clientFor(handle);
});
afterAll(() => handle.close());
afterEach(() => {
  expectNoContractViolations(handle);
  handle.setListingLag(LAG);
});

const ids = (body: { items: { objectIdentifier: string }[] }) => body.items.map((p) => p.objectIdentifier);

async function createProjects(prefix: string, n: number): Promise<string[]> {
  const made: string[] = [];
  for (let i = 0; i < n; i++) made.push((await client.post('/projects', { name: `${prefix} ${i}`, description: null })).body.objectIdentifier);
  return made;
}

describe('--listing-lag: lists and searches show new items late', () => {
  it('a new project is read by id at once, listed and found by search only after its own delay, and not in the order made', async () => {
    const made = await createProjects('lagged', 24);
    for (const id of made) expect((await client.get(`/projects/${id}`)).status).toBe(200);
    const atOnce = await client.get('/projects', { searchText: 'lagged', pageSize: 100 });
    expect(atOnce.body.totalCount).toBeLessThan(24);
    expect(atOnce.body.items).toHaveLength(atOnce.body.totalCount);

    handle.advanceClock(LAG / 2);
    const halfway = new Set(ids((await client.get('/projects', { searchText: 'lagged', pageSize: 100 })).body));
    expect(halfway.size).toBeGreaterThan(0);
    expect(halfway.size).toBeLessThan(24);
    // Out of order: some project shows while one made before it does not.
    const firstMissing = made.findIndex((id) => !halfway.has(id));
    expect(made.slice(firstMissing + 1).some((id) => halfway.has(id))).toBe(true);

    handle.advanceClock(LAG / 2 + 1);
    const all = await client.get('/projects', { searchText: 'lagged', pageSize: 100 });
    expect(all.body.totalCount).toBe(24);
    expect(new Set(ids(all.body))).toEqual(new Set(made));
  });

  it('a removed project is gone by id at once and stays listed until its own delay has passed', async () => {
    const made = await createProjects('removed', 12);
    handle.advanceClock(LAG + 1);
    for (const id of made) expect((await client.delete(`/projects/${id}`)).status).toBe(204);
    for (const id of made) expect((await client.get(`/projects/${id}`)).status).toBe(404);
    const still = await client.get('/projects', { searchText: 'removed', pageSize: 100 });
    expect(still.body.totalCount).toBeGreaterThan(0);
    handle.advanceClock(LAG + 1);
    expect((await client.get('/projects', { searchText: 'removed', pageSize: 100 })).body.totalCount).toBe(0);
  });

  it('documents and folders: every filter of the listing shows a new one only after its delay', async () => {
    const project = (await client.post('/projects', { name: 'docs under lag', description: null })).body.objectIdentifier;
    handle.advanceClock(LAG + 1);
    const folder = await client.post(`/projects/${project}/folders`, { name: 'f' });
    expect(folder.status).toBe(201);
    const batch = randomUUID();
    const uploaded: string[] = [];
    for (let i = 0; i < 12; i++) {
      const res = await client.upload(project, `doc-${i}.txt`, `content ${i}`, { uploadIdentifier: batch, parent: folder.body.objectIdentifier });
      expect(res.status).toBe(200);
      uploaded.push(res.body.objectIdentifier);
    }
    const queries = [
      { parentObjectIdentifier: folder.body.objectIdentifier },
      { flattenList: true },
      { uploadObjectIdentifier: batch, flattenList: true },
      { searchText: 'doc-', flattenList: true },
    ];
    for (const query of queries) {
      const listed = await client.get(`/projects/${project}/documents`, { ...query, pageSize: 100, hidePackagedFiles: false });
      expect(listed.body.items.filter((d: { isDirectory: boolean }) => !d.isDirectory).length).toBeLessThan(12);
    }
    handle.advanceClock(LAG + 1);
    for (const query of queries) {
      const listed = await client.get(`/projects/${project}/documents`, { ...query, pageSize: 100, hidePackagedFiles: false });
      expect(listed.body.items.filter((d: { isDirectory: boolean }) => !d.isDirectory).map((d: { objectIdentifier: string }) => d.objectIdentifier).sort()).toEqual([...uploaded].sort());
    }
    // The folder made before is listed among the root's children now.
    const root = await client.get(`/projects/${project}/documents`, { pageSize: 100 });
    expect(ids(root.body)).toContain(folder.body.objectIdentifier);
  });

  it('playbooks (list and search) and document uploads show late too', async () => {
    const playbooks: string[] = [];
    for (let i = 0; i < 10; i++) playbooks.push((await client.post('/playbooks', { name: `late playbook ${i}`, isPrivate: false, organizationWide: true })).body.objectIdentifier);
    const searched = await client.post('/playbooks/search', { searchText: 'late playbook', pageSize: 100 });
    expect(searched.body.totalCount).toBeLessThan(10);
    const uploads: string[] = [];
    for (let i = 0; i < 10; i++) uploads.push((await client.post(`/playbooks/${playbooks[0]}/document-uploads`, { name: `batch ${i}` })).body.objectIdentifier);
    expect(((await client.get(`/playbooks/${playbooks[0]}/document-uploads`, { pageSize: 100 })).body as unknown[]).length).toBeLessThan(10);
    handle.advanceClock(LAG + 1);
    expect((await client.post('/playbooks/search', { searchText: 'late playbook', pageSize: 100 })).body.totalCount).toBe(10);
    expect((await client.get('/playbooks', { searchText: 'late playbook', pageSize: 100 })).body.totalCount).toBe(10);
    expect(((await client.get(`/playbooks/${playbooks[0]}/document-uploads`, { pageSize: 100 })).body as unknown[]).length).toBe(10);
  });

  it('the lag can change on the fly: set to 0, everything made is listed at once', async () => {
    const made = await createProjects('switched', 6);
    handle.setListingLag(0);
    expect((await client.get('/projects', { searchText: 'switched', pageSize: 100 })).body.totalCount).toBe(6);
    handle.setListingLag(LAG);
    expect((await client.get('/projects', { searchText: 'switched', pageSize: 100 })).body.totalCount).toBeLessThan(6);
    expect(made).toHaveLength(6);
  });
});
