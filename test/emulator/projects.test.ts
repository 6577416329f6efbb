import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EmulatorHandle } from '../../src/emulator/index.js';
import { type Client, clientFor, expectNoContractViolations, projectOf, startTestEmulator } from './helpers.js';

let handle: EmulatorHandle;
let client: Client;
let reader: Client;

beforeAll(async () => {
  handle = await startTestEmulator();
  client = await clientFor(handle);
  reader = await clientFor(handle, 0, true);
});
afterAll(() => handle.close());
afterEach(() => expectNoContractViolations(handle));

const definition = (name: string) => handle.tenants[0]!.organizationMetadata.find((d) => d.name === name)!.objectIdentifier;

describe('projects', () => {
  it('creates, reads, updates, lists and deletes a project', async () => {
    const created = await client.post('/projects', { name: 'Alpha', description: 'First' });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ name: 'Alpha', description: 'First', isPersonal: false, metadataValues: [] });
    const id = created.body.objectIdentifier;
    expect((await client.get(`/projects/${id}`)).body.name).toBe('Alpha');
    const updated = await client.put(`/projects/${id}`, { name: 'Alpha 2', description: null });
    expect(updated.body).toMatchObject({ name: 'Alpha 2', description: null });
    const listed = await client.get('/projects', { searchText: 'ALPHA' });
    expect(listed.body).toMatchObject({ totalCount: 1, items: [{ objectIdentifier: id }] });
    expect((await client.delete(`/projects/${id}`)).status).toBe(204);
    expect((await client.get(`/projects/${id}`)).status).toBe(404);
    expect((await client.delete(`/projects/${id}`)).status).toBe(404);
  });

  it('renders metadata values against the organization metadata definitions', async () => {
    const region = handle.tenants[0]!.organizationMetadata.find((d) => d.dataType === 'singleCategory')!;
    const options = (await client.get(`/projects/organization-metadata/${region.objectIdentifier}/options`)).body as { objectIdentifier: string; name: string }[];
    const europe = options.find((o) => o.name === 'Europe')!;
    const res = await client.post('/projects', {
      name: 'With metadata',
      description: null,
      metadata: [
        { organizationMetadataIdentifier: definition('Department'), text: 'Legal' },
        { organizationMetadataIdentifier: region.objectIdentifier, singleCategoryIdentifier: europe.objectIdentifier },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.metadataValues).toHaveLength(2);
    expect(res.body.metadataValues[0]).toMatchObject({ text: 'Legal', metadata: { name: 'Department', dataType: 'text' } });
    expect(res.body.metadataValues[1]).toMatchObject({ singleCategoryIdentifier: europe.objectIdentifier, metadata: { dataType: 'singleCategory' } });
    expect(res.body.metadataValues[1].metadata.options.map((o: { name: string }) => o.name)).toContain('Europe');
  });

  it('answers 400 for unknown definitions, foreign options and malformed input', async () => {
    const unknownDefinition = await client.post('/projects', {
      name: 'x',
      description: null,
      metadata: [{ organizationMetadataIdentifier: '3f0b8c1e-0000-4000-8000-000000000000', text: 'x' }],
    });
    expect(unknownDefinition.status).toBe(400);
    const wrongOption = await client.post('/projects', {
      name: 'x',
      description: null,
      metadata: [{ organizationMetadataIdentifier: definition('Region'), singleCategoryIdentifier: '3f0b8c1e-0000-4000-8000-000000000000' }],
    });
    expect(wrongOption.status).toBe(400);
    expect((await client.post('/projects', { description: 'no name' })).status).toBe(400);
    const malformed = await client.call('POST', '/projects', { headers: { 'content-type': 'application/json' }, body: '{"name": "x",' });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ status: 400 });
    expect((await client.put('/projects/not-a-uuid', { name: 'x', description: null })).status).toBe(400);
    expect((await client.delete('/projects/not-a-uuid')).status).toBe(400);
    expect((await client.get('/projects', { pageSize: 1001 })).status).toBe(400);
    expect((await client.get('/projects', { sorting: 'flowCredits' })).status).toBe(400);
  });

  it('answers 404 for a non-uuid id where the parameter is a plain string, 400 where it is a uuid', async () => {
    expect((await client.get('/projects/not-a-uuid')).status).toBe(404);
    expect((await client.get('/projects/not-a-uuid/analytics')).status).toBe(400);
    expect((await client.get('/projects/not-a-uuid/documents')).status).toBe(400);
  });

  it('routes my-personal-project before the templated project route and creates it lazily once', async () => {
    const first = await client.get('/projects/my-personal-project');
    expect(first.status).toBe(200);
    expect(first.body.isPersonal).toBe(true);
    const again = await client.get('/projects/my-personal-project');
    expect(again.body.objectIdentifier).toBe(first.body.objectIdentifier);
    // Another user (the read-only client) gets its own and cannot see this one.
    const theirs = await reader.get('/projects/my-personal-project');
    expect(theirs.body.objectIdentifier).not.toBe(first.body.objectIdentifier);
    expect((await reader.get(`/projects/${first.body.objectIdentifier}`)).status).toBe(404);
  });

  it('pages and sorts the project list', async () => {
    for (const name of ['Paging C', 'Paging A', 'Paging B']) await client.post('/projects', { name, description: null });
    const ascending = await client.get('/projects', { searchText: 'paging', sorting: 'name', desc: false, pageSize: 2 });
    expect(ascending.body.totalCount).toBe(3);
    expect(ascending.body.items.map((p: { name: string }) => p.name)).toEqual(['Paging A', 'Paging B']);
    const second = await client.get('/projects', { searchText: 'paging', sorting: 'name', desc: false, pageSize: 2, pageNumber: 2 });
    expect(second.body.items.map((p: { name: string }) => p.name)).toEqual(['Paging C']);
    const newestFirst = await client.get('/projects', { searchText: 'paging' });
    expect(newestFirst.body.items[0].name).toBe('Paging B');
    const filtered = await client.get('/projects', { filterColumn: 'name', filterOperation: 'equals', filterSearchTerm: 'paging a' });
    expect(filtered.body.items.map((p: { name: string }) => p.name)).toEqual(['Paging A']);
  });

  it('reports analytics', async () => {
    const res = await client.get(`/projects/${projectOf(handle)}/analytics`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ objectIdentifier: projectOf(handle), assistantCount: 1, flowCount: 0, teamCount: 0 });
    expect(typeof res.body.documentCount).toBe('number');
  });
});

