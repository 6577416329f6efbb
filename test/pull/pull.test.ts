// `ferry pull`: a project's documents into a local folder, against the emulator over loopback.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, readdir, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { Readable } from 'node:stream';
import { STRICT, mirroredProject, startService, writeTree, type Service } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';
import { mirror } from '../../jobs/mirror.js';
import { planPull, pull } from '../../jobs/pull.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';
import { mapSegment } from '../../src/backends/local/destination.js';

let service: Service;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.close());

/** Every file under `root` (relative path -> sha256), temporary files included. */
async function tree(root: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (dir: string, rel: string) => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const path = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(join(dir, e.name), path);
      else out.set(path, createHash('sha256').update(await readFile(join(dir, e.name))).digest('hex'));
    }
  };
  await walk(root, '');
  return out;
}

const FILES: Record<string, string | Buffer> = {
  'readme.txt': 'top level',
  'contracts/2024/Übersicht café.txt': 'unicode names',
  'contracts/2024/empty.txt': '',
  'contracts/2025/deep/er/than/that.bin': Buffer.alloc(70_000, 7),
  'spaces and # and %/notes (1).md': '# notes',
  'emptyfolder/': '',
};

async function mirrored(name: string): Promise<{ dir: string; src: string; project: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-pull-'));
  const src = join(dir, 'src');
  await writeTree(src, FILES);
  const client = service.client();
  const project = (await client.projects.create({ name, description: 'pull' })).objectIdentifier;
  const store = new SqliteCheckpointStore(join(dir, 'mirror.sqlite'));
  const summary = await mirror({ source: src, project }, { client, store });
  store.close();
  expect(summary.counts.failed).toBe(0);
  return { dir, src, project };
}

