import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EmulatorHandle } from '../../src/emulator/index.js';
import { MAX_JSON_DEPTH } from '../../src/emulator/service/rich-text.js';
import { type Client, clientFor, expectNoContractViolations, startTestEmulator } from './helpers.js';
import { sendForm } from './playbook-helpers.js';

let handle: EmulatorHandle;
let client: Client;

beforeAll(async () => {
  handle = await startTestEmulator();
  client = await clientFor(handle);
});
afterAll(() => handle.close());
afterEach(() => expectNoContractViolations(handle));

/** Every byte value, and more than one chunk's worth. */
const binary = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 31 + (i >> 8)) % 256));

async function newPlaybook(): Promise<string> {
  const res = await client.post('/playbooks', { name: `Assemblies ${randomUUID()}`, isPrivate: false, organizationWide: false });
  expect(res.status).toBe(201);
  return res.body.objectIdentifier;
}

async function createAssembly(playbook: string, fields: Record<string, string> = {}, file?: Buffer | string) {
  const parts = Object.entries({ Name: 'Engagement letter', Description: 'Standard letter', Type: 'docxFlowWide', ...fields }).map(([name, value]) => ({ name, value }));
  return sendForm(client, 'POST', `/playbooks/${playbook}/assemblies`, file === undefined ? parts : [...parts, { name: 'File', file, fileName: 'letter.docx' }]);
}

async function download(url: string): Promise<{ status: number; type: string | undefined; bytes: Buffer }> {
  const res = await request(url);
  return { status: res.statusCode, type: res.headers['content-type'] as string | undefined, bytes: Buffer.from(await res.body.arrayBuffer()) };
}