describe('organization metadata options', () => {
  it('lists, creates, renames and deletes options of a category definition', async () => {
    const areas = definition('Practice areas');
    const base = `/projects/organization-metadata/${areas}/options`;
    const before = await client.get(base, { desc: false });
    expect(before.body.map((o: { name: string }) => o.name)).toEqual(['Corporate', 'Litigation', 'Tax', 'Employment']);
    const created = await client.post(base, { name: 'Antitrust' });
    expect(created.status).toBe(200);
    const id = created.body.objectIdentifier;
    expect((await client.get(`${base}/${id}`)).body).toEqual({ objectIdentifier: id, name: 'Antitrust' });
    expect((await client.put(`${base}/${id}`, { name: 'Competition' })).body.name).toBe('Competition');
    expect((await client.get(base)).body[0].name).toBe('Competition');
    expect((await client.get(base, { searchText: 'compet' })).body).toHaveLength(1);
    expect((await client.get(base, { sorting: 'name', desc: false, pageSize: 2 })).body.map((o: { name: string }) => o.name)).toEqual(['Competition', 'Corporate']);
    expect((await client.delete(`${base}/${id}`)).status).toBe(204);
    expect((await client.get(`${base}/${id}`)).status).toBe(404);
  });

  it('answers 404 for unknown definitions and 400 for options on non-category definitions', async () => {
    expect((await client.get('/projects/organization-metadata/3f0b8c1e-0000-4000-8000-000000000000/options')).status).toBe(404);
    expect((await client.post(`/projects/organization-metadata/${definition('Department')}/options`, { name: 'x' })).status).toBe(400);
    expect((await client.get('/projects/organization-metadata/nope/options')).status).toBe(400);
  });
});
