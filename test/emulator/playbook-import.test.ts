import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EmulatorHandle } from '../../src/emulator/index.js';
import { ArchiveError, checkEntryPath, readPlaybookArchive, ARCHIVE_LIMITS } from '../../src/emulator/service/playbook-archive.js';
import { createMemoryBlobStore } from '../../src/emulator/state/blobs.js';
import { type Client, clientFor, expectNoContractViolations, startTestEmulator } from './helpers.js';
import { sendForm, waitForNotification, zip } from './playbook-helpers.js';

let handle: EmulatorHandle;
let client: Client;

beforeAll(async () => {
  handle = await startTestEmulator();
  client = await clientFor(handle);
});
afterAll(() => handle.close());
afterEach(() => expectNoContractViolations(handle));

const reference = randomUUID();
const condition = randomUUID();
const richText = {
  type: 'doc',
  content: [{ type: 'paragraph', content: [{ type: 'reference', attrs: { uuid: reference, label: 'Party' }, content: [{ type: 'condition', attrs: { uuid: condition } }] }] }],
};
const template = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 13) % 256));

function manifest(overrides: Record<string, unknown> = {}) {
  return {
    format: 'ferry-playbook',
    version: 1,
    playbook: { name: `Imported ${randomUUID()}`, description: 'From an archive', isPrivate: false, organizationWide: true },
    metadata: [
      { organizationMetadataName: 'department', text: 'Legal' },
      { organizationMetadataName: 'Region', singleCategoryIdentifier: 'Europe' },
      { organizationMetadataName: 'Practice areas', categories: ['Tax', 'Corporate'] },
    ],
    referenceMaterials: [{ name: 'Policy', type: 'boolean', booleanValue: true, stableObjectIdentifier: '6f1c1c47-9d0e-4a8e-8f59-2f3f4f9a1b2c', categories: [{ name: 'HR' }] }],
    assemblies: [
      {
        name: 'Letter',
        description: 'Engagement letter',
        assemblyType: 'docxFlowWide',
        file: 'assemblies/letter.bin',
        richText,
        templateColumns: { [reference]: [{ name: 'Party name', template: { type: 'doc', content: [] } }, { name: 'Address' }] },
        categoryConditions: { [condition]: [{ fuzzyMatch: true, text: 'Tax' }] },
      },
      { name: 'Memo', assemblyType: 'docxFlowWide' },
    ],
    futureField: 'ignored by version 1 readers',
    ...overrides,
  };
}

async function importZip(content: Buffer): Promise<{ task: any; notification: any }> {
  const res = await sendForm(client, 'POST', '/playbooks/import', [{ name: 'importZip', file: content, fileName: 'playbook.zip' }]);
  expect(res.status).toBe(202);
  const notification = await waitForNotification(client, (n) => n.resourceIdentifiers.taskObjectIdentifier === res.body.taskObjectIdentifier);
  return { task: res.body, notification };
}

