import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { chmod, mkdtemp, rm, symlink, utimes, writeFile, mkdir, readFile } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import archiver from 'archiver';
import Database from 'better-sqlite3';
import { mirror, planMirror } from '../../jobs/mirror.js';
import { LockedError } from '../../src/runner/job.js';
import { ZipRejectedError } from '../../src/backends/zip/source.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';
import { STRICT, countingDispatcher, remoteFiles, remoteFolders, startService, whereFoldersExist, writeTree, type Service } from '../helpers/service.js';

let service: Service;
let dir: string;

beforeAll(async () => {
  service = await startService();
});
afterAll(async () => {
  await service.close();
});
afterEach(() => {
  expect(service.emulator.contractViolations).toEqual([]);
});

async function fresh(): Promise<{ src: string; state: string; project: string }> {
  dir = await mkdtemp(join(tmpdir(), 'ferry-mirror-'));
  const client = service.client();
  // Each test mirrors into its own project.
  const project = (await client.projects.create({ name: `mirror ${dir}`, description: 'test' })).objectIdentifier;
  return { src: join(dir, 'src'), state: join(dir, 'state.sqlite'), project };
}

const tree = {
  'a/one.txt': 'one',
  'a/b/two.txt': 'two two',
  'ünï cöde/x y/dôc.txt': 'unicode and spaces',
  'top.txt': 'top',
  'empty/': '',
  'a/b/empty too/': '',
};