describe('ferry pull', () => {
  it('round trip: a mirrored tree pulled into an empty folder is byte-identical, and a re-pull downloads nothing', async () => {
    const { dir, src, project } = await mirrored('pull round trip');
    const client = service.client();
    const store = new SqliteCheckpointStore(join(dir, 'pull.sqlite'));
    const out = join(dir, 'out');
    // A dry run plans every file and touches nothing: not even the folder.
    const plan = await planPull({ project, dir: out }, { client, store });
    expect(plan).toMatchObject({ new: 5, changed: 0, unchanged: 0, bytes: 70_000 + 9 + 13 + 7 });
    await expect(readdir(out)).rejects.toThrow(/ENOENT/);
    const first = await pull({ project, dir: out }, { client, store });
    expect(first.status, JSON.stringify(first.errors)).toBe('succeeded');
    expect(first.counts).toMatchObject({ discovered: 5, uploaded: 5, failed: 0 });
    expect(await tree(out)).toEqual(await tree(src));
    // An empty folder exists only where the service could hold one.
    if (!STRICT) expect(await readdir(join(out, 'emptyfolder'))).toEqual([]);
    const again = await pull({ project, dir: out }, { client, store });
    expect(again.counts).toMatchObject({ discovered: 5, uploaded: 0, unchanged: 5 });
    store.close();
  });

  it('kill -9 at random moments, then a rerun: every file once, no temporary leftovers, and a no-op re-pull', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-pull-kill-'));
    const src = join(dir, 'src');
    const files: Record<string, Buffer> = {};
    for (let i = 0; i < 120; i++) files[`d${i % 7}/f${i}.bin`] = Buffer.alloc(20_000 + i, i % 251);
    const client = service.client();
    const project = await mirroredProject(client, src, files, 'pull kill');
    const out = join(dir, 'out');
    const args = ['pull', project, out, '--state', join(dir, 'pull.sqlite'), '--json', '--concurrency', '4'];
    service.emulator.setFaults('latency=5');
    const kills: string[] = [];
    for (const after of [3, 25, 60]) {
      const r = await runFerry(args, service.env(), (child) => {
        void (async () => {
          for (let poll = 0; poll < 4000 && child.exitCode === null; poll++) {
            const done = await tree(out).then((t) => [...t.keys()].filter((k) => !k.includes('.ferry-')).length, () => 0);
            if (done >= after) {
              child.kill('SIGKILL');
              kills.push(`${done} files`);
              return;
            }
            await new Promise((r) => setTimeout(r, 2));
          }
        })();
      });
      if (r.code !== null) kills.push(`(run ended by itself: ${r.code})`);
    }
    service.emulator.setFaults('');
    const last = await runFerry(args, service.env());
    expect(last.code, last.stdout).toBe(0);
    const summary = onlyJson(last) as { counts: Record<string, number> };
    console.log(`pull killed at ${kills.join(', ')}; the final run downloaded ${summary.counts.downloaded}, reconciled ${summary.counts.reconciled}`);
    const got = await tree(out);
    expect([...got.keys()].filter((k) => k.includes('.ferry-'))).toEqual([]);
    expect(got).toEqual(await tree(src));
    const noop = onlyJson(await runFerry(args, service.env())) as { counts: Record<string, number> };
    expect(noop.counts).toMatchObject({ downloaded: 0, unchanged: 120, failed: 0 });
  });

  it('keeps a local file ferry did not write and reports the conflict; exit 1', async () => {
    const { dir, project } = await mirrored('pull conflict');
    const out = join(dir, 'out');
    await mkdir(join(out, 'contracts', '2024'), { recursive: true });
    await writeFile(join(out, 'readme.txt'), 'my own notes');
    const r = await runFerry(['pull', project, out, '--state', join(dir, 'pull.sqlite'), '--json'], service.env());
    expect(r.code).toBe(1);
    const summary = onlyJson(r) as { counts: Record<string, number>; errors: { key: string; error: string }[] };
    expect(summary.counts).toMatchObject({ discovered: 5, downloaded: 4, failed: 1 });
    expect(summary.errors).toEqual([{ key: 'readme.txt', error: expect.stringMatching(/^conflict: a local file ferry did not write \(or that changed since\) is in the way \(12 bytes, modified .*; the document: 9 bytes of .*\); it was kept$/) }]);
    expect(await readFile(join(out, 'readme.txt'), 'utf8')).toBe('my own notes');

    // A file ferry wrote and the user then edited is not overwritten either, and is named (the folder is a truth too).
    await writeFile(join(out, 'contracts/2024/empty.txt'), 'edited');
    const again = onlyJson(await runFerry(['pull', project, out, '--state', join(dir, 'pull.sqlite'), '--json'], service.env())) as { counts: Record<string, number>; errors: { key: string; error: string }[] };
    expect(again.counts).toMatchObject({ downloaded: 0, failed: 2 });
    expect(again.errors).toContainEqual({ key: 'contracts/2024/empty.txt', error: expect.stringMatching(/^conflict: changed here since ferry wrote it/) });
    expect(await readFile(join(out, 'contracts/2024/empty.txt'), 'utf8')).toBe('edited');
  });

  it('maps names the file system cannot hold by one rule, and reports them', async () => {
    const client = service.client();
    const project = (await client.projects.create({ name: 'pull names', description: 'names' })).objectIdentifier;
    const batch = '5e1f0c9e-3b2a-4e5d-8c6f-1a2b3c4d5e6f';
    const long = `${'long-name-'.repeat(30)}.pdf`; // 304 bytes
    const upload = (name: string, body: string) => client.documents.upload(project, { open: () => Readable.from([Buffer.from(body)]), size: Buffer.byteLength(body), filename: name }, { documentUploadIdentifier: batch });
    await upload(long, 'long');
    await upload('Report.txt', 'upper');
    await upload('report.txt', 'lower');
    const dir = await mkdtemp(join(tmpdir(), 'ferry-pull-names-'));
    const store = new SqliteCheckpointStore(join(dir, 'pull.sqlite'));
    // This file system tells case apart; the destination is told it does not, as on macOS or Windows.
    const summary = await pull({ project, dir: join(dir, 'out'), caseInsensitive: true }, { client, store });
    store.close();
    expect(summary.counts, JSON.stringify(summary.errors)).toMatchObject({ discovered: 3, uploaded: 3, failed: 0 });
    const names = (await readdir(join(dir, 'out'))).sort();
    const shortened = mapSegment(long).name;
    expect(Buffer.byteLength(shortened)).toBeLessThanOrEqual(255);
    expect(shortened).toMatch(/^long-name-.*~[0-9a-f]{8}\.pdf$/);
    expect(names).toContain(shortened);
    // The first listed of the two keeps its name, the other is told apart by a hash.
    const kept = names.filter((n) => n === 'Report.txt' || n === 'report.txt');
    const hashed = names.filter((n) => /^[Rr]eport~[0-9a-f]{8}\.txt$/.test(n));
    expect([kept.length, hashed.length]).toEqual([1, 1]);
    const renamed = (summary.renamed as { key: string; why: string }[]).map((r) => [r.key, r.why]);
    expect(renamed).toEqual(
      expect.arrayContaining([
        [long, expect.stringContaining('longer than 255 bytes')],
        [hashed[0]!.startsWith('R') ? 'Report.txt' : 'report.txt', expect.stringContaining('only by case')],
      ]),
    );
    expect(summary.renamedCount).toBe(2);
  });
  it('pulls the newest of several documents at one path and reports the older ones', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-pull-versions-'));
    const client = service.client();
    const project = (await client.projects.create({ name: 'pull versions', description: '' })).objectIdentifier;
    // Three uploads of one name into the root: the same path, newest last.
    for (const text of ['first', 'second', 'third and newest']) {
      await client.documents.upload(project, { stream: Readable.from([Buffer.from(text)]), size: Buffer.byteLength(text), filename: 'report.txt' }, { documentUploadIdentifier: crypto.randomUUID() });
      await new Promise((r) => setTimeout(r, 5)); // distinct dateAdded
    }
    const store = new SqliteCheckpointStore(join(dir, 'pull.sqlite'));
    const summary = await pull({ project, dir: join(dir, 'out') }, { client, store });
    expect(summary.counts).toMatchObject({ discovered: 3, uploaded: 1, skipped: 2, failed: 0 });
    expect(await readFile(join(dir, 'out', 'report.txt'), 'utf8')).toBe('third and newest');
    expect(summary.errors).toEqual([]);
    expect(summary.problems.map((p) => p.reason)).toEqual([
      'skipped: an older document at the same path (a file uploaded again); the newest is pulled',
      'skipped: an older document at the same path (a file uploaded again); the newest is pulled',
    ]);
    expect(summary.repeatedNotices).toBeUndefined();
    // The next run skips them again, and counts them instead of naming them once more.
    const again = await pull({ project, dir: join(dir, 'out') }, { client, store });
    store.close();
    // The file already pulled is unchanged; the two older documents are skipped (reported on the first pull).
    expect(again.counts).toMatchObject({ discovered: 3, uploaded: 0, unchanged: 1, skipped: 2, failed: 0 });
    expect(again.problems).toEqual([]);
    expect(again.repeatedNotices).toBe(2);
  });
});
