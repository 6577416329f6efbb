// `ferry playbooks import BACKUP_FOLDER` (issue 77): the folder a backup writes is restored as a
// whole, each playbook from its newest whole archive; a damaged newer one is passed over and named,
// a playbook with none whole fails with why, and a folder that is no backup is refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { startService, type Service } from '../helpers/service.js';
import { buildRichPlaybook } from '../helpers/playbook.js';
import { backupPlaybooks, readIndex } from '../../jobs/playbooks.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';
import { onlyJson, runFerry } from '../helpers/cli.js';

let service: Service;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.close());

describe('ferry playbooks import BACKUP_FOLDER', () => {
  it('restores each playbook from its newest whole archive into another tenant, naming what it passed over', async () => {
    const client = service.client();
    const tenant = service.emulator.tenants[0]!;
    const kept = await buildRichPlaybook(client, tenant, { name: 'Restore kept' });
    const damaged = await buildRichPlaybook(client, tenant, { name: 'Restore damaged' });
    const dir = await mkdtemp(join(tmpdir(), 'ferry-restore-'));
    const out = join(dir, 'backups');
    const store = new SqliteCheckpointStore(join(dir, 'state.sqlite'));
    try {
      await backupPlaybooks({ out, now: new Date('2026-11-20T01:00:00Z') }, { client, store });
      // The second playbook changes, so its second backup is a new archive; then that one is damaged.
      await client.playbookMetadata.create(damaged.id, { organizationMetadataIdentifier: tenant.organizationMetadata.find((d) => d.name === 'Effective date')!.objectIdentifier, date: '2026-11-20T00:00:00Z' });
      await backupPlaybooks({ out, now: new Date('2026-11-21T01:00:00Z') }, { client, store });
    } finally {
      store.close();
    }
    const index = await readIndex(out);
    const mine = (id: string) => index.backups.filter((b) => b.playbookIdentifier === id).sort((a, b) => a.exportedAt.localeCompare(b.exportedAt));
    expect(mine(kept.id)).toHaveLength(1);
    expect(mine(damaged.id)).toHaveLength(2);
    const [older, newer] = mine(damaged.id) as [(typeof index.backups)[number], (typeof index.backups)[number]];
    const bytes = await readFile(join(out, newer.file));
    await writeFile(join(out, newer.file), bytes.subarray(0, bytes.length >> 1));

    const env = { ...service.env(1), FERRY_STATE_DIR: join(dir, 'state') };
    const r = await runFerry(['playbooks', 'import', out, '--mode', 'server', '--json'], env);
    const answer = onlyJson(r);
    expect(answer, r.stderr).toMatchObject({ status: 'succeeded', exitCode: 0, counts: { playbooks: 2, restored: 2, failed: 0 } });
    const restored = answer.restored as { playbookIdentifier: string; archive: string; passedOver: { file: string; why: string }[] }[];
    const of = (id: string) => restored.find((x) => x.playbookIdentifier === id)!;
    expect(of(kept.id)).toMatchObject({ archive: join(out, mine(kept.id)[0]!.file), passedOver: [] });
    expect(of(damaged.id).archive).toBe(join(out, older.file));
    expect(of(damaged.id).passedOver).toEqual([{ file: newer.file, why: expect.stringMatching(/holds \d+ bytes, \d+ were written/) }]);
    // The other tenant now holds both, by name.
    const names = (await service.client({}, 1).playbooks.searchAll().all()).map((p) => p.name);
    expect(names).toEqual(expect.arrayContaining(['Restore kept', 'Restore damaged']));

    // Text: each restore says where from; run again, everything is already in place.
    const again = await runFerry(['playbooks', 'import', out, '--mode', 'server'], env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(`restore Restore damaged (${damaged.id}) from ${join(out, older.file)}, exported ${older.exportedAt}; newer, not whole: ${newer.file} (it holds`);
    expect(again.stdout).toContain('restored 2 of 2 playbooks from');
    expect((await service.client({}, 1).playbooks.searchAll().all()).filter((p) => p.name === 'Restore kept')).toHaveLength(1);
  });

  it('a playbook with no whole archive fails naming why; a folder without an index is refused', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-restore-'));
    const out = join(dir, 'backups');
    await mkdir(join(out, 'gone'), { recursive: true });
    await writeFile(join(out, 'index.json'), JSON.stringify({ format: 'ferry-playbook-backups', version: 1, backups: [{ playbookIdentifier: '0f3c2a9e-5b1d-4c8e-9a7f-2d6e8b1c4a50', name: 'Gone', file: 'gone/20261120T010000Z.zip', exportedAt: '2026-11-20T01:00:00.000Z', bytes: 10, sha256: 'x', contentSha256: 'y' }] }));
    const env = { ...service.env(1), FERRY_STATE_DIR: join(dir, 'state') };
    const r = await runFerry(['playbooks', 'import', out, '--mode', 'server'], env);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('restore Gone (0f3c2a9e-5b1d-4c8e-9a7f-2d6e8b1c4a50): FAILED: no backup of playbook 0f3c2a9e-5b1d-4c8e-9a7f-2d6e8b1c4a50 in');
    expect(r.stdout).toContain('gone/20261120T010000Z.zip (it is not on disk)');
    expect(r.stdout).toContain('restored 0 of 1 playbook from');
    const plain = await runFerry(['playbooks', 'import', join(out, 'gone'), '--mode', 'server'], env);
    expect(plain.code).toBe(2);
    expect(plain.stderr).toContain("is a folder without index.json: not one `ferry playbooks backup` wrote; give one archive (.zip), or the backup folder");
  });
});