describe('assemblies', () => {
  it('creates an assembly from a multipart form (200) and lists, reads and deletes it', async () => {
    const playbook = await newPlaybook();
    const group = randomUUID();
    const created = await createAssembly(playbook, { PlaybookGroupId: group }, binary);
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      objectIdentifier: expect.any(String),
      name: 'Engagement letter',
      description: 'Standard letter',
      dateAdded: expect.any(String),
      dateModified: created.body.dateAdded,
      resourceOwner: { id: handle.tenants[0]!.clientId, name: expect.any(String), email: expect.any(String) },
      assemblyType: 'docxFlowWide',
      playbookGroupObjectIdentifier: group,
    });
    const id = created.body.objectIdentifier;
    const base = `/playbooks/${playbook}/assemblies`;
    expect((await client.get(`${base}/${id}`)).body).toEqual(created.body);
    expect((await client.get(base)).body).toEqual({ items: [created.body], totalCount: 1 });
    const removed = await client.delete(`${base}/${id}`);
    expect(removed.status).toBe(200);
    expect(removed.text).toBe('');
    expect((await client.get(`${base}/${id}`)).status).toBe(404);
    expect((await client.delete(`${base}/${id}`)).status).toBe(404);
  });

  it('reads the form fields whatever their order, and refuses incomplete or malformed forms (400)', async () => {
    const playbook = await newPlaybook();
    const fileFirst = await sendForm(client, 'POST', `/playbooks/${playbook}/assemblies`, [
      { name: 'File', file: 'template', fileName: 't.docx' },
      { name: 'Type', value: 'docxFlowWide' },
      { name: 'Description', value: '' },
      { name: 'Name', value: 'File first' },
    ]);
    expect(fileFirst.status).toBe(200);
    expect(fileFirst.body).toMatchObject({ name: 'File first', description: '', playbookGroupObjectIdentifier: null });
    const bad = [
      await createAssembly(playbook, { Name: '' }),
      await sendForm(client, 'POST', `/playbooks/${playbook}/assemblies`, [{ name: 'Name', value: 'x' }, { name: 'Type', value: 'docxFlowWide' }]),
      await createAssembly(playbook, { Type: '' }),
      await createAssembly(playbook, { PlaybookGroupId: 'group-1' }),
      await sendForm(client, 'POST', `/playbooks/${playbook}/assemblies`, [{ name: 'Other', file: 'x', fileName: 'x.bin' }]),
      await client.post(`/playbooks/${playbook}/assemblies`, { Name: 'x', Description: 'y', Type: 'z' }),
    ];
    for (const res of bad) {
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ status: 400 });
    }
    expect((await client.get(`/playbooks/${playbook}/assemblies`)).body.totalCount).toBe(1);
    expect((await createAssembly(randomUUID())).status).toBe(404);
  });

  it('pages with pageSize 100 and pageNumber 1 by default, in creation order, and searches names', async () => {
    const playbook = await newPlaybook();
    for (const name of ['Alpha', 'Beta', 'Gamma']) expect((await createAssembly(playbook, { Name: name })).status).toBe(200);
    const base = `/playbooks/${playbook}/assemblies`;
    expect((await client.get(base)).body.items.map((a: any) => a.name)).toEqual(['Alpha', 'Beta', 'Gamma']);
    expect((await client.get(base, { pageSize: 2, pageNumber: 2 })).body).toMatchObject({ totalCount: 3, items: [{ name: 'Gamma' }] });
    expect((await client.get(base, { searchText: 'ET' })).body).toMatchObject({ totalCount: 1, items: [{ name: 'Beta' }] });
  });

  it('serves the stored file byte for byte (also as application/pdf) and replaces it with PUT content', async () => {
    const playbook = await newPlaybook();
    const assembly = (await createAssembly(playbook, {}, binary)).body;
    const content = `${handle.baseUrl}/playbooks/${playbook}/assemblies/${assembly.objectIdentifier}/content`;
    const auth = { headers: { authorization: `Bearer ${client.bearer}` } };
    const original = await request(content, auth);
    expect(original.statusCode).toBe(200);
    expect(original.headers['content-type']).toBe('application/octet-stream');
    expect(original.headers['content-length']).toBe(String(binary.length));
    expect(Buffer.compare(Buffer.from(await original.body.arrayBuffer()), binary)).toBe(0);
    const asPdf = await request(`${content}?usePdf=true`, auth);
    expect(asPdf.headers['content-type']).toBe('application/pdf');
    expect(Buffer.compare(Buffer.from(await asPdf.body.arrayBuffer()), binary)).toBe(0);

    handle.advanceClock(60_000);
    const replacement = Buffer.from('second version');
    const replaced = await sendForm(client, 'PUT', `/playbooks/${playbook}/assemblies/${assembly.objectIdentifier}/content`, [
      { name: 'file', file: replacement, fileName: 'v2.docx' },
    ]);
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ objectIdentifier: assembly.objectIdentifier, dateAdded: assembly.dateAdded });
    expect(Date.parse(replaced.body.dateModified)).toBeGreaterThan(Date.parse(assembly.dateModified));
    expect((await client.get(`/playbooks/${playbook}/assemblies/${assembly.objectIdentifier}/content`)).text).toBe('second version');
    expect((await sendForm(client, 'PUT', `/playbooks/${playbook}/assemblies/${assembly.objectIdentifier}/content`, [{ name: 'other', value: 'x' }])).status).toBe(400);

    const empty = (await createAssembly(playbook)).body;
    expect((await client.get(`/playbooks/${playbook}/assemblies/${empty.objectIdentifier}/content`)).status).toBe(404);
    expect((await client.get(`/playbooks/${playbook}/assemblies/${empty.objectIdentifier}/download-url`)).status).toBe(404);
  });

  it('hands out a download URL that works without a token until it expires', async () => {
    const playbook = await newPlaybook();
    const assembly = (await createAssembly(playbook, {}, binary)).body;
    const res = await client.get(`/playbooks/${playbook}/assemblies/${assembly.objectIdentifier}/download-url`);
    expect(res.status).toBe(200);
    expect(Date.parse(res.body.expiresAt)).toBeGreaterThan(Date.parse(assembly.dateAdded));
    const fresh = await download(res.body.url);
    expect(fresh.status).toBe(200);
    expect(Buffer.compare(fresh.bytes, binary)).toBe(0);
    handle.advanceClock(Date.parse(res.body.expiresAt) - Date.parse(assembly.dateAdded) + 1000);
    expect((await download(res.body.url)).status).toBe(403);
  });

  it('stores the rich-text tree as given; an assembly without one answers an empty document', async () => {
    const playbook = await newPlaybook();
    const assembly = (await createAssembly(playbook)).body;
    const richText = `/playbooks/${playbook}/assemblies/${assembly.objectIdentifier}/rich-text`;
    expect((await client.get(richText)).body).toEqual({ type: 'doc', content: [] });
    const tree = {
      type: 'doc',
      content: [
        { type: 'heading', attrs: { level: 1, textAlign: 'left' }, content: [{ type: 'text', text: 'Letter', marks: [{ type: 'bold' }] }] },
        { type: 'reference', attrs: { uuid: randomUUID(), label: 'Client', custom: 'kept' }, content: [] },
      ],
    };
    const stored = await client.put(richText, tree);
    expect(stored.status).toBe(200);
    expect(stored.body).toEqual(tree);
    expect((await client.get(richText)).body).toEqual(tree);
    expect((await client.put(richText, { content: [] })).status).toBe(400);
    expect((await client.put(richText, { type: 'doc', attrs: { uuid: 'not-a-uuid' } })).status).toBe(400);
    expect((await client.put(`/playbooks/${playbook}/assemblies/${randomUUID()}/rich-text`, tree)).status).toBe(404);
  });

  it('refuses trees nested too deeply to validate (400), and takes ones just within the limit', async () => {
    const playbook = await newPlaybook();
    const assembly = (await createAssembly(playbook)).body;
    const richText = `/playbooks/${playbook}/assemblies/${assembly.objectIdentifier}/rich-text`;
    // Each node level is two JSON levels (the node and its content array).
    const nested = (levels: number) => {
      let tree: object = { type: 'text', text: 'deep' };
      for (let i = 0; i < levels; i++) tree = { type: 'paragraph', content: [tree] };
      return tree;
    };
    const within = nested(Math.floor(MAX_JSON_DEPTH / 2) - 1);
    expect((await client.put(richText, within)).body).toEqual(within);
    const tooDeep = await client.put(richText, nested(MAX_JSON_DEPTH));
    expect(tooDeep.status).toBe(400);
    expect(tooDeep.body.detail).toMatch(/deeper than/);
  });

  it('shows the assemblies in the playbook: word assembly and group counts', async () => {
    const playbook = await newPlaybook();
    await createAssembly(playbook, { PlaybookGroupId: randomUUID() }, 'docx bytes');
    await createAssembly(playbook, { PlaybookGroupId: randomUUID() });
    const listed = await client.post('/playbooks/search/all', { searchText: (await client.get('/playbooks')).body.items.find((p: any) => p.objectIdentifier === playbook).name });
    expect(listed.body.items[0]).toMatchObject({ hasWordAssembly: true, groupCount: 2, hasMultipleGroups: true });
  });
});

