// A pull writes only beneath its destination: a symbolic link inside it (to a folder elsewhere, or
// to a file) is never written through or deleted through, and is reported; the run exits 1.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { startService, writeTree, type Service } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';
import { mirror } from '../../jobs/mirror.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';

let service: Service;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.close());

describe('ferry pull and symbolic links inside the destination', () => {
  it('writes and deletes nothing outside it: a linked folder and a linked file are reported, exit 1', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-pull-links-'));
    await writeTree(join(dir, 'src'), { 'sub/a.txt': 'aaa', 'sub/deep/b.txt': 'bbb', 'top.txt': 'top', 'other.txt': 'other' });
    const client = service.client();
    const project = (await client.projects.create({ name: 'links', description: 'pull' })).objectIdentifier;
    const store = new SqliteCheckpointStore(join(dir, 'mirror.sqlite'));
    await mirror({ source: join(dir, 'src'), project }, { client, store });
    store.close();

    // Elsewhere: a folder holding a file named like ferry's temporary files, and a file.
    const elsewhere = join(dir, 'elsewhere');
    await mkdir(elsewhere);
    await writeFile(join(elsewhere, '.ferry-0123456789ab.partial'), 'not ferry\'s');
    await writeFile(join(elsewhere, 'target.txt'), 'keep me');
    const out = join(dir, 'out');
    await mkdir(out);
    await symlink(elsewhere, join(out, 'sub'));
    await symlink(join(elsewhere, 'target.txt'), join(out, 'top.txt'));

    const r = await runFerry(['pull', project, out, '--state', join(dir, 'pull.sqlite'), '--json'], service.env());
    expect(r.code, r.stderr).toBe(1);
    const summary = onlyJson(r) as { counts: Record<string, number>; errors: { key: string; error: string }[] };
    expect(summary.counts).toMatchObject({ discovered: 4, downloaded: 1, failed: 3 });
    const byKey = Object.fromEntries(summary.errors.map((e) => [e.key, e.error]));
    expect(byKey['sub/a.txt']).toMatch(/a symbolic link is in the way at sub/);
    expect(byKey['sub/deep/b.txt']).toMatch(/a symbolic link is in the way at sub/);
    expect(byKey['top.txt']).toMatch(/in the way/);
    // Nothing written or deleted outside the destination.
    expect((await readdir(elsewhere)).sort()).toEqual(['.ferry-0123456789ab.partial', 'target.txt']);
    expect(await readFile(join(elsewhere, 'target.txt'), 'utf8')).toBe('keep me');
    expect(await readFile(join(out, 'other.txt'), 'utf8')).toBe('other');

    // A rerun holds the same line.
    const again = await runFerry(['pull', project, out, '--state', join(dir, 'pull.sqlite'), '--json'], service.env());
    expect(again.code).toBe(1);
    expect((await readdir(elsewhere)).sort()).toEqual(['.ferry-0123456789ab.partial', 'target.txt']);
  });
});
