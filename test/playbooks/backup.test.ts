// Backups: a new archive only when a playbook changed, retention by count, day and week, an index
// of what is where, and verify over the whole folder.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readdir, writeFile, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { startService, type Service } from '../helpers/service.js';
import { buildRichPlaybook } from '../helpers/playbook.js';
import { backupPlaybooks, readIndex, verifyArchives } from '../../jobs/playbooks.js';
import { isoWeek, toKeep } from '../../src/playbooks/retention.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';

let service: Service;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.close());

const at = (iso: string) => new Date(iso);

describe('retention rules', () => {
  const b = (exportedAt: string) => ({ exportedAt });
  const all = ['2026-11-02T01:00:00Z', '2026-11-09T01:00:00Z', '2026-11-16T01:00:00Z', '2026-11-20T01:00:00Z', '2026-11-20T13:00:00Z', '2026-11-21T01:00:00Z', '2026-11-22T01:00:00Z'].map(b);
  const kept = (rules: Parameters<typeof toKeep>[1]) => [...toKeep(all, rules)].map((x) => x.exportedAt).sort();

  it('keeps everything without rules, the newest N with --keep, and never the newest alone out', () => {
    expect(kept({})).toHaveLength(7);
    expect(kept({ keep: 2 })).toEqual(['2026-11-21T01:00:00Z', '2026-11-22T01:00:00Z']);
    expect(kept({ keep: 0 })).toEqual(['2026-11-22T01:00:00Z']);
  });

  it('keeps the newest of each of the last N days and weeks, the union of all rules', () => {
    expect(kept({ keepDaily: 3 })).toEqual(['2026-11-20T13:00:00Z', '2026-11-21T01:00:00Z', '2026-11-22T01:00:00Z']);
    // Mon 16th to Sun 22nd is 2026-W47, the 9th W46, the 2nd W45: the newest of each.
    expect(kept({ keepWeekly: 3 })).toEqual(['2026-11-02T01:00:00Z', '2026-11-09T01:00:00Z', '2026-11-22T01:00:00Z']);
    expect(kept({ keep: 1, keepDaily: 2, keepWeekly: 2 })).toEqual(['2026-11-09T01:00:00Z', '2026-11-21T01:00:00Z', '2026-11-22T01:00:00Z']);
    expect(isoWeek(at('2026-01-01T00:00:00Z'))).toBe('2026-W01');
    expect(isoWeek(at('2027-01-01T00:00:00Z'))).toBe('2026-W53');
  });
});

describe('ferry playbooks backup', () => {
  it('writes an archive only when the playbook changed, prunes by --keep, and the index and verify agree', async () => {
    const client = service.client();
    const tenant = service.emulator.tenants[0]!;
    const first = await buildRichPlaybook(client, tenant, { name: 'Backup one' });
    await buildRichPlaybook(client, tenant, { name: 'Backup two', assemblies: 1 });
    const dir = await mkdtemp(join(tmpdir(), 'ferry-backup-'));
    const out = join(dir, 'backups');
    const store = new SqliteCheckpointStore(join(dir, 'state.sqlite'));
    const total = (await readIndex(out).catch(() => ({ backups: [] }))).backups.length;
    expect(total).toBe(0);
    try {
      const day1 = await backupPlaybooks({ out, now: at('2026-11-20T01:00:00Z'), keep: 2 }, { client, store });
      const playbooks = day1.counts.discovered;
      expect(day1.counts).toMatchObject({ uploaded: playbooks, unchanged: 0, skipped: 0, failed: 0 });

      // Nothing changed: nothing new is written.
      const day2 = await backupPlaybooks({ out, now: at('2026-11-21T01:00:00Z'), keep: 2 }, { client, store });
      // Unchanged is no skip: nothing to say of it by name.
      expect(day2.counts).toMatchObject({ uploaded: 0, unchanged: playbooks, skipped: 0, failed: 0 });
      expect(day2.errors).toEqual([]);
      expect(day2.problems.find((p) => p.key === first.id)).toBeUndefined();

      // One playbook changes three times: three new archives for it, the oldest pruned by --keep 2.
      for (const [i, when] of ['2026-11-22T01:00:00Z', '2026-11-23T01:00:00Z', '2026-11-24T01:00:00Z'].entries()) {
        await client.referenceMaterials.create(first.id, { name: `Added ${i}`, type: 'text', textValue: `change ${i}` });
        const run = await backupPlaybooks({ out, now: at(when), keep: 2 }, { client, store });
        expect(run.counts).toMatchObject({ uploaded: 1, unchanged: playbooks - 1 });
      }
      const index = await readIndex(out);
      const mine = index.backups.filter((b) => b.playbookIdentifier === first.id).map((b) => b.file.split('/')[1]).sort();
      expect(mine).toEqual(['20261123T010000Z.zip', '20261124T010000Z.zip']);
      const folder = index.backups.find((b) => b.playbookIdentifier === first.id)!.file.split('/')[0]!;
      expect((await readdir(join(out, folder))).sort()).toEqual(mine);
      // Every file the index names exists, and every zip on disk is in the index.
      const outcomes = await verifyArchives(out);
      expect(outcomes.every((o) => o.ok)).toBe(true);
      expect(outcomes.map((o) => o.path.slice(out.length + 1)).sort()).toEqual(index.backups.map((b) => b.file).sort());

      // A damaged archive is named, with the entry at fault.
      const victim = join(out, index.backups[0]!.file);
      const bytes = await readFile(victim);
      // Into the first entry's data: past its local header (30 bytes, then name and extra field).
      const dataAt = 30 + bytes.readUInt16LE(26) + bytes.readUInt16LE(28);
      bytes.write('XXXX', dataAt + 8, 'latin1');
      await writeFile(victim, bytes);
      const bad = (await verifyArchives(out)).filter((o) => !o.ok);
      expect(bad.map((o) => o.path)).toEqual([victim]);
      expect(bad[0]!.error).toMatch(/entry "assemblies\/0001\/template-1\.docx"/);
    } finally {
      store.close();
    }
  });
});