describe('template columns and category conditions', () => {
  const reference = randomUUID();
  const condition = randomUUID();
  const otherReference = randomUUID();
  const otherCondition = randomUUID();
  let playbook: string;
  let assembly: string;
  let referenceBase: string;

  beforeAll(async () => {
    playbook = await newPlaybook();
    assembly = (await createAssembly(playbook)).body.objectIdentifier;
    referenceBase = `/playbooks/${playbook}/assemblies/${assembly}/references`;
    const tree = {
      type: 'doc',
      content: [
        { type: 'paragraph', content: [{ type: 'reference', attrs: { uuid: reference }, content: [{ type: 'condition', attrs: { uuid: condition } }] }] },
        { type: 'reference', attrs: { uuid: otherReference }, content: [{ type: 'condition', attrs: { uuid: otherCondition } }] },
        { type: 'condition', attrs: { uuid: randomUUID() } },
      ],
    };
    expect((await client.put(`/playbooks/${playbook}/assemblies/${assembly}/rich-text`, tree)).status).toBe(200);
  });

  it('exist only for references the assembly’s rich text declares', async () => {
    expect((await client.get(`${referenceBase}/${reference}/template-columns`)).status).toBe(200);
    const undeclared = await client.get(`${referenceBase}/${randomUUID()}/template-columns`);
    expect(undeclared.status).toBe(404);
    expect((await client.post(`${referenceBase}/${randomUUID()}/template-columns`, { name: 'x' })).status).toBe(404);
    expect((await client.get(`${referenceBase}/${reference}/conditions/${otherCondition}/category-conditions`)).status).toBe(404);
    expect((await client.get(`${referenceBase}/${otherReference}/conditions/${otherCondition}/category-conditions`)).status).toBe(200);
    expect((await client.get(`${referenceBase}/${reference}/template-columns`.replace(assembly, randomUUID()))).status).toBe(404);
  });

  it('template columns: create (201), list {items, totalCount} with page 1 / pageSize 20 by default, read, update, delete (204)', async () => {
    const base = `${referenceBase}/${reference}/template-columns`;
    const template = { type: 'doc', content: [{ type: 'text', text: '{{client}}' }] };
    const created = await client.post(base, { name: 'Client', template });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ objectIdentifier: expect.any(String), assemblyReferenceObjectIdentifier: reference, name: 'Client', template });
    const bare = await client.post(base, { name: 'No template' });
    expect(bare.body.template).toEqual({ type: 'doc', content: [] });
    for (let i = 0; i < 20; i++) await client.post(base, { name: `Column ${i}` });
    const firstPage = await client.get(base);
    expect(firstPage.body.totalCount).toBe(22);
    expect(firstPage.body.items).toHaveLength(20);
    expect(firstPage.body.items[0]).toEqual(created.body);
    expect((await client.get(base, { page: 2, pageSize: 20 })).body.items.map((c: any) => c.name)).toEqual(['Column 18', 'Column 19']);

    const id = created.body.objectIdentifier;
    expect((await client.get(`${base}/${id}`)).body).toEqual(created.body);
    const updated = await client.put(`${base}/${id}`, { name: 'Client name' });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ objectIdentifier: id, name: 'Client name', template: { type: 'doc', content: [] } });
    expect((await client.put(`${base}/${id}`, { template })).status).toBe(400);
    expect((await client.delete(`${base}/${id}`)).status).toBe(204);
    expect((await client.get(`${base}/${id}`)).status).toBe(404);
    expect((await client.get(`${referenceBase}/${otherReference}/template-columns/${bare.body.objectIdentifier}`)).status).toBe(404);
  });

  it('category conditions: create (201, text required but nullable), list, read, update, delete (204)', async () => {
    const base = `${referenceBase}/${reference}/conditions/${condition}/category-conditions`;
    const created = await client.post(base, { text: 'Tax', fuzzyMatch: true });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ objectIdentifier: expect.any(String), assemblyReferenceConditionObjectIdentifier: condition, fuzzyMatch: true, text: 'Tax' });
    const nullText = await client.post(base, { text: null });
    expect(nullText.body).toMatchObject({ text: null, fuzzyMatch: false });
    expect((await client.post(base, { fuzzyMatch: true })).status).toBe(400);
    expect((await client.get(base)).body).toEqual({ items: [created.body, nullText.body], totalCount: 2 });
    const id = created.body.objectIdentifier;
    const updated = await client.put(`${base}/${id}`, { text: 'Taxes', fuzzyMatch: false });
    expect(updated.body).toMatchObject({ objectIdentifier: id, text: 'Taxes', fuzzyMatch: false });
    expect((await client.get(`${base}/${id}`)).body).toEqual(updated.body);
    expect((await client.delete(`${base}/${id}`)).status).toBe(204);
    expect((await client.delete(`${base}/${id}`)).status).toBe(404);
  });

  it('disappear with a rich text that no longer declares them, and with their assembly', async () => {
    const second = (await createAssembly(playbook)).body.objectIdentifier;
    const richText = `/playbooks/${playbook}/assemblies/${second}/rich-text`;
    const ref = randomUUID();
    await client.put(richText, { type: 'reference', attrs: { uuid: ref } });
    const base = `/playbooks/${playbook}/assemblies/${second}/references/${ref}/template-columns`;
    const column = (await client.post(base, { name: 'Kept' })).body;
    await client.put(richText, { type: 'doc' });
    expect((await client.get(base)).status).toBe(404);
    await client.put(richText, { type: 'reference', attrs: { uuid: ref } });
    expect((await client.get(base)).body.items).toEqual([column]);
    expect((await client.delete(`/playbooks/${playbook}/assemblies/${second}`)).status).toBe(200);
    expect((await client.get(base)).status).toBe(404);
  });
});
