import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EmulatorHandle } from '../../src/emulator/index.js';
import { Client, clientFor, expectNoContractViolations, startTestEmulator } from './helpers.js';

let handle: EmulatorHandle;
let client: Client;
let reader: Client;
let otherTenant: Client;
/** Another user of the same tenant who may search: the reader's identity with a token that grants write. */
let colleague: Client;

beforeAll(async () => {
  handle = await startTestEmulator();
  client = await clientFor(handle);
  reader = await clientFor(handle, 0, true);
  otherTenant = await clientFor(handle, 1);
  const tenant = handle.tenants[0]!;
  const now = Math.floor(Date.now() / 1000);
  colleague = new Client(
    handle.baseUrl,
    handle.signToken({
      sub: tenant.readOnlyClientId,
      client_id: tenant.readOnlyClientId,
      tenant: tenant.name,
      permissions: ['read', 'write'],
      aud: handle.audience,
      iat: now,
      exp: now + 3600,
    }),
  );
});
afterAll(() => handle.close());
afterEach(() => expectNoContractViolations(handle));

const definition = (name: string) => handle.tenants[0]!.organizationMetadata.find((d) => d.name === name)!.objectIdentifier;

async function option(definitionName: string, optionName: string): Promise<string> {
  const options = (await client.get(`/projects/organization-metadata/${definition(definitionName)}/options`)).body as { objectIdentifier: string; name: string }[];
  return options.find((o) => o.name === optionName)!.objectIdentifier;
}

async function newPlaybook(body: Record<string, unknown> = {}): Promise<any> {
  const res = await client.post('/playbooks', { name: `Playbook ${randomUUID()}`, isPrivate: false, organizationWide: true, ...body });
  expect(res.status).toBe(201);
  return res.body;
}