describe('playbook import', () => {
  it('answers 202 with a queued task, imports in the background and notifies the new playbook', async () => {
    const described = manifest();
    // The manifest comes last: the reader does not depend on entry order.
    const archive = await zip({ 'assemblies/letter.bin': template, 'unreferenced/readme.txt': 'ignored', 'playbook.json': JSON.stringify(described) });
    const { task, notification } = await importZip(archive);
    expect(task).toEqual({ taskObjectIdentifier: expect.any(String), type: 'playbookImport', status: 'queued' });
    expect(notification).toMatchObject({ type: 'playbookImportSucceeded', isRead: false, resourceIdentifiers: { taskObjectIdentifier: task.taskObjectIdentifier } });
    const playbook = notification.resourceIdentifiers.playbookObjectIdentifier as string;

    const found = await client.post('/playbooks/search', { searchText: described.playbook.name });
    expect(found.body.items).toMatchObject([{ objectIdentifier: playbook, description: 'From an archive', organizationWide: true, hasWordAssembly: true }]);
    const metadata = (await client.get(`/playbooks/${playbook}/metadata`)).body;
    expect(metadata.map((v: any) => v.metadata.name)).toEqual(['Department', 'Region', 'Practice areas']);
    expect(metadata[1].singleCategoryIdentifier).toBe(metadata[1].metadata.options.find((o: any) => o.name === 'Europe').objectIdentifier);
    expect(metadata[2].categories).toHaveLength(2);
    const materials = (await client.get(`/playbooks/${playbook}/reference-materials`)).body;
    expect(materials).toMatchObject([{ name: 'Policy', booleanValue: true, stableObjectIdentifier: '6f1c1c47-9d0e-4a8e-8f59-2f3f4f9a1b2c', categories: [{ name: 'HR' }] }]);

    const assemblies = (await client.get(`/playbooks/${playbook}/assemblies`)).body;
    expect(assemblies.items.map((a: any) => [a.name, a.description])).toEqual([
      ['Letter', 'Engagement letter'],
      ['Memo', ''],
    ]);
    const letter = `/playbooks/${playbook}/assemblies/${assemblies.items[0].objectIdentifier}`;
    const content = await fetch(`${handle.baseUrl}${letter}/content`, { headers: { authorization: `Bearer ${client.bearer}` } });
    expect(Buffer.compare(Buffer.from(await content.arrayBuffer()), template)).toBe(0);
    expect((await client.get(`${letter}/rich-text`)).body).toEqual(richText);
    const columns = (await client.get(`${letter}/references/${reference}/template-columns`)).body;
    expect(columns).toMatchObject({ totalCount: 2, items: [{ name: 'Party name' }, { name: 'Address', template: { type: 'doc', content: [] } }] });
    const conditions = (await client.get(`${letter}/references/${reference}/conditions/${condition}/category-conditions`)).body;
    expect(conditions).toMatchObject({ totalCount: 1, items: [{ fuzzyMatch: true, text: 'Tax', assemblyReferenceConditionObjectIdentifier: condition }] });
    expect((await client.get(`/playbooks/${playbook}/assemblies/${assemblies.items[1].objectIdentifier}/content`)).status).toBe(404);
  });

  const failures: { why: string; archive: () => Promise<Buffer>; reason: RegExp }[] = [
    { why: 'not a zip', archive: async () => Buffer.from('this is not a zip archive'), reason: /cannot be read/ },
    { why: 'an empty upload', archive: async () => Buffer.alloc(0), reason: /ends unexpectedly/ },
    { why: 'no manifest', archive: () => zip({ 'readme.txt': 'hello' }), reason: /no playbook\.json/ },
    { why: 'a manifest that is not JSON', archive: () => zip({ 'playbook.json': '{ nope' }), reason: /not valid JSON/ },
    { why: 'another format', archive: () => zip({ 'playbook.json': JSON.stringify(manifest({ format: 'other' })) }), reason: /"format": "ferry-playbook"/ },
    { why: 'an unknown version', archive: () => zip({ 'playbook.json': JSON.stringify(manifest({ version: 3 })) }), reason: /version 3 is not supported \(supported: 1, 2\)/ },
    { why: 'a version 2 archive without its entry list', archive: () => zip({ 'playbook.json': JSON.stringify(manifest({ version: 2 })), 'assemblies/letter.bin': 'x' }), reason: /needs manifest\.json/ },
    {
      why: 'a version 2 archive whose entry does not match the list',
      archive: () =>
        zip({
          'playbook.json': JSON.stringify(manifest({ version: 2 })),
          'assemblies/letter.bin': 'x',
          'manifest.json': JSON.stringify({ entries: [{ path: 'assemblies/letter.bin', size: 1, sha256: '0'.repeat(64) }] }),
        }),
      reason: /assemblies\/letter\.bin does not match its size and sha256 in manifest\.json/,
    },
    { why: 'a playbook without a name', archive: () => zip({ 'playbook.json': JSON.stringify(manifest({ playbook: { isPrivate: true } })) }), reason: /\/playbook must have required property 'name'/ },
    { why: 'a missing assembly file', archive: () => zip({ 'playbook.json': JSON.stringify(manifest()) }), reason: /assemblies\/letter\.bin, which the archive does not hold/ },
    {
      why: 'columns of an undeclared reference',
      archive: () =>
        zip({
          'playbook.json': JSON.stringify(manifest({ assemblies: [{ name: 'A', assemblyType: 't', templateColumns: { [randomUUID()]: [{ name: 'x' }] } }] })),
        }),
      reason: /which its rich text does not declare/,
    },
    {
      why: 'an unknown metadata definition',
      archive: () => zip({ 'playbook.json': JSON.stringify(manifest({ metadata: [{ organizationMetadataName: 'Shoe size', text: '42' }], assemblies: [] })) }),
      reason: /"Shoe size", which this organization does not have/,
    },
    {
      why: 'a truncated zip',
      archive: async () => {
        // Incompressible content, cut in the middle of its entry.
        const whole = await zip({ 'assemblies/letter.bin': randomBytes(70_000), 'playbook.json': JSON.stringify(manifest()) });
        return whole.subarray(0, 20_000);
      },
      reason: /ends unexpectedly \(empty or truncated\)/,
    },
  ];

  it.each(failures)('fails the task with a notification saying why: $why', async ({ archive, reason }) => {
    const { task, notification } = await importZip(await archive());
    expect(notification).toMatchObject({ type: 'playbookImportFailed', title: 'Playbook import failed' });
    expect(notification.resourceIdentifiers).toEqual({ taskObjectIdentifier: task.taskObjectIdentifier });
    expect(notification.message).toMatch(reason);
  });

  it('creates nothing when an archive fails half-way', async () => {
    const name = `Half ${randomUUID()}`;
    const archive = await zip({
      'assemblies/letter.bin': template,
      'playbook.json': JSON.stringify(manifest({ playbook: { name }, metadata: [{ organizationMetadataIdentifier: randomUUID(), text: 'x' }] })),
    });
    expect((await importZip(archive)).notification.type).toBe('playbookImportFailed');
    expect((await client.post('/playbooks/search/all', { searchText: name })).body.totalCount).toBe(0);
  });

  it('refuses a form without importZip (400) and a read-only client (403)', async () => {
    expect((await sendForm(client, 'POST', '/playbooks/import', [{ name: 'other', value: 'x' }])).status).toBe(400);
    expect((await client.post('/playbooks/import', { importZip: 'x' })).status).toBe(400);
    const reader = await clientFor(handle, 0, true);
    expect((await sendForm(reader, 'POST', '/playbooks/import', [{ name: 'importZip', file: 'x', fileName: 'a.zip' }])).status).toBe(403);
  });
});