describe('mirror', () => {
  it('recreates a nested tree with unicode, spaces and empty folders, skipping a symlink loop', async () => {
    const { src, state, project } = await fresh();
    await writeTree(src, tree);
    await symlink('..', join(src, 'a', 'b', 'loop'));
    const client = service.client();
    const store = new SqliteCheckpointStore(state);
    const summary = await mirror({ source: src, project, to: 'Imports/2026' }, { client, store });
    store.close();

    expect(summary.status).toBe('succeeded');
    expect(summary.counts).toMatchObject({ discovered: 5, uploaded: 4, skipped: 1, failed: 0 });
    expect(summary.errors).toEqual([]);
    expect(summary.problems).toEqual([{ key: 'a/b/loop', reason: 'skipped: symbolic link (use --follow-symlinks to upload linked files)' }]);
    // Nothing secret reaches the checkpoint store.
    const tenant = service.emulator.tenants[0]!;
    for (const file of [state, `${state}-wal`]) {
      const bytes = await readFile(file).catch(() => Buffer.alloc(0));
      expect(bytes.includes(tenant.clientSecret)).toBe(false);
      expect(bytes.includes('eyJ')).toBe(false);
    }
    const files = await remoteFiles(client, project);
    expect(files.map((f) => [f.path, f.size]).sort()).toEqual([
      ['/Imports/2026/a/b/two.txt', 7],
      ['/Imports/2026/a/one.txt', 3],
      ['/Imports/2026/top.txt', 3],
      ['/Imports/2026/ünï cöde/x y/dôc.txt', 18],
    ]);
    expect(new Set(files.map((f) => f.documentUploadObjectIdentifier))).toEqual(new Set([summary.uploadIdentifier]));
    expect(await remoteFolders(client, project)).toEqual(
      whereFoldersExist(['/Imports', '/Imports/2026', '/Imports/2026/a', '/Imports/2026/a/b', '/Imports/2026/a/b/empty too', '/Imports/2026/empty', '/Imports/2026/ünï cöde', '/Imports/2026/ünï cöde/x y'].sort()),
    );
  });

  it('sends no upload on an unchanged rerun, and uploads a changed file again, reporting the old id', async () => {
    const { src, state, project } = await fresh();
    await writeTree(src, tree);
    const counting = countingDispatcher();
    const client = service.client({ dispatcher: counting.dispatcher });
    const store = new SqliteCheckpointStore(state);
    const first = await mirror({ source: src, project }, { client, store });
    const uploadsAfterFirst = counting.count('POST', /\/documents$/);
    expect(uploadsAfterFirst).toBe(4);

    const second = await mirror({ source: src, project }, { client, store });
    expect(second.counts).toMatchObject({ discovered: 4, uploaded: 0, unchanged: 4 });
    expect(counting.count('POST', /\/documents$/)).toBe(uploadsAfterFirst);
    // Six folders made once; without folder creation, one refused probe per run.
    expect(counting.count('POST', /\/folders$/)).toBe(STRICT ? 2 : 6);

    await writeFile(join(src, 'a', 'one.txt'), 'one, edited');
    await utimes(join(src, 'a', 'one.txt'), new Date(), new Date(Date.now() + 5_000));
    const third = await mirror({ source: src, project }, { client, store });
    store.close();
    expect(third.counts).toMatchObject({ uploaded: 1, unchanged: 3 });
    const superseded = third.superseded as { key: string; previous: string; current: string }[];
    expect(superseded).toHaveLength(1);
    expect(superseded[0]!.key).toBe('a/one.txt');
    const files = await remoteFiles(client, project);
    const ones = files.filter((f) => f.path === '/a/one.txt');
    expect(ones.map((f) => f.objectIdentifier).sort()).toEqual([superseded[0]!.previous, superseded[0]!.current].sort());
    expect(ones.find((f) => f.objectIdentifier === superseded[0]!.current)!.size).toBe(11);
    expect(first.status).toBe('succeeded');
  });

  it('trusts a folder digest only while nothing in the folder changed: same size, new time is uploaded', async () => {
    const { src, state, project } = await fresh();
    // Folders of 8 files and more get a digest; smaller ones are looked up file by file.
    const digestTree: Record<string, string> = { 'small/x.txt': 'x', 'small/y.txt': 'y' };
    for (const folder of ['', 'a/', 'a/b/', 'ünï cöde/x y/']) for (let i = 0; i < 8; i++) digestTree[`${folder}f${i}.txt`] = `${folder} ${i}`;
    digestTree['a/b/two.txt'] = 'two two';
    await writeTree(src, digestTree);
    const files = Object.keys(digestTree).length;
    const client = service.client();
    const store = new SqliteCheckpointStore(state);
    await mirror({ source: src, project }, { client, store });
    const digests = () => {
      const db = new Database(state, { readonly: true });
      const rows = db.prepare('SELECT folder FROM group_digests ORDER BY folder').pluck().all();
      db.close();
      return rows;
    };
    store.flush();
    // Every folder holding enough files is vouched for once its files landed.
    expect(digests()).toEqual(['', 'a/', 'a/b/', 'ünï cöde/x y/']);
    // Same size, new content and time: only the time tells, and the digest must not hide it.
    await writeFile(join(src, 'a', 'b', 'two.txt'), 'TWO TWO');
    await utimes(join(src, 'a', 'b', 'two.txt'), new Date(), new Date(Date.now() + 7_000));
    const second = await mirror({ source: src, project }, { client, store });
    expect(second.counts).toMatchObject({ discovered: files, uploaded: 1, unchanged: files - 1 });
    // A new file next to unchanged ones, and one removed elsewhere: both seen through the digests.
    await writeFile(join(src, 'a', 'three.txt'), '3');
    await rm(join(src, 'f0.txt'));
    const third = await mirror({ source: src, project }, { client, store });
    expect(third.counts).toMatchObject({ discovered: files, uploaded: 1, unchanged: files - 1 });
    expect(third.deletedLocally).toMatchObject({ count: 1, sample: ['f0.txt'] });
    const fourth = await mirror({ source: src, project }, { client, store });
    store.close();
    expect(fourth.counts).toMatchObject({ discovered: files, uploaded: 0, unchanged: files });
    // Said by name on the run that first missed it; counted after (issue 77: a nightly job stays quiet).
    expect(fourth.deletedLocally).toMatchObject({ count: 0, before: 1 });
    const twos = (await remoteFiles(client, project)).filter((f) => f.path === '/a/b/two.txt');
    expect(twos).toHaveLength(2);
  });

  it('reports files deleted locally and never deletes them remotely', async () => {
    const { src, state, project } = await fresh();
    await writeTree(src, tree);
    const client = service.client();
    const store = new SqliteCheckpointStore(state);
    await mirror({ source: src, project }, { client, store });
    await rm(join(src, 'top.txt'));
    const summary = await mirror({ source: src, project }, { client, store });
    store.close();
    expect(summary.deletedLocally).toMatchObject({ count: 1, sample: ['top.txt'] });
    expect((await remoteFiles(client, project)).some((f) => f.path === '/top.txt')).toBe(true);
  });

  it('plans without touching anything on a dry run', async () => {
    const { src, state, project } = await fresh();
    await writeTree(src, tree);
    const counting = countingDispatcher();
    const client = service.client({ dispatcher: counting.dispatcher });
    const store = new SqliteCheckpointStore(state);
    const plan = await planMirror({ source: src, project, to: 'X' }, { client, store });
    store.close();
    expect(plan).toMatchObject({ new: 4, changed: 0, unchanged: 0, deletedLocally: 0, bytes: 3 + 7 + 18 + 3 });
    expect(plan.foldersToCreate).toBe(7);
    for (const [key] of counting.counts) expect(key.startsWith('GET ') || key.startsWith('POST /auth')).toBe(true);
    expect(await remoteFiles(client, project)).toEqual([]);
  });

  it('refuses a second concurrent run of the same job with the lock', async () => {
    const { src, state, project } = await fresh();
    await writeTree(src, Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`f${i}.txt`, `file ${i}`])));
    const client = service.client();
    const storeA = new SqliteCheckpointStore(state);
    const storeB = new SqliteCheckpointStore(state);
    const outcomes = await Promise.all([
      mirror({ source: src, project, concurrency: 2 }, { client, store: storeA }).catch((e: unknown) => e),
      mirror({ source: src, project, concurrency: 2 }, { client, store: storeB }).catch((e: unknown) => e),
    ]);
    storeA.close();
    storeB.close();
    // Whichever started first holds the lock; the other is refused.
    const refused = outcomes.filter((o) => o instanceof LockedError);
    const ran = outcomes.filter((o) => !(o instanceof LockedError)) as { counts: { uploaded: number } }[];
    expect(refused).toHaveLength(1);
    expect((refused[0] as Error).message).toContain('is already working on this job');
    expect(ran[0]!.counts.uploaded).toBe(40);
  });

  it('mirrors a zip read in place', async () => {
    const { state, project } = await fresh();
    const zipPath = join(dir, 'archive.zip');
    await makeZip(zipPath, [['docs/a.txt', 'alpha'], ['docs/sub/b.txt', 'bravo!'], ['c.txt', 'charlie']]);
    const client = service.client();
    const store = new SqliteCheckpointStore(state);
    const summary = await mirror({ source: zipPath, project }, { client, store });
    store.close();
    expect(summary.counts).toMatchObject({ discovered: 3, uploaded: 3 });
    expect((await remoteFiles(client, project)).map((f) => [f.path, f.size]).sort()).toEqual([
      ['/c.txt', 7],
      ['/docs/a.txt', 5],
      ['/docs/sub/b.txt', 6],
    ]);
  });

  it('refuses a zip with a ../ entry before uploading anything', async () => {
    const { state, project } = await fresh();
    const zipPath = join(dir, 'evil.zip');
    // archiver cleans names, so the entry is renamed in the archive's bytes afterwards.
    await makeZip(zipPath, [['good.txt', 'fine'], ['__/outside.txt', 'escape']]);
    const bytes = await readFile(zipPath);
    await writeFile(zipPath, Buffer.from(bytes.toString('latin1').replaceAll('__/outside.txt', '../outside.txt'), 'latin1'));
    const counting = countingDispatcher();
    const client = service.client({ dispatcher: counting.dispatcher });
    const store = new SqliteCheckpointStore(state);
    const err = (await mirror({ source: zipPath, project }, { client, store }).catch((e: unknown) => e)) as Error;
    store.close();
    expect(err).toBeInstanceOf(ZipRejectedError);
    expect(err.message).toContain('entry "../outside.txt" climbs out of the archive with ".."; nothing was uploaded');
    expect(counting.counts.size).toBe(0);
    await expect(readFile(join(dir, '..', 'outside.txt'))).rejects.toThrow();
  });

  // Root reads every file: the same case runs through the CLI as an unprivileged user in cli-mirror.test.ts.
  it.skipIf(process.getuid?.() === 0)('records an unreadable file as failed with its reason and goes on', async () => {
    const { src, state, project } = await fresh();
    await writeTree(src, { 'ok.txt': 'fine', 'secret.txt': 'hidden' });
    await chmod(join(src, 'secret.txt'), 0o000);
    const client = service.client();
    const store = new SqliteCheckpointStore(state);
    const summary = await mirror({ source: src, project }, { client, store });
    store.close();
    expect(summary.status).toBe('failed');
    expect(summary.counts).toMatchObject({ uploaded: 1, failed: 1 });
    expect(summary.errors[0]).toMatchObject({ key: 'secret.txt' });
    expect(summary.errors[0]!.error).toContain('EACCES');
  });
});

async function makeZip(path: string, entries: [string, string][]): Promise<void> {
  await mkdir(join(path, '..'), { recursive: true });
  const out = createWriteStream(path);
  const zip = archiver('zip');
  const done = new Promise<void>((resolve, reject) => {
    out.on('close', () => resolve());
    zip.on('error', reject);
  });
  zip.pipe(out);
  for (const [name, content] of entries) zip.append(content, { name });
  await zip.finalize();
  await done;
}