describe('playbooks', () => {
  it('creates a playbook (201) with its defaults and lists it as {items, totalCount}', async () => {
    const created = await client.post('/playbooks', { name: 'Onboarding', isPrivate: false, organizationWide: true });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'Onboarding',
      description: null,
      isPrivate: false,
      organizationWide: true,
      resourceOwner: { id: handle.tenants[0]!.clientId },
      hasImage: false,
      hasWordAssembly: false,
      hasMultipleGroups: false,
      requiresMaintenance: false,
      groupCount: 0,
      promptCount: 0,
    });
    const listed = await client.get('/playbooks', { searchText: 'onboard' });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({ items: [created.body], totalCount: 1 });
  });

  it('refuses bodies without the required fields or with unknown metadata (400)', async () => {
    for (const body of [
      { isPrivate: false, organizationWide: false },
      { name: 'x', organizationWide: false },
      { name: 'x', isPrivate: false },
      { name: 'x', isPrivate: false, organizationWide: false, metadata: [{ text: 'no definition' }] },
      { name: 'x', isPrivate: false, organizationWide: false, metadata: [{ organizationMetadataIdentifier: randomUUID(), text: 'a' }] },
      {
        name: 'x',
        isPrivate: false,
        organizationWide: false,
        metadata: [
          { organizationMetadataIdentifier: definition('Department'), text: 'a' },
          { organizationMetadataIdentifier: definition('Department'), text: 'b' },
        ],
      },
    ]) {
      const res = await client.post('/playbooks', body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ status: 400 });
    }
  });

  it('sorts (dateAdded desc by default, or by name), pages and refuses unknown sort keys', async () => {
    const prefix = `Sorted ${randomUUID().slice(0, 8)}`;
    const names = ['b', 'c', 'a'].map((n) => `${prefix} ${n}`);
    for (const name of names) await newPlaybook({ name });
    const newestFirst = await client.get('/playbooks', { searchText: prefix });
    expect(newestFirst.body.items.map((p: any) => p.name)).toEqual([...names].reverse());
    const byName = await client.get('/playbooks', { searchText: prefix, sorting: 'name', desc: false, pageSize: 2, pageNumber: 2 });
    expect(byName.body).toMatchObject({ totalCount: 3, items: [{ name: `${prefix} c` }] });
    expect((await client.get('/playbooks', { sorting: 'size' })).status).toBe(400);
  });

  it('shows private playbooks to their owner only, except in search/all', async () => {
    const secret = await newPlaybook({ name: `Secret ${randomUUID()}`, isPrivate: true });
    const byName = { searchText: secret.name };
    expect((await client.post('/playbooks/search', byName)).body.totalCount).toBe(1);
    expect((await colleague.post('/playbooks/search', byName)).body).toEqual({ items: [], totalCount: 0 });
    expect((await reader.get('/playbooks', byName)).body.totalCount).toBe(0);
    // Searches only read: the read-only client may search, and sees no one else's private playbook.
    expect((await reader.post('/playbooks/search', byName)).body).toEqual({ items: [], totalCount: 0 });
    const all = await colleague.post('/playbooks/search/all', { ...byName, scope: 'all' });
    expect(all.status).toBe(200);
    expect(all.body.items.map((p: any) => p.objectIdentifier)).toEqual([secret.objectIdentifier]);
    expect((await reader.get(`/playbooks/${secret.objectIdentifier}/metadata`)).status).toBe(404);
    expect((await otherTenant.post('/playbooks/search/all', byName)).body.totalCount).toBe(0);
    expect((await client.post('/playbooks/search', { scope: 'mine' })).status).toBe(400);
  });

  it('filters searches by metadata values with the semantics of each dataType', async () => {
    const tag = randomUUID().slice(0, 8);
    const [europe, asia, tax, litigation] = await Promise.all([
      option('Region', 'Europe'),
      option('Region', 'Asia Pacific'),
      option('Practice areas', 'Tax'),
      option('Practice areas', 'Litigation'),
    ]);
    const value = (name: string, fields: object) => ({ organizationMetadataIdentifier: definition(name), ...fields });
    const first = await newPlaybook({
      name: `${tag} first`,
      metadata: [
        value('Department', { text: 'Mergers and Acquisitions' }),
        value('Confidential', { isYes: true }),
        value('Contract value', { decimalValue: 1500.5 }),
        value('Effective date', { date: '2024-05-01T22:30:00+00:00' }),
        value('Region', { singleCategoryIdentifier: europe }),
        value('Practice areas', { categories: [tax] }),
      ],
    });
    const second = await newPlaybook({
      name: `${tag} second`,
      metadata: [value('Confidential', { isYes: false }), value('Region', { singleCategoryIdentifier: asia }), value('Practice areas', { categories: [litigation] })],
    });
    const search = async (metadata: object[]) => {
      const res = await client.post('/playbooks/search', { searchText: tag, metadata });
      expect(res.status).toBe(200);
      return res.body.items.map((p: any) => p.objectIdentifier).sort();
    };
    const filter = (name: string, dataType: string, v: unknown) => ({ metadataId: definition(name), dataType, value: v });
    expect(await search([filter('Department', 'text', 'acquisitions')])).toEqual([first.objectIdentifier]);
    expect(await search([filter('Confidential', 'yesNo', false)])).toEqual([second.objectIdentifier]);
    expect(await search([filter('Contract value', 'decimal', 1500.5)])).toEqual([first.objectIdentifier]);
    expect(await search([filter('Effective date', 'date', '2024-05-01T00:00:00Z')])).toEqual([first.objectIdentifier]);
    expect(await search([filter('Effective date', 'date', '2024-05-02T00:00:00Z')])).toEqual([]);
    expect(await search([filter('Region', 'singleCategory', asia)])).toEqual([second.objectIdentifier]);
    expect(await search([filter('Practice areas', 'multiCategory', [tax, litigation])])).toEqual([first.objectIdentifier, second.objectIdentifier].sort());
    expect(await search([filter('Practice areas', 'multiCategory', [tax, litigation]), filter('Region', 'singleCategory', europe)])).toEqual([first.objectIdentifier]);
    for (const bad of [
      filter('Confidential', 'text', 'yes'),
      filter('Confidential', 'yesNo', 'true'),
      filter('Effective date', 'date', 'someday'),
      { metadataId: randomUUID(), dataType: 'text', value: 'x' },
      { metadataId: definition('Region'), dataType: 'singleCategory' },
    ]) {
      expect((await client.post('/playbooks/search', { metadata: [bad] })).status).toBe(400);
    }
  });

  it('answers 404 for another tenant’s and unknown playbooks, 400 for malformed ids, 403 to a read-only client', async () => {
    const playbook = await newPlaybook();
    for (const path of [`/playbooks/${playbook.objectIdentifier}/metadata`, `/playbooks/${playbook.objectIdentifier}/reference-materials`]) {
      const res = await otherTenant.get(path);
      expect(res.status).toBe(404);
      expect(res.text).not.toContain(playbook.name);
      expect((await client.get(path.replace(playbook.objectIdentifier, randomUUID()))).status).toBe(404);
      expect((await client.get(path.replace(playbook.objectIdentifier, 'not-a-uuid'))).status).toBe(400);
    }
    expect((await reader.post('/playbooks', { name: 'x', isPrivate: false, organizationWide: false })).status).toBe(403);
  });
});

