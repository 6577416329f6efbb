// The service is the truth: a mirror run in a fresh container (no checkpoint file), under a renamed
// profile or on another machine lists the project once and uploads only what differs. Each run is
// the `ferry` command as a cron job runs it, with its own FERRY_STATE_DIR.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { LAG_BOUND_MS, LAG_MS, STRICT, countingDispatcher, mirroredProject, remoteFiles, startService, writeTree, type Service } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';
import { mirror } from '../../jobs/mirror.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';
import { IDENTITY_KEYS } from '../../src/backends/project/identity.js';

let service: Service;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.close());

const FILES: Record<string, string> = {
  'a.txt': 'alpha',
  'docs/b.txt': 'bravo bravo',
  'docs/deep/c.md': '# charlie',
  'docs/deep/ünï cödé.txt': 'unicode',
  'empty.txt': '',
};
for (let i = 0; i < 10; i++) FILES[`many/f${i}.txt`] = `file number ${i}`;

type Summary = { status: string; counts: Record<string, number>; coldStart?: { reason: string; adopted: number; withoutFingerprint: number } };

describe('mirror with no checkpoint file', () => {
  it('three fresh state directories, a changed file and a renamed profile: each file once on the service', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-cold-'));
    const src = join(dir, 'tree');
    await writeTree(src, FILES);
    const client = service.client();
    const project = (await client.projects.create({ name: 'nightly', description: 'cold start' })).objectIdentifier;
    const config = join(dir, 'config.yaml');
    const t = service.emulator.tenants[0]!;
    const profile = (name: string) =>
      `  ${name}:\n    baseUrl: ${service.emulator.baseUrl}\n    settingsUrl: ${service.emulator.settingsUrl}\n    authUrl: ${service.emulator.authUrl}\n    audience: ${service.emulator.audience}\n    clientId: ${t.clientId}\n    clientSecretEnv: NIGHTLY_SECRET\n${LAG_MS ? `    listingLag: ${LAG_BOUND_MS}ms\n` : ''}`;
    await writeFile(config, `profiles:\n${profile('nightly')}${profile('renamed')}`);
    const run = async (profileName: string, stateDir: string): Promise<Summary> => {
      const r = await runFerry(['-p', profileName, 'mirror', src, '--project', project, '--json'], { FERRY_CONFIG: config, NIGHTLY_SECRET: t.clientSecret, FERRY_STATE_DIR: join(dir, stateDir) });
      expect(r.code, r.stderr).toBe(0);
      return onlyJson(r) as unknown as Summary;
    };
    const n = Object.keys(FILES).length;

    const first = await run('nightly', 'container-1');
    expect(first.counts).toMatchObject({ discovered: n, uploaded: n });
    // The first run listed an empty project: nothing to adopt.
    expect(first.coldStart).toMatchObject({ reason: 'cold', adopted: 0 });

    for (const container of ['container-2', 'container-3']) {
      const again = await run('nightly', container);
      expect(again.counts, container).toMatchObject({ discovered: n, uploaded: 0, unchanged: n, failed: 0 });
      expect(again.coldStart, container).toMatchObject({ reason: 'cold', adopted: n, withoutFingerprint: 0 });
    }
    let remote = await remoteFiles(client, project);
    expect(remote.map((d) => d.path).sort()).toEqual(Object.keys(FILES).map((k) => `/${k}`).sort());

    // A dry run in a fresh container plans against the project too, and adopts nothing for real.
    const planned = await runFerry(['-p', 'nightly', 'mirror', src, '--project', project, '--dry-run', '--json'], { FERRY_CONFIG: config, NIGHTLY_SECRET: t.clientSecret, FERRY_STATE_DIR: join(dir, 'container-dry') });
    expect(planned.code, planned.stderr).toBe(0);
    expect(onlyJson(planned)).toMatchObject({ counts: { new: 0, changed: 0, unchanged: n } });
    expect((await run('nightly', 'container-dry')).coldStart).toMatchObject({ reason: 'cold', adopted: n });

    // A fresh checkout: every time is new, one file changed (same size); only that one goes up.
    const later = new Date(Date.now() + 60_000);
    for (const key of Object.keys(FILES)) await utimes(join(src, key), later, later);
    await writeFile(join(src, 'docs/b.txt'), 'BRAVO BRAVO');
    const changed = await run('nightly', 'container-4');
    expect(changed.counts).toMatchObject({ discovered: n, uploaded: 1, unchanged: n - 1 });

    // The same job under another profile name (another state file): nothing to do.
    const renamed = await run('renamed', 'container-1');
    expect(renamed.counts).toMatchObject({ discovered: n, uploaded: 0, unchanged: n });

    remote = await remoteFiles(client, project);
    // Every path once, but the changed file: its older document stays (the service cannot delete it).
    expect(remote).toHaveLength(n + 1);
    expect(new Set(remote.map((d) => d.path)).size).toBe(n);
    const b = remote.filter((d) => d.path === '/docs/b.txt');
    expect(b).toHaveLength(2);
    // Every document names itself in ferry's keys.
    const identity = (remote.find((d) => d.path === '/docs/deep/c.md')?.metadata ?? []).filter((m) => m.key?.startsWith('ferry.'));
    expect(Object.fromEntries(identity.map((m) => [m.key, m.value]))).toMatchObject({
      [IDENTITY_KEYS.path]: 'docs/deep/c.md',
      [IDENTITY_KEYS.size]: '9',
      [IDENTITY_KEYS.sha256]: createHash('sha256').update('# charlie').digest('hex'),
    });
  });

  it('a warm store: new times over the same content upload nothing; --resync adopts what the service holds', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-cold-warm-'));
    const src = join(dir, 'tree');
    await writeTree(src, { 'x/one.txt': 'one', 'x/two.txt': 'two', 'three.txt': 'three' });
    const client = service.client();
    const project = (await client.projects.create({ name: 'warm', description: 'compare' })).objectIdentifier;
    const store = new SqliteCheckpointStore(join(dir, 'state.sqlite'));
    try {
      const first = await mirror({ source: src, project }, { client, store });
      expect(first.counts).toMatchObject({ uploaded: 3 });
      const later = new Date(Date.now() + 120_000);
      for (const key of ['x/one.txt', 'x/two.txt', 'three.txt']) await utimes(join(src, key), later, later);
      const touched = await mirror({ source: src, project }, { client, store });
      expect(touched.counts).toMatchObject({ discovered: 3, uploaded: 0, unchanged: 3 });
      expect(touched.coldStart).toBeUndefined();
      // The times were noted: the next run does not read the content again (and still uploads nothing).
      const again = await mirror({ source: src, project }, { client, store });
      expect(again.counts).toMatchObject({ uploaded: 0, unchanged: 3 });

      const resync = await mirror({ source: src, project, resync: true }, { client, store });
      expect(resync.coldStart).toMatchObject({ reason: 'resync', adopted: 3 });
      expect(resync.counts).toMatchObject({ uploaded: 0, unchanged: 3 });
    } finally {
      store.close();
    }
    expect(await remoteFiles(client, project)).toHaveLength(3);
  });

  it.skipIf(STRICT)('a cold no-op learns the folders from its one listing: no folder is listed or made again', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-cold-folders-'));
    const src = join(dir, 'tree');
    const tree: Record<string, string> = { 'top.txt': 'top', 'empty/': '' };
    for (let i = 0; i < 12; i++) tree[`p${i % 3}/q${i % 4}/r${i}/f${i}.txt`] = `file ${i}`;
    const project = await mirroredProject(service.client(), src, tree, 'folders');
    const counting = countingDispatcher();
    const fresh = new SqliteCheckpointStore(join(dir, 'fresh.sqlite'));
    const cold = await mirror({ source: src, project }, { client: service.client({ dispatcher: counting.dispatcher }), store: fresh });
    fresh.close();
    expect(cold.coldStart).toMatchObject({ reason: 'cold', adopted: 13 });
    expect(cold.counts).toMatchObject({ discovered: 13, uploaded: 0, unchanged: 13 });
    // The inventory's one page; before, a listing of each parent folder (here 1 + 3 + 12 = 16) followed it.
    expect(counting.count('GET', new RegExp(`^/projects/${project}/documents$`))).toBe(1);
    expect(counting.count('POST', /\/folders$/)).toBe(0);
  });

  it('documents without ferry\'s keys (another tool, or a service that keeps no metadata) are recognised by path and size, said once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-cold-foreign-'));
    const src = join(dir, 'tree');
    await writeTree(src, { 'same.txt': 'same bytes', 'resized.txt': 'now longer than before', 'new.txt': 'new' });
    const client = service.client();
    const project = (await client.projects.create({ name: 'foreign', description: 'no identity' })).objectIdentifier;
    const batch = randomUUID();
    // Uploaded by something else: no metadata at all.
    for (const [name, content] of [['same.txt', 'same bytes'], ['resized.txt', 'short']] as const) {
      await writeFile(join(dir, name), content);
      await client.documents.upload(project, { path: join(dir, name), size: Buffer.byteLength(content), filename: name }, { documentUploadIdentifier: batch });
    }
    const store = new SqliteCheckpointStore(join(dir, 'state.sqlite'));
    try {
      const summary = await mirror({ source: src, project }, { client, store });
      expect(summary.coldStart).toMatchObject({ reason: 'cold', adopted: 2, withoutFingerprint: 2 });
      expect(summary.counts).toMatchObject({ discovered: 3, uploaded: 2, unchanged: 1, failed: 0 });
      // Said, not failed: a problem of the run, not one of its errors.
      expect(summary.errors).toEqual([]);
      const warnings = summary.problems.filter((p) => /carry no fingerprint/.test(p.reason));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]!.reason).toMatch(/2 of the 2 documents .* recognised by path and size alone/);
    } finally {
      store.close();
    }
    const remote = await remoteFiles(client, project);
    expect(remote.map((d) => d.path).sort()).toEqual(['/new.txt', '/resized.txt', '/resized.txt', '/same.txt']);
  });

  it('two warm stores, each overtaken by the other: what one uploaded is found by the other, never sent twice', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-overtaken-'));
    const src = join(dir, 'tree');
    await writeTree(src, { 'a.txt': 'alpha', 'docs/b.txt': 'bravo', 'docs/deep/c.txt': 'charlie' });
    const client = service.client();
    const project = (await client.projects.create({ name: 'two stores', description: 'overtaken' })).objectIdentifier;
    const run = async (state: string, extra: string[] = []): Promise<Summary> => {
      const r = await runFerry(['mirror', src, '--project', project, '--to', 'Share', '--state', join(dir, state), '--json', ...extra], service.env());
      expect(r.code, r.stderr).toBe(0);
      return onlyJson(r) as unknown as Summary;
    };
    // Store B lists the project while it is empty (its patterns take nothing): warm from then on.
    expect((await run('b.sqlite', ['--include', 'nothing'])).counts.uploaded).toBe(0);
    // Store A (the cron job's volume) uploads the tree; B, unaware of it, finds each file there.
    expect((await run('a.sqlite')).counts).toMatchObject({ uploaded: 3 });
    expect((await run('b.sqlite')).counts).toMatchObject({ uploaded: 0, reconciled: 3 });
    // A new file and a changed one, uploaded by B: A finds both; then neither store sends anything.
    await writeFile(join(src, 'docs/new.txt'), 'new');
    await writeFile(join(src, 'a.txt'), 'ALPHA, changed');
    expect((await run('b.sqlite')).counts).toMatchObject({ uploaded: 2, reconciled: 0 });
    expect((await run('a.sqlite')).counts).toMatchObject({ uploaded: 0, reconciled: 2 });
    expect((await run('a.sqlite')).counts).toMatchObject({ uploaded: 0, reconciled: 0, unchanged: 4 });
    expect((await run('b.sqlite')).counts).toMatchObject({ uploaded: 0, reconciled: 0, unchanged: 4 });
    // On the service: one document a path, but for a.txt's superseded version.
    const paths = (await remoteFiles(client, project)).map((d) => d.path).sort();
    expect(paths).toEqual(['/Share/a.txt', '/Share/a.txt', '/Share/docs/b.txt', '/Share/docs/deep/c.txt', '/Share/docs/new.txt']);
    expect(onlyJson(await runFerry(['check', src, '--project', project, '--to', 'Share', '--json'], service.env()))).toMatchObject({ status: 'matching', matching: 4 });
  });
});