describe('playbook archive reader', () => {
  it('refuses entry paths that climb out of the archive or are absolute', () => {
    for (const bad of ['../x', 'a/../../x', '/etc/passwd', '\\\\server\\share', 'C:/Windows/x', 'a\\..\\..\\x', 'nul\0byte']) {
      expect(() => checkEntryPath(bad)).toThrow(ArchiveError);
    }
    for (const good of ['playbook.json', 'assemblies/a.bin', 'a/..b/c.txt', 'dir/']) expect(() => checkEntryPath(good)).not.toThrow();
  });

  it('stops at the entry count and unpacked size limits and deletes what it stored', async () => {
    const blobs = createMemoryBlobStore();
    const keys: string[] = [];
    const read = (archive: Buffer, limits: typeof ARCHIVE_LIMITS) =>
      readPlaybookArchive(Readable.from([archive]), blobs, (n) => (keys.push(`t/${n}`), `t/${n}`), limits);
    const archive = await zip({ 'a.bin': Buffer.alloc(5000, 1), 'b.bin': Buffer.alloc(5000, 2), 'playbook.json': JSON.stringify(manifest({ assemblies: [] })) });
    await expect(read(archive, { ...ARCHIVE_LIMITS, maxEntries: 2 })).rejects.toThrow('more than 2 entries');
    await expect(read(archive, { ...ARCHIVE_LIMITS, maxTotalBytes: 8000 })).rejects.toThrow('more than 8000 bytes');
    await expect(read(archive, { ...ARCHIVE_LIMITS, maxManifestBytes: 10 })).rejects.toThrow('larger than 10 bytes');
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.filter((key) => blobs.has(key))).toEqual([]);
    const ok = await read(archive, ARCHIVE_LIMITS);
    expect([...ok.files.keys()]).toEqual(['a.bin', 'b.bin']);
  });
});