describe('playbook metadata', () => {
  it('lists values as a bare array and creates (201), reads, updates and deletes (204) them', async () => {
    const playbook = await newPlaybook({ metadata: [{ organizationMetadataIdentifier: definition('Department'), text: 'Legal' }] });
    const base = `/playbooks/${playbook.objectIdentifier}/metadata`;
    const listed = await client.get(base);
    expect(listed.status).toBe(200);
    expect(listed.body).toHaveLength(1);
    expect(listed.body[0]).toMatchObject({ text: 'Legal', metadata: { name: 'Department', dataType: 'text' } });

    const created = await client.post(base, { organizationMetadataIdentifier: definition('Contract value'), decimalValue: 10 });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ decimalValue: 10, isYes: null, metadata: { objectIdentifier: definition('Contract value') } });
    const id = created.body.objectIdentifier;
    expect((await client.get(`${base}/${id}`)).body).toEqual(created.body);
    expect((await client.get(base, { searchText: 'contract' })).body.map((v: any) => v.objectIdentifier)).toEqual([id]);
    expect((await client.get(base, { pageSize: 1, pageNumber: 2 })).body.map((v: any) => v.objectIdentifier)).toEqual([id]);

    const updated = await client.put(`${base}/${id}`, { decimalValue: 20 });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ objectIdentifier: id, decimalValue: 20 });
    expect((await client.post(base, { organizationMetadataIdentifier: definition('Contract value'), decimalValue: 1 })).status).toBe(400);
    expect((await client.post(base, { text: 'no definition' })).status).toBe(400);

    expect((await client.delete(`${base}/${id}`)).status).toBe(204);
    expect((await client.get(`${base}/${id}`)).status).toBe(404);
    expect((await client.delete(`${base}/${id}`)).status).toBe(404);
    expect((await client.put(`${base}/${id}`, { decimalValue: 1 })).status).toBe(404);
  });

  it('adds and removes categories (204), keeps them across a PUT, and checks the option belongs to the definition', async () => {
    const playbook = await newPlaybook();
    const base = `/playbooks/${playbook.objectIdentifier}/metadata`;
    const [tax, corporate, europe] = await Promise.all([option('Practice areas', 'Tax'), option('Practice areas', 'Corporate'), option('Region', 'Europe')]);
    const value = (await client.post(base, { organizationMetadataIdentifier: definition('Practice areas'), categories: [tax] })).body;
    const categories = `${base}/${value.objectIdentifier}/categories`;
    expect((await client.post(categories, { optionIdentifier: corporate })).status).toBe(204);
    expect((await client.post(categories, { optionIdentifier: corporate })).status).toBe(204);
    expect((await client.get(`${base}/${value.objectIdentifier}`)).body.categories).toEqual([tax, corporate]);
    expect((await client.put(`${base}/${value.objectIdentifier}`, { text: 'note' })).body).toMatchObject({ text: 'note', categories: [tax, corporate] });
    expect((await client.post(categories, { optionIdentifier: europe })).status).toBe(400);
    expect((await client.post(categories, {})).status).toBe(400);
    expect((await client.delete(`${categories}/${tax}`)).status).toBe(204);
    expect((await client.delete(`${categories}/${tax}`)).status).toBe(404);
    expect((await client.get(`${base}/${value.objectIdentifier}`)).body.categories).toEqual([corporate]);

    const text = (await client.post(base, { organizationMetadataIdentifier: definition('Department'), text: 'x' })).body;
    expect((await client.post(`${base}/${text.objectIdentifier}/categories`, { optionIdentifier: tax })).status).toBe(400);
    const region = (await client.post(base, { organizationMetadataIdentifier: definition('Region') })).body;
    expect((await client.post(`${base}/${region.objectIdentifier}/categories`, { optionIdentifier: europe })).status).toBe(204);
    expect((await client.get(`${base}/${region.objectIdentifier}`)).body.singleCategoryIdentifier).toBe(europe);
  });
});

