// An archive's sheet is guarded as a folder's is (issue 77): a zip whose entries all sit under the
// folder the archive tool wrapped them in, with a sheet whose rows leave it out, stops before
// anything is sent (exit 2) and names --strip-components 1; with it, every document carries its row.
import { describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { useTempDirs } from '../helpers/temp.js';
import { remoteFiles, useService } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';
import { zipOf } from '../helpers/archives.js';

const tempDir = useTempDirs();
const service = useService();

describe('a zip with its sheet', () => {
  it('rows without the wrapping folder: exit 2 before anything is sent, naming --strip-components 1, which then carries every row', async () => {
    const dir = await tempDir('ferry-archive-sheet-');
    const names = ['a.txt', 'sub/b.txt', 'sub/c.txt'];
    await writeFile(join(dir, 'archive-2019.zip'), await zipOf(names.map((n) => ({ name: `archive-2019/${n}`, data: `content of ${n}` }))));
    await writeFile(join(dir, 'rows.csv'), `path,Department\r\n${names.map((n, i) => `${n},D${i}`).join('\r\n')}\r\n`);
    const project = (await service().client().projects.create({ name: 'archive sheet', description: '' })).objectIdentifier;
    const args = ['mirror', join(dir, 'archive-2019.zip'), '--project', project, '--manifest', join(dir, 'rows.csv'), '--state', join(dir, 's.sqlite')];
    const refused = await runFerry(args, service().env());
    expect(refused.code, refused.stdout).toBe(2);
    expect(refused.stderr).toContain('none of its 3 rows names an entry of');
    expect(refused.stderr).toContain('Every entry of the archive sits under "archive-2019/", which the rows leave out: --strip-components 1 takes it off');
    expect(await remoteFiles(service().client(), project)).toEqual([]);
    const done = onlyJson(await runFerry([...args, '--strip-components', '1', '--json'], service().env()));
    expect(done).toMatchObject({ exitCode: 0, counts: { uploaded: 3, failed: 0 }, manifest: { unmatched: { count: 0 }, withoutRow: { count: 0 } } });
    const docs = await remoteFiles(service().client(), project);
    expect(Object.fromEntries(docs.map((d) => [d.path, d.metadata?.find((m) => m.key === 'Department')?.value]))).toEqual({ '/a.txt': 'D0', '/sub/b.txt': 'D1', '/sub/c.txt': 'D2' });
  });
});
