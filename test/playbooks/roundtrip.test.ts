// A playbook with every kind of sub-resource: exported from tenant A (uk), imported by replay into
// tenant B (us) and by server mode into A, each result exported again. The archives are equal
// except for ids and dates, field by field.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { startService, type Service } from '../helpers/service.js';
import { buildRichPlaybook, comparable } from '../helpers/playbook.js';
import { exportPlaybooks, importArchive } from '../../jobs/playbooks.js';
import { openArchive } from '../../src/playbooks/read.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';
import type { CheckpointStore } from '../../src/store/types.js';

let service: Service;
let store: CheckpointStore;
let dir: string;
beforeAll(async () => {
  service = await startService();
  dir = await mkdtemp(join(tmpdir(), 'ferry-roundtrip-'));
  store = new SqliteCheckpointStore(join(dir, 'state.sqlite'));
});
afterAll(async () => {
  store.close();
  await service.close();
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

async function exportOne(client: ReturnType<Service['client']>, id: string, name: string) {
  const summary = await exportPlaybooks({ ids: [id], all: false, out: join(dir, name) }, { client, store });
  expect(summary.status, JSON.stringify(summary.errors)).toBe('succeeded');
  return openArchive(join(dir, name));
}

/** Template files (paths, sizes, sha256) of an archive. */
function files(archive: Awaited<ReturnType<typeof openArchive>>) {
  return archive.manifest.entries.filter((e) => e.path !== 'playbook.json');
}

describe('playbook round trip', () => {
  it('A -> replay into B, and -> server import into A: re-exports equal but for ids and dates', async () => {
    const a = service.client({}, 0);
    const b = service.client({}, 1);
    const built = await buildRichPlaybook(a, service.emulator.tenants[0]!);
    const original = await exportOne(a, built.id, 'original.zip');

    // Tenant B's definitions have other ids: the mapping file names them.
    const mapping = { organizationMetadata: Object.fromEntries(service.emulator.tenants[1]!.organizationMetadata.map((d) => [d.name, d.objectIdentifier])) };
    const replayed = await importArchive({ file: original.path, mode: 'replay', mapping }, { client: b, store });
    expect(replayed.status, JSON.stringify(replayed.errors)).toBe('succeeded');
    // playbook 1, metadata 4, reference materials 3, assemblies 2, files 2, columns 4, conditions 4
    expect(replayed.counts).toMatchObject({ discovered: 20, uploaded: 20, reconciled: 0, skipped: 0, failed: 0 });
    const inB = await exportOne(b, replayed.playbookIdentifier as string, 'from-b.zip');

    const served = await importArchive({ file: original.path, mode: 'server' }, { client: a, store });
    expect(served.status, JSON.stringify(served.errors)).toBe('succeeded');
    expect(served.playbookIdentifier).toMatch(UUID);
    expect(served.playbookIdentifier).not.toBe(built.id);
    const inA = await exportOne(a, served.playbookIdentifier as string, 'from-a.zip');

    for (const copy of [inB, inA]) {
      expect(comparable(copy.playbook)).toEqual(comparable(original.playbook));
      expect(files(copy)).toEqual(files(original));
    }
    // Ids really are new, and the rich text points at the recreated reference material.
    expect(inB.playbook.referenceMaterials[0]!.objectIdentifier).not.toBe(original.playbook.referenceMaterials[0]!.objectIdentifier);
    const refNode = inB.playbook.assemblies[0]!.richText.content![1]!;
    expect(refNode.attrs!.id).toBe(inB.playbook.referenceMaterials[0]!.objectIdentifier);
  });
});