describe('reference materials', () => {
  it('creates (201), lists as a bare array, updates keeping both ids, and deletes (204)', async () => {
    const playbook = await newPlaybook();
    const base = `/playbooks/${playbook.objectIdentifier}/reference-materials`;
    const created = await client.post(base, { name: 'Policy', type: 'boolean', booleanValue: true, categories: [{ name: 'HR' }, { name: 'Legal' }] });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'Policy',
      type: 'boolean',
      booleanValue: true,
      description: null,
      textValue: null,
      isLocked: false,
      isRequired: false,
      categories: [{ name: 'HR' }, { name: 'Legal' }],
    });
    expect(created.body.categories[0]).toEqual({ objectIdentifier: expect.any(String), name: 'HR', dateAdded: created.body.dateAdded });
    const id = created.body.objectIdentifier;
    expect((await client.get(base)).body).toEqual([created.body]);

    const updated = await client.put(`${base}/${id}`, { name: 'Policy v2', textValue: 'see appendix', type: 'text' });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      objectIdentifier: id,
      stableObjectIdentifier: created.body.stableObjectIdentifier,
      name: 'Policy v2',
      type: 'boolean',
      booleanValue: null,
      textValue: 'see appendix',
      categories: created.body.categories,
    });
    expect((await client.get(`${base}/${id}`)).body).toEqual(updated.body);
    expect((await client.delete(`${base}/${id}`)).status).toBe(204);
    expect((await client.get(`${base}/${id}`)).status).toBe(404);
  });

  it('refuses to delete a locked material (409) and bodies without name or type (400)', async () => {
    const playbook = await newPlaybook();
    const base = `/playbooks/${playbook.objectIdentifier}/reference-materials`;
    const locked = (await client.post(base, { name: 'Locked', type: 'text', isLocked: true })).body;
    const res = await client.delete(`${base}/${locked.objectIdentifier}`);
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ status: 409 });
    expect((await client.put(`${base}/${locked.objectIdentifier}`, { name: 'Unlocked' })).body.isLocked).toBe(false);
    expect((await client.delete(`${base}/${locked.objectIdentifier}`)).status).toBe(204);
    expect((await client.post(base, { name: 'x' })).status).toBe(400);
    expect((await client.post(base, { type: 'text' })).status).toBe(400);
    expect((await client.delete(`${base}/${randomUUID()}`)).status).toBe(404);
  });
});
