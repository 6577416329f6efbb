// `ferry check`: proof of an onboarding against the service alone, with no checkpoint store.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readdir, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { tmpdir } from 'node:os';
import { remoteFiles, startService, writeTree, type Service } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';
import { mirror } from '../../jobs/mirror.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';

let service: Service;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.close());

interface Report {
  command: string;
  status: string;
  exitCode: number;
  matching: number;
  differenceCount: number;
  differences: { kind: string; path: string; detail: string }[];
}

describe('ferry check', () => {
  it('a document whose name holds a "/" (no path can stand for it) is accounted for: only on the service, with why', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-check-slash-'));
    const src = join(dir, 'tree');
    await writeTree(src, { 'a.txt': 'alpha' });
    const client = service.client();
    const project = (await client.projects.create({ name: 'slash in a name', description: 'check' })).objectIdentifier;
    const store = new SqliteCheckpointStore(join(dir, 'state.sqlite'));
    try {
      await mirror({ source: src, project }, { client, store });
    } finally {
      store.close();
    }
    const content = Buffer.from('made in the web interface');
    const made = await client.documents.upload(project, { open: () => Readable.from([content]), size: content.length, filename: 'Q3/Q4 plan.txt' }, { documentUploadIdentifier: randomUUID() });
    expect(made.name).toBe('Q3/Q4 plan.txt');
    const r = await runFerry(['check', src, '--project', project, '--json'], service.env());
    expect(r.code, r.stderr).toBe(1);
    const report = onlyJson(r) as Report;
    expect(report).toMatchObject({ status: 'different', matching: 1, differenceCount: 1 });
    expect(report.differences).toEqual([expect.objectContaining({ kind: 'only on the service', path: 'Q3/Q4 plan.txt', detail: expect.stringMatching(/holds a "\/", which no path can carry/) })]);
  });

  it('matches a mirrored tree, then lists a document deleted on the service, a new local file and a file changed in place', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-check-'));
    const src = join(dir, 'tree');
    await writeTree(src, { 'a.txt': 'alpha', 'docs/b.txt': 'bravo', 'docs/c.txt': 'charlie', 'docs/deep/d.txt': 'delta', 'e 100%.txt': 'echo' });
    const client = service.client();
    const project = (await client.projects.create({ name: 'onboarded', description: 'check' })).objectIdentifier;
    const store = new SqliteCheckpointStore(join(dir, 'state.sqlite'));
    try {
      expect((await mirror({ source: src, project, to: 'archive/2026' }, { client, store })).counts).toMatchObject({ uploaded: 5 });
    } finally {
      store.close();
    }
    // No --state anywhere, and none is created.
    const stateDir = join(dir, 'state');
    const env = { ...service.env(), FERRY_STATE_DIR: stateDir };
    const args = ['check', src, '--project', project, '--to', 'archive/2026', '--json'];

    const clean = await runFerry(args, env);
    expect(clean.code, clean.stderr).toBe(0);
    expect(onlyJson(clean)).toMatchObject({ command: 'check', status: 'matching', exitCode: 0, matching: 5, differenceCount: 0 });

    // Someone deletes a document in the web interface; a file is added; one is changed in place,
    // same size and the same modification time as before.
    const c = (await remoteFiles(client, project)).find((d) => d.path === '/archive/2026/docs/c.txt')!;
    expect(service.emulator.deleteDocument(c.objectIdentifier as string)).toBe(true);
    await writeFile(join(src, 'docs/new.txt'), 'new file');
    const b = join(src, 'docs/b.txt');
    const before = await stat(b);
    await writeFile(b, 'BRAVO');
    await utimes(b, before.atime, before.mtime);

    const dirty = await runFerry(args, env);
    expect(dirty.code, dirty.stderr).toBe(1);
    const report = onlyJson(dirty) as unknown as Report;
    expect(report).toMatchObject({ status: 'different', exitCode: 1, matching: 3, differenceCount: 3 });
    expect(report.differences.map((d) => [d.kind, d.path]).sort()).toEqual([
      ['changed', 'docs/b.txt'],
      ['missing on the service', 'docs/c.txt'],
      ['missing on the service', 'docs/new.txt'],
    ]);

    // A document on the service the source does not hold (another mirror into a folder under --to).
    await writeTree(join(dir, 'extra'), { 'only.txt': 'only there' });
    const other = new SqliteCheckpointStore(join(dir, 'other.sqlite'));
    try {
      await mirror({ source: join(dir, 'extra'), project, to: 'archive/2026/x' }, { client, store: other });
    } finally {
      other.close();
    }
    const text = await runFerry(args.filter((a) => a !== '--json'), env);
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/changed: docs\/b\.txt: same size \(5 bytes\), other content/);
    expect(text.stdout).toMatch(/missing on the service: docs\/c\.txt/);
    expect(text.stdout).toMatch(/missing on the service: docs\/new\.txt/);
    expect(text.stdout).toMatch(/only on the service: x\/only\.txt: document [0-9a-f-]{36}, 10 bytes/);
    expect(text.stdout).toMatch(/: 4 differences/);
    await expect(readdir(stateDir)).rejects.toThrow();
  });

  it('streams every difference under --json, beyond the first 1,000 it keeps in memory', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-check-many-'));
    const files: Record<string, string> = {};
    for (let i = 0; i < 1_005; i++) files[`many/${String(i).padStart(4, '0')}.txt`] = `${i}`;
    await writeTree(join(dir, 'tree'), files);
    const project = (await service.client().projects.create({ name: 'check many', description: '' })).objectIdentifier;
    const r = await runFerry(['check', join(dir, 'tree'), '--project', project, '--json'], service.env());
    expect(r.code).toBe(1);
    const report = onlyJson(r) as unknown as Report & { counts: Record<string, number> };
    expect(report).toMatchObject({ command: 'check', status: 'different', differenceCount: 1_005, counts: { missingOnTheService: 1_005 } });
    expect(report.differences).toHaveLength(1_005);
    expect(new Set(report.differences.map((d) => d.path)).size).toBe(1_005);
  });

  it('a symbolic link the mirror skips is said as skipped, not a difference: a mirrored tree with one checks as matching', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-check-link-'));
    await writeTree(join(dir, 'tree'), { 'a.txt': 'alpha' });
    await symlink(join(dir, 'tree', 'a.txt'), join(dir, 'tree', 'link.txt'));
    const project = (await service.client().projects.create({ name: 'check link', description: '' })).objectIdentifier;
    expect(onlyJson(await runFerry(['mirror', join(dir, 'tree'), '--project', project, '--state', join(dir, 's.sqlite'), '--json'], service.env()))).toMatchObject({ status: 'succeeded', counts: { uploaded: 1, skipped: 1 } });
    const r = await runFerry(['check', join(dir, 'tree'), '--project', project, '--json'], service.env());
    expect(r.code).toBe(0);
    expect(onlyJson(r)).toMatchObject({ status: 'matching', matching: 1, skipped: 1, problems: [{ key: 'link.txt', reason: expect.stringMatching(/^symbolic link/) }], differenceCount: 0 });
    const text = await runFerry(['check', join(dir, 'tree'), '--project', project], service.env());
    expect(text.stdout).toMatch(/matching 1 {2}skipped 1 \(as the mirror skips them\)/);
    expect(text.stdout).toMatch(/skipped: link\.txt: symbolic link/);
  });

  it('a file written twice (two runs with two stores at once) is listed by check and said by a cold start; a superseded version is neither', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-check-twice-'));
    const src = join(dir, 'tree');
    await writeTree(src, { 'a.txt': 'alpha', 'b.txt': 'bravo' });
    const client = service.client();
    const project = (await client.projects.create({ name: 'written twice', description: 'check' })).objectIdentifier;
    const env = service.env();
    const mirrorWith = async (state: string) => {
      const r = await runFerry(['mirror', src, '--project', project, '--state', join(dir, state), '--json'], env);
      expect(r.code, r.stderr).toBe(0);
      return onlyJson(r) as { counts: { uploaded: number }; coldStart?: { copies: number }; problems: { key: string; reason: string }[] };
    };
    expect((await mirrorWith('a.sqlite')).counts.uploaded).toBe(2);
    // What a second run with a store of its own, started at the same moment, sends: the same files
    // with the same ferry identity (the service offers no conditional create to stop it).
    for (const doc of await remoteFiles(client, project)) {
      const metadata = Object.fromEntries((doc.metadata ?? []).map((m) => [m.key as string, m.value as string]));
      await client.documents.upload(project, { path: join(src, doc.name as string), size: doc.size ?? 0, filename: doc.name as string }, { documentUploadIdentifier: randomUUID(), metadata });
    }

    const args = ['check', src, '--project', project, '--json'];
    const twice = await runFerry(args, env);
    expect(twice.code).toBe(1);
    const report = onlyJson(twice) as unknown as Report & { counts: Record<string, number> };
    expect(report).toMatchObject({ status: 'different', matching: 2, differenceCount: 2, counts: { twiceOnTheService: 2 } });
    expect(report.differences.map((d) => [d.kind, d.path]).sort()).toEqual([['twice on the service', 'a.txt'], ['twice on the service', 'b.txt']]);
    const text = await runFerry(args.slice(0, -1), env);
    expect(text.stdout).toMatch(/twice on the service 2/);

    // A fresh store adopts the newest at each path, uploads nothing, and says what it found.
    const cold = await mirrorWith('c.sqlite');
    expect(cold.counts.uploaded).toBe(0);
    expect(cold.coldStart).toMatchObject({ adopted: 2, copies: 2 });
    expect(cold.problems.map((p) => p.reason).join('\n')).toMatch(/2 older documents are copies of the newest at their path/);

    // Versions are not copies: a.txt changed, then changed back, leaves a, a', a above the copies.
    await writeFile(join(src, 'a.txt'), 'ALPHA!');
    expect((await mirrorWith('c.sqlite')).counts.uploaded).toBe(1);
    await writeFile(join(src, 'a.txt'), 'alpha');
    expect((await mirrorWith('c.sqlite')).counts.uploaded).toBe(1);
    // The six documents ls shows add up: 2 matching, 2 older versions (ALPHA!, and the first alpha
    // under ALPHA!), 2 copies.
    expect(onlyJson(await runFerry(args, env))).toMatchObject({ matching: 2, olderVersions: 2, counts: { twiceOnTheService: 2 } });
    expect((await runFerry(args.slice(0, -1), env)).stdout).toMatch(/matching 2 {2}older versions 2 \(earlier uploads of changed files, kept by the service\)/);
    expect((await runFerry(['ls', project, '-R', '--json'], env)).stdout.match(/"isDirectory":false/g)).toHaveLength(6);
    expect((await mirrorWith('d.sqlite')).coldStart).toMatchObject({ adopted: 2, copies: 2 });
  });
});
