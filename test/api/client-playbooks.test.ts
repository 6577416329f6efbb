// The typed client's playbook parts against the emulator, end to end over real HTTP.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import archiver from 'archiver';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { FerryClient, ConflictError, NotFoundError } from '../../src/api/index.js';
import { collect } from '../helpers/test-server.js';
import { startService, type Service } from '../helpers/service.js';

let service: Service;
let client: FerryClient;
beforeAll(async () => {
  service = await startService();
  client = service.client();
});
afterAll(() => service.close());
afterEach(() => expect(service.emulator.contractViolations).toEqual([]));

const bytes = (s: string, filename = 'template.docx') => ({ stream: Readable.from([Buffer.from(s)]), size: Buffer.byteLength(s), filename });
const playbook = async (name = `pb ${randomUUID()}`) => (await client.playbooks.create({ name, description: 'd', isPrivate: false, organizationWide: true })).objectIdentifier;

describe('client playbook parts against the emulator', () => {
  it('playbooks: create, list, search and search/all', async () => {
    const name = `Searchable ${randomUUID()}`;
    const id = await playbook(name);
    expect((await collect(client.playbooks.list({ searchText: name }))).map((p) => p.objectIdentifier)).toEqual([id]);
    expect((await collect(client.playbooks.search({ searchText: name }))).map((p) => p.objectIdentifier)).toEqual([id]);
    expect((await collect(client.playbooks.searchAll({ searchText: name }))).map((p) => p.objectIdentifier)).toEqual([id]);
  });

  it('playbook metadata and categories', async () => {
    const pb = await playbook();
    const definition = service.emulator.tenants[0]!.organizationMetadata.find((m) => m.dataType === 'multiCategory')!.objectIdentifier;
    const option = (await collect(client.organizationMetadataOptions.list(definition)))[0]!;
    const value = await client.playbookMetadata.create(pb, { organizationMetadataIdentifier: definition });
    await client.playbookMetadata.addCategory(pb, value.objectIdentifier, option.objectIdentifier);
    expect((await client.playbookMetadata.get(pb, value.objectIdentifier)).categories).toEqual([option.objectIdentifier]);
    await client.playbookMetadata.removeCategory(pb, value.objectIdentifier, option.objectIdentifier);
    expect((await collect(client.playbookMetadata.list(pb))).length).toBe(1);
    await client.playbookMetadata.delete(pb, value.objectIdentifier);
    expect(await collect(client.playbookMetadata.list(pb))).toEqual([]);
  });

  it('reference materials: a locked one cannot be deleted', async () => {
    const pb = await playbook();
    const locked = await client.referenceMaterials.create(pb, { name: 'Governing law', type: 'text', textValue: 'England', isLocked: true, categories: [{ name: 'Legal' }] });
    await expect(client.referenceMaterials.delete(pb, locked.objectIdentifier)).rejects.toBeInstanceOf(ConflictError);
    await client.referenceMaterials.update(pb, locked.objectIdentifier, { name: 'Governing law', isLocked: false });
    await client.referenceMaterials.delete(pb, locked.objectIdentifier);
    expect(await collect(client.referenceMaterials.list(pb))).toEqual([]);
  });

  it('assemblies: file content round trip, rich text, download URL, template columns and category conditions', async () => {
    const pb = await playbook();
    const assembly = await client.assemblies.create(pb, { name: 'NDA', description: 'template', type: 'docxFlowWide', file: bytes('docx template bytes') });
    const id = assembly.objectIdentifier!;
    const content = await client.assemblies.content(pb, id);
    expect(Buffer.concat(await content.body.toArray()).toString()).toBe('docx template bytes');
    await client.assemblies.replaceContent(pb, id, { path: await tempFile('second version') });
    expect(Buffer.concat(await (await client.assemblies.content(pb, id)).body.toArray()).toString()).toBe('second version');

    const reference = randomUUID();
    const condition = randomUUID();
    const tree = { type: 'doc', content: [{ type: 'reference', attrs: { uuid: reference }, content: [{ type: 'condition', attrs: { uuid: condition } }] }] };
    await client.assemblies.updateRichText(pb, id, tree);
    expect(await client.assemblies.richText(pb, id)).toEqual(tree);
    const link = await client.assemblies.downloadUrl(pb, id);
    expect(link.url).toMatch(/^http/);

    const ref = { playbookIdentifier: pb, assemblyIdentifier: id, referenceIdentifier: reference };
    const column = await client.templateColumns.create(ref, { name: 'Party', template: { type: 'doc' } });
    expect((await collect(client.templateColumns.list(ref))).map((c) => c.objectIdentifier)).toEqual([column.objectIdentifier]);
    await expect(client.templateColumns.list({ ...ref, referenceIdentifier: randomUUID() }).page(1)).rejects.toBeInstanceOf(NotFoundError);
    const cond = { ...ref, conditionIdentifier: condition };
    const cc = await client.categoryConditions.create(cond, { text: 'Mutual', fuzzyMatch: true });
    expect((await client.categoryConditions.get(cond, cc.objectIdentifier!)).text).toBe('Mutual');
    await client.assemblies.delete(pb, id);
    await expect(client.assemblies.get(pb, id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('document uploads: create, details and complete', async () => {
    const pb = await playbook();
    const batch = await client.documentUploads.create(pb, { name: 'batch', fileCount: 1 });
    await client.documents.upload(service.project, bytes('hello', 'hello.txt'), { documentUploadIdentifier: batch.objectIdentifier });
    await client.documentUploads.complete(pb, batch.objectIdentifier);
    let details = await client.documentUploads.details(pb, batch.objectIdentifier);
    for (let i = 0; i < 200 && !details.dateCompleted; i++) {
      await new Promise((r) => setTimeout(r, 10));
      details = await client.documentUploads.details(pb, batch.objectIdentifier);
    }
    expect(details).toMatchObject({ totalDocumentCount: 1, completedDocumentCount: 1, failedDocumentCount: 0, processingDocumentCount: 0 });
    expect((await collect(client.documentUploads.list(pb))).map((u) => u.objectIdentifier)).toEqual([batch.objectIdentifier]);
  });

  it('imports a playbook archive and learns the outcome from a notification', async () => {
    const zip = await playbookZip({ format: 'ferry-playbook', version: 1, playbook: { name: `Imported ${randomUUID()}`, description: 'from zip', isPrivate: false, organizationWide: true } });
    const task = await client.playbooks.import({ stream: Readable.from([zip]), size: zip.length, filename: 'playbook.zip' });
    expect(task.taskObjectIdentifier).toBeDefined();
    let done;
    for (let i = 0; i < 300 && !done; i++) {
      done = (await collect(client.notifications.list())).find((n) => n.resourceIdentifiers?.taskObjectIdentifier === task.taskObjectIdentifier);
      if (!done) await new Promise((r) => setTimeout(r, 10));
    }
    expect(done?.type).toBe('playbookImportSucceeded');
    const imported = done!.resourceIdentifiers!.playbookObjectIdentifier!;
    expect((await collect(client.playbooks.searchAll({}))).some((p) => p.objectIdentifier === imported)).toBe(true);
  });
});

async function tempFile(content: string): Promise<string> {
  const path = join(await mkdtemp(join(tmpdir(), 'ferry-asm-')), 'template.docx');
  await writeFile(path, content);
  return path;
}

async function playbookZip(manifest: unknown): Promise<Buffer> {
  const zip = archiver('zip');
  const chunks: Buffer[] = [];
  zip.on('data', (c: Buffer) => chunks.push(c));
  zip.append(JSON.stringify(manifest), { name: 'playbook.json' });
  await zip.finalize();
  return Buffer.concat(chunks);
}
