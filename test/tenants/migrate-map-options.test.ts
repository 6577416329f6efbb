// A migration carries every option of every definition it maps, including one that no selected
// project or playbook uses: `--map` naming a definition is a request to carry it. A name the source
// shows nowhere cannot be looked up (the interface lists no definitions): it is said.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { startService, type Service } from '../helpers/service.js';
import { migrate } from '../../jobs/migrate.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';

let service: Service;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.close());

const definition = (tenant: number, name: string) => service.emulator.tenants[tenant]!.organizationMetadata.find((d) => d.name === name)!.objectIdentifier;

describe('migrate --map and the options of mapped definitions', () => {
  it('carries every option of a mapped definition that the selection does not use; says an unknown name', async () => {
    const from = service.client({}, 0);
    const to = service.client({}, 1);
    const practice = definition(0, 'Practice areas');
    for (const name of ['Only at the source 1', 'Only at the source 2']) await from.organizationMetadataOptions.create(practice, name);
    const wanted = (await from.organizationMetadataOptions.list(practice).all()).map((o) => o.name).sort();
    // A project without metadata: nothing in the selection uses "Practice areas".
    const project = (await from.projects.create({ name: 'Plain', description: 'no metadata' })).objectIdentifier;
    const dir = await mkdtemp(join(tmpdir(), 'ferry-map-options-'));
    const store = new SqliteCheckpointStore(join(dir, 'state.sqlite'));
    try {
      const mapping = { organizationMetadata: { [practice]: definition(1, 'Practice areas') } };
      const summary = await migrate({ projects: [project], mapping }, { from, to, store });
      expect(summary.status).toBe('succeeded');
      expect(summary.options).toMatchObject({ definitions: 1, options: wanted.length });
      const carried = (await to.organizationMetadataOptions.list(definition(1, 'Practice areas')).all()).map((o) => o.name);
      expect(carried).toEqual(expect.arrayContaining(wanted));

      // A name the source shows nowhere cannot be looked up: said, not carried, not an error.
      const again = await migrate({ projects: [project], mapping: { organizationMetadata: { 'No such definition': definition(1, 'Region') } } }, { from, to, store });
      expect(again.status).toBe('succeeded');
      expect(again.options).toMatchObject({ definitions: 0, mapNamesNotFound: ['No such definition'] });
    } finally {
      store.close();
    }
  });
});
