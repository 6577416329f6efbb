// Migration when the source misbehaves: a document whose content URL keeps failing is reported,
// retried on the next run and never duplicated; a document deleted at the source between the
// listing and its copy is reported, not fatal; verify finds what differs; a definition the target
// lacks stops the migration before any write.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { migrate, planMigration, verifyMigration } from '../../jobs/migrate.js';
import { mirror } from '../../jobs/mirror.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';
import { remoteFiles, startService, writeTree, type Service } from '../helpers/service.js';

let a: Service;
let b: Service;
beforeAll(async () => {
  [a, b] = await Promise.all([startService(), startService()]);
});
afterAll(async () => {
  await Promise.all([a.close(), b.close()]);
});

async function sourceProject(name: string, files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-migrate-faults-'));
  const client = a.client();
  const project = (await client.projects.create({ name, description: 'faults' })).objectIdentifier;
  await writeTree(join(dir, 'src'), files);
  const store = new SqliteCheckpointStore(join(dir, 'mirror.sqlite'));
  await mirror({ source: join(dir, 'src'), project }, { client, store });
  store.close();
  return project;
}

describe('ferry migrate against a misbehaving source', () => {
  it('reports a failing content URL and a document gone at the source; the rerun copies the first once and verify agrees', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 12; i++) files[`f/doc${i}.txt`] = `content ${i}`;
    // An empty file fails processing at the source (badFile): not carried, said so.
    files['f/empty.txt'] = '';
    const project = await sourceProject('faulty source', files);
    const from = a.client();
    for (let poll = 0; !(await remoteFiles(from, project)).some((d) => d.uploadFailedReason); poll++) {
      if (poll > 500) throw new Error('the empty file never finished processing');
      await new Promise((r) => setTimeout(r, 10));
    }
    const to = b.client({}, 1);
    const docs = await remoteFiles(from, project);
    const broken = docs.find((d) => d.path === '/f/doc3.txt')!;
    const gone = docs.find((d) => d.path === '/f/doc7.txt')!;
    // Each document's content as the service gives it: its url (a route, or a signed link in strict mode).
    const content = (d: typeof broken) => new URL(d.url!).pathname;
    a.emulator.setFaults({ rules: [{ kind: '500', method: 'GET', path: content(broken) }, { kind: '404', method: 'GET', path: content(gone) }] });
    const store = new SqliteCheckpointStore(join(await mkdtemp(join(tmpdir(), 'ferry-migrate-faults-')), 'state.sqlite'));
    const deps = { from, to, store };

    const first = await migrate({ projects: [project], concurrency: 4 }, deps);
    expect(first.status).toBe('failed');
    expect(first.counts).toMatchObject({ discovered: 14, uploaded: 11, skipped: 2, failed: 1 });
    expect(first.errors).toEqual([{ key: 'f/doc3.txt', error: expect.stringMatching(/500/) }]);
    expect(first.problems).toEqual(
      expect.arrayContaining([
        { key: 'f/doc7.txt', reason: 'skipped: the document is gone from the source since it was listed (its content answers 404)' },
        { key: 'f/empty.txt', reason: 'skipped: its processing failed at the source (badFile): not carried' },
      ]),
    );
    const target = (first.projects as { target: string }[])[0]!.target;
    expect((await remoteFiles(to, target)).map((d) => d.path).sort()).toHaveLength(10);

    // The URL works again; the deleted document stays deleted.
    a.emulator.setFaults({ rules: [{ kind: '404', method: 'GET', path: content(gone) }] });
    const second = await migrate({ projects: [project] }, deps);
    expect(second.counts).toMatchObject({ uploaded: 1, unchanged: 10, skipped: 2, failed: 0 });
    expect(second.status).toBe('succeeded');
    const paths = (await remoteFiles(to, target)).map((d) => d.path ?? '');
    expect(new Set(paths).size).toBe(paths.length);
    expect(paths.sort()).toEqual(Object.keys(files).filter((k) => k !== 'f/doc7.txt' && k !== 'f/empty.txt').map((k) => `/${k}`).sort());

    // Verify lists the one document the target lacks, then every change made on the target.
    a.emulator.setFaults({});
    const report = await verifyMigration({ projects: [project] }, deps);
    expect(report.differences).toEqual([{ kind: 'document', where: expect.stringContaining('/f/doc7.txt'), what: 'missing on the target' }]);
    // A second document at f/doc5.txt: in its folder, or flattened with its path in the metadata.
    const five = (await remoteFiles(to, target)).find((d) => d.path === '/f/doc5.txt')!;
    await to.documents.upload(
      target,
      { stream: (await import('node:stream')).Readable.from([Buffer.from('content 5')]), size: 9, filename: 'doc5.txt' },
      { documentUploadIdentifier: crypto.randomUUID(), ...(five.parentObjectIdentifier ? { parentObjectIdentifier: five.parentObjectIdentifier } : { metadata: { 'ferry.relativePath': 'f/doc5.txt' } }) },
    );
    await to.projects.update(target, { name: 'renamed on the target', description: 'faults' });
    const after = await verifyMigration({ projects: [project] }, deps);
    expect(after.differences.map((d) => `${d.kind}: ${d.what}`).sort()).toEqual(
      ['document: 2 documents at this path on the target (expected 1)', 'document: missing on the target', 'project: name "renamed on the target" on the target'].sort(),
    );
    store.close();
  });

  it('stops before any write when the target lacks a definition, and the plan says so', async () => {
    const from = a.client();
    const to = b.client({}, 1);
    const tenant = a.emulator.tenants[0]!;
    const department = tenant.organizationMetadata.find((d) => d.name === 'Department')!.objectIdentifier;
    const project = (await from.projects.create({ name: 'needs Department', description: '', metadata: [{ organizationMetadataIdentifier: department, text: 'Legal' }] })).objectIdentifier;
    const store = new SqliteCheckpointStore(join(await mkdtemp(join(tmpdir(), 'ferry-migrate-faults-')), 'state.sqlite'));
    const plan = await planMigration({ projects: [project] }, { from, to, store });
    expect(plan.blockers).toEqual([expect.stringContaining('the target shows no organization metadata named as "Department"')]);
    const before = (await to.projects.list().all()).length;
    await expect(migrate({ projects: [project] }, { from, to, store })).rejects.toThrow(/no organization metadata named as "Department"/);
    expect((await to.projects.list().all()).length).toBe(before);
    store.close();
  });
});