describe('persistence', () => {
  it('keeps playbooks and everything under them across a restart with dataDir, and resumes unfinished imports', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'ferry-playbooks-'));
    try {
      let emulator = await startTestEmulator({ dataDir });
      let c = await clientFor(emulator);
      const res = await sendForm(c, 'POST', '/playbooks/import', [
        { name: 'importZip', file: await zip({ 'assemblies/letter.bin': template, 'playbook.json': JSON.stringify(manifest()) }), fileName: 'p.zip' },
      ]);
      const notification = await waitForNotification(c, (n) => n.resourceIdentifiers.taskObjectIdentifier === res.body.taskObjectIdentifier);
      const playbook = notification.resourceIdentifiers.playbookObjectIdentifier;
      const upload = (await c.post(`/playbooks/${playbook}/document-uploads`, { name: 'Kept' })).body;
      expectNoContractViolations(emulator);
      await emulator.close();

      // An import the previous run accepted but had not started (as if it stopped right after the 202).
      const pending = randomUUID();
      const tenant = emulator.tenants[0]!;
      await writeFile(join(dataDir, 'blobs', 'playbook-imports', `${pending}.zip`), await zip({ 'playbook.json': JSON.stringify(manifest({ assemblies: [] })) }));
      const db = new Database(join(dataDir, 'state.sqlite'));
      db.prepare(
        `INSERT INTO playbook_imports (task_identifier, tenant, seq, status, date_added, owner_id, owner_name, owner_email, blob_key)
         VALUES (?, ?, 1000, 'queued', ?, ?, 'Importer', 'importer@example.com', ?)`,
      ).run(pending, tenant.name, new Date().toISOString(), tenant.clientId, `playbook-imports/${pending}.zip`);
      db.close();

      emulator = await startTestEmulator({ dataDir });
      try {
        c = await clientFor(emulator);
        const assembly = (await c.get(`/playbooks/${playbook}/assemblies`)).body.items[0];
        const base = `/playbooks/${playbook}/assemblies/${assembly.objectIdentifier}`;
        const content = await fetch(`${emulator.baseUrl}${base}/content`, { headers: { authorization: `Bearer ${c.bearer}` } });
        expect(Buffer.compare(Buffer.from(await content.arrayBuffer()), template)).toBe(0);
        expect((await c.get(`${base}/rich-text`)).body).toEqual(richText);
        expect((await c.get(`${base}/references/${reference}/template-columns`)).body.totalCount).toBe(2);
        expect((await c.get(`/playbooks/${playbook}/metadata`)).body).toHaveLength(3);
        expect((await c.get(`/playbooks/${playbook}/reference-materials`)).body).toHaveLength(1);
        expect((await c.get(`/playbooks/${playbook}/document-uploads/${upload.objectIdentifier}`)).body).toEqual(upload);
        const resumed = await waitForNotification(c, (n) => n.resourceIdentifiers.taskObjectIdentifier === pending);
        expect(resumed.type).toBe('playbookImportSucceeded');
        expectNoContractViolations(emulator);
      } finally {
        await emulator.close();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