describe('ferry playbooks backup heals a damaged newest archive', () => {
  it('deleted, truncated and swapped newest archives are written again; verify reports each against the index', async () => {
    const client = service.client({}, 1);
    const tenant = service.emulator.tenants[1]!;
    const a = await buildRichPlaybook(client, tenant, { name: 'Heal a' });
    const b = await buildRichPlaybook(client, tenant, { name: 'Heal b', assemblies: 1 });
    const c = await buildRichPlaybook(client, tenant, { name: 'Heal c' });
    const dir = await mkdtemp(join(tmpdir(), 'ferry-heal-'));
    const out = join(dir, 'backups');
    const store = new SqliteCheckpointStore(join(dir, 'state.sqlite'));
    try {
      const first = await backupPlaybooks({ out, now: at('2026-11-20T01:00:00Z') }, { client, store });
      const n = first.counts.discovered;
      const index = await readIndex(out);
      const fileOf = (id: string) => join(out, index.backups.find((x) => x.playbookIdentifier === id)!.file);
      // a: deleted; b: truncated; c: replaced by b's (valid) archive.
      const bBytes = await readFile(fileOf(b.id));
      await rm(fileOf(a.id));
      await writeFile(fileOf(b.id), bBytes.subarray(0, bBytes.length >> 1));
      await writeFile(fileOf(c.id), bBytes);

      const report = (await verifyArchives(out)).filter((o) => !o.ok);
      const why = Object.fromEntries(report.map((o) => [o.path, o.error ?? '']));
      expect(Object.keys(why).sort()).toEqual([fileOf(a.id), fileOf(b.id), fileOf(c.id)].sort());
      expect(why[fileOf(a.id)]).toMatch(/not on disk/);
      expect(why[fileOf(b.id)]).toMatch(/not a readable zip|fails|missing|larger|holds/);
      expect(why[fileOf(c.id)]).toMatch(new RegExp(`holds playbook ${b.id}`));

      const next = await backupPlaybooks({ out, now: at('2026-11-21T01:00:00Z') }, { client, store });
      expect(next.counts).toMatchObject({ discovered: n, uploaded: 3, skipped: n - 3, failed: 0 });
      const healed = (next as unknown as { healed: { playbook: string; why: string; quarantinedAs?: string }[] }).healed;
      expect(healed.map((h) => h.playbook).sort()).toEqual([a.id, b.id, c.id].sort());
      // The damaged archives still on disk were moved aside, kept and named (a's was gone: its line left the index).
      const moved = Object.fromEntries(healed.map((h) => [h.playbook, h.quarantinedAs]));
      expect(moved[a.id]).toBeUndefined();
      expect(moved[b.id]).toMatch(/\.zip\.quarantined$/);
      expect(moved[c.id]).toMatch(/\.zip\.quarantined$/);
      expect(await readFile(join(out, moved[b.id]!))).toEqual(bBytes.subarray(0, bBytes.length >> 1));
      // verify is green again: every playbook has a good newest archive; the quarantined two are said as such.
      const after = await verifyArchives(out);
      expect(after.filter((o) => !o.ok)).toEqual([]);
      const quarantined = Object.fromEntries(after.filter((o) => o.quarantined).map((o) => [o.playbook?.objectIdentifier, o.quarantined?.why]));
      expect(Object.keys(quarantined).sort()).toEqual([b.id, c.id].sort());
      expect(quarantined[b.id]).toMatch(/holds \d+ bytes/);
      expect(quarantined[c.id]).toMatch(/holds \d+ bytes|sha256 is not the one written/);
      // Retention counts good archives only: the quarantined ones are no backups any more.
      expect((await readIndex(out)).backups.filter((x) => x.playbookIdentifier === b.id).map((x) => x.exportedAt)).toEqual(['2026-11-21T01:00:00.000Z']);
      const fresh = (await readIndex(out)).backups.filter((x) => x.exportedAt === '2026-11-21T01:00:00.000Z');
      expect(fresh.map((x) => x.playbookIdentifier).sort()).toEqual([a.id, b.id, c.id].sort());
      // And the run after that skips all of them: nothing is damaged any more.
      const third = await backupPlaybooks({ out, now: at('2026-11-22T01:00:00Z') }, { client, store });
      expect(third.counts).toMatchObject({ uploaded: 0, unchanged: n });
    } finally {
      store.close();
    }
  });
});

describe('an archive whose manifest lists one entry twice', () => {
  it('is refused by verify (and so by every import) with the entry named', async () => {
    const { minimalEntries, playbookArchive } = await import('../helpers/archives.js');
    const dir = await mkdtemp(join(tmpdir(), 'ferry-dup-manifest-'));
    const file = join(dir, 'dup.zip');
    const entries = minimalEntries();
    await writeFile(
      file,
      await playbookArchive(entries, (manifest) => {
        const first = manifest.entries[0];
        manifest.entries.push({ ...first, sha256: '0'.repeat(64) });
      }),
    );
    const [outcome] = await verifyArchives(file);
    expect(outcome!.ok).toBe(false);
    expect(outcome!.error).toMatch(/lists entry ".*" more than once/);
  });
});
