// Export: everything reachable from a playbook into one deterministic archive.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import unzipper from 'unzipper';
import { startService, type Service } from '../helpers/service.js';
import { buildRichPlaybook } from '../helpers/playbook.js';
import { exportPlaybook, findPlaybook } from '../../src/playbooks/export.js';
import { openArchive } from '../../src/playbooks/read.js';

let service: Service;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.close());

describe('playbook export', () => {
  it('captures every sub-resource, and an unchanged playbook exports to identical bytes', async () => {
    const client = service.client();
    const built = await buildRichPlaybook(client, service.emulator.tenants[0]!);
    const dir = await mkdtemp(join(tmpdir(), 'ferry-export-'));
    const playbook = await findPlaybook(client, built.id);
    const first = await exportPlaybook(client, playbook, join(dir, 'a.zip'));
    const second = await exportPlaybook(client, playbook, join(dir, 'b.zip'));
    expect(first.parts).toEqual({ playbook: 1, metadata: 4, referenceMaterials: 3, assemblies: 2, files: 2, templateColumns: 4, categoryConditions: 4 });
    expect(Buffer.compare(await readFile(join(dir, 'a.zip')), await readFile(join(dir, 'b.zip')))).toBe(0);
    expect(second.sha256).toBe(first.sha256);
    // Only the two archives: no temporary file left behind.
    expect((await readdir(dir)).sort()).toEqual(['a.zip', 'b.zip']);

    // What ferry writes, ferry's own guarded reader accepts.
    expect((await openArchive(join(dir, 'a.zip'))).playbook.assemblies).toHaveLength(2);

    const zip = await unzipper.Open.file(join(dir, 'a.zip'));
    expect(zip.files.map((f) => f.path)).toEqual(['assemblies/0001/template-1.docx', 'assemblies/0002/template-2.docx', 'playbook.json', 'manifest.json']);
    const manifest = JSON.parse((await zip.files.find((f) => f.path === 'manifest.json')!.buffer()).toString());
    expect(manifest).toMatchObject({ format: 'ferry-playbook', version: 2, playbook: { objectIdentifier: built.id, name: 'Supplier contracts' } });
    expect(manifest.entries.map((e: { path: string }) => e.path)).toEqual(['assemblies/0001/template-1.docx', 'assemblies/0002/template-2.docx', 'playbook.json']);
    const doc = JSON.parse((await zip.files.find((f) => f.path === 'playbook.json')!.buffer()).toString());
    const region = doc.metadata.find((m: { organizationMetadataName: string }) => m.organizationMetadataName === 'Region');
    expect(region.singleCategoryName).toBe('Europe');
    const practice = doc.metadata.find((m: { organizationMetadataName: string }) => m.organizationMetadataName === 'Practice areas');
    expect(practice.categoryNames).toEqual(['Corporate', 'Tax']);
    expect(Object.keys(doc.assemblies[0].templateColumns)).toEqual([built.references[0]]);
    expect(Object.keys(doc.assemblies[0].categoryConditions)).toEqual([built.conditions[0]]);
  });
});
