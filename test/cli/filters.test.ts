// --min-size/--max-size/--min-age/--max-age in mirror and pull, against the emulator over loopback:
// the files outside the limits are neither carried nor counted, nor later taken for files gone
// from the source; a run without the limits carries the rest.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readdir, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { startService, writeTree, type Service } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';

let service: Service;
let dir: string;
beforeAll(async () => {
  service = await startService();
  dir = await mkdtemp(join(tmpdir(), 'ferry-filters-'));
  await writeTree(join(dir, 'src'), { 'small.txt': 'x'.repeat(10), 'big.txt': 'x'.repeat(5000), 'old.txt': 'x'.repeat(100), 'new.txt': 'x'.repeat(100) });
  const longAgo = new Date(Date.now() - 10 * 24 * 3_600_000);
  await utimes(join(dir, 'src', 'old.txt'), longAgo, longAgo);
});
afterAll(() => service.close());

type Summary = { counts: Record<string, number>; deletedLocally: { count: number } };

describe('size and age filters', () => {
  it('mirror carries only what lies inside the limits, then the rest when they are lifted', async () => {
    const client = service.client();
    const project = (await client.projects.create({ name: 'filters', description: '' })).objectIdentifier;
    const base = ['mirror', join(dir, 'src'), '--project', project, '--state', join(dir, 'm.sqlite'), '--json'];
    const first = onlyJson(await runFerry([...base, '--min-size', '50', '--max-size', '1K', '--max-age', '7d'], service.env())) as unknown as Summary;
    // Only new.txt: small.txt is too small, big.txt too big, old.txt too old.
    expect(first.counts).toMatchObject({ discovered: 1, uploaded: 1, failed: 0 });
    expect((await client.documents.list(project).all()).map((d) => d.name)).toEqual(['new.txt']);
    const rest = onlyJson(await runFerry(base, service.env())) as unknown as Summary;
    expect(rest.counts).toMatchObject({ discovered: 4, uploaded: 3, skipped: 1 });
    // Limited again: what they leave out is not taken for files gone from the source.
    const again = onlyJson(await runFerry([...base, '--max-size', '1K'], service.env())) as unknown as Summary;
    expect(again.counts).toMatchObject({ discovered: 3, uploaded: 0 });
    expect(again.deletedLocally.count).toBe(0);
  });

  it('pull takes the same limits, and refuses limits that leave nothing', async () => {
    const client = service.client();
    const project = (await client.projects.create({ name: 'filters pull', description: '' })).objectIdentifier;
    expect(onlyJson(await runFerry(['mirror', join(dir, 'src'), '--project', project, '--state', join(dir, 'p-m.sqlite'), '--json'], service.env()))).toMatchObject({ status: 'succeeded' });
    const out = join(dir, 'out');
    const pulled = onlyJson(await runFerry(['pull', project, out, '--min-size', '1K', '--state', join(dir, 'p.sqlite'), '--json'], service.env())) as unknown as Summary;
    expect(pulled.counts).toMatchObject({ discovered: 1, downloaded: 1 });
    expect(await readdir(out)).toEqual(['big.txt']);
    const none = await runFerry(['pull', project, out, '--min-size', '2K', '--max-size', '1K'], service.env());
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no file would be left');
  });
});
