// Two documents never share a local path, and nothing ferry did not write is deleted: documents
// whose names map to one path (`.` and `%2E`), names holding `/` (`/abs.txt`, `a//b.txt` beside
// `abs.txt` and `a/b.txt`), documents and a user file named like ferry's temporary files.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { mkdtemp, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { Readable } from 'node:stream';
import { startService, writeTree, type Service } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';
import { mirror } from '../../jobs/mirror.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';

let service: Service;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.close());

interface PullJson {
  counts: Record<string, number>;
  errors: { key: string; error: string }[];
  renamed?: { key: string; local: string; why: string }[];
}

describe('ferry pull: one document, one local path; only its own temporary files', () => {
  it('keeps colliding documents apart, refuses names holding "/", never deletes look-alike temporary files', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-pull-collide-'));
    const client = service.client();
    const project = (await client.projects.create({ name: 'collisions', description: 'pull' })).objectIdentifier;
    // a/b.txt through a mirror (a folder where the service has them, a flattened path where not).
    await writeTree(join(dir, 'src'), { 'a/b.txt': 'in folder a' });
    const store = new SqliteCheckpointStore(join(dir, 'mirror.sqlite'));
    await mirror({ source: join(dir, 'src'), project }, { client, store });
    store.close();
    const uploadId = randomUUID();
    const put = (name: string, content: string) =>
      client.documents.upload(project, { open: () => Readable.from([Buffer.from(content)]), size: Buffer.byteLength(content), filename: name }, { documentUploadIdentifier: uploadId });
    const docs: Record<string, string> = {
      'abs.txt': 'plain abs',
      '/abs.txt': 'slash abs',
      'a//b.txt': 'double slash',
      '.': 'a dot',
      '%2E': 'percent 2E',
      '.ferry-0123456789ab.partial': 'a document named like an old temporary file',
      '.ferry-01234567-89abcdef.partial': 'a document named like a temporary file',
    };
    for (const [name, content] of Object.entries(docs)) expect((await put(name, content)).name).toBe(name);

    const out = join(dir, 'out');
    await mkdir(out);
    await writeFile(join(out, '.ferry-abcdef01-23456789.partial'), "the user's own file");
    const state = join(dir, 'pull.sqlite');
    const r = await runFerry(['pull', project, out, '--state', state, '--json'], service.env());
    expect(r.code, r.stderr).toBe(1);
    const summary = onlyJson(r) as PullJson;
    expect(summary.counts).toMatchObject({ discovered: 8, downloaded: 6, failed: 2 });
    expect(summary.errors.map((e) => e.key).sort()).toEqual(['/abs.txt', 'a//b.txt']);
    for (const e of summary.errors) expect(e.error).toMatch(/holds a "\/"/);

    // Every pulled document is on disk once, under its own path or a reported disambiguated one.
    const top = (await readdir(out)).sort();
    const dots = top.filter((n) => n.startsWith('%2E'));
    expect(dots).toHaveLength(2);
    const dotContents = await Promise.all(dots.map((n) => readFile(join(out, n), 'utf8')));
    expect(dotContents.sort()).toEqual(['a dot', 'percent 2E']);
    const hashed = dots.find((n) => n !== '%2E')!;
    expect(hashed).toMatch(/^%2E~[0-9a-f]{8}$/);
    expect(summary.renamed?.some((x) => x.local === hashed && /maps to the same local path/.test(x.why))).toBe(true);
    expect(await readFile(join(out, 'abs.txt'), 'utf8')).toBe('plain abs');
    expect(await readFile(join(out, 'a', 'b.txt'), 'utf8')).toBe('in folder a');
    expect(top).toEqual(expect.arrayContaining(['.ferry-0123456789ab.partial', '.ferry-01234567-89abcdef.partial', '.ferry-abcdef01-23456789.partial']));

    // Reruns touch none of them: the look-alikes stay, nothing is pulled again, the same two refusals.
    for (let round = 0; round < 2; round++) {
      const again = await runFerry(['pull', project, out, '--state', state, '--json'], service.env());
      expect(again.code).toBe(1);
      expect((onlyJson(again) as PullJson).counts).toMatchObject({ downloaded: 0, failed: 2 });
      expect((await readdir(out)).sort()).toEqual(top);
      expect(await readFile(join(out, '.ferry-01234567-89abcdef.partial'), 'utf8')).toBe('a document named like a temporary file');
      expect(await readFile(join(out, '.ferry-abcdef01-23456789.partial'), 'utf8')).toBe("the user's own file");
    }
  });
});
