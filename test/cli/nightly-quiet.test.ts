// A nightly job stays quiet when nothing changed (issue 77): files deleted here are said by name on
// the run that first misses them, then only counted; the night after says nothing to do.
import { describe, expect, it } from 'vitest';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { useTempDirs } from '../helpers/temp.js';
import { useService, writeTree } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';

const tempDir = useTempDirs();
const service = useService();

describe('a nightly mirror after files were deleted here', () => {
  it('says the deleted files once, then counts them, and the next quiet night is one line', async () => {
    const dir = await tempDir('ferry-nightly-');
    const src = join(dir, 'src');
    await writeTree(src, { 'a.txt': 'a', 'b.txt': 'b', 'sub/c.txt': 'c' });
    const project = (await service().client().projects.create({ name: 'nightly quiet', description: '' })).objectIdentifier;
    const night = (json: boolean) => runFerry(['mirror', src, '--project', project, '--state', join(dir, 's.sqlite'), ...(json ? ['--json'] : [])], service().env());
    expect((await night(true)).code).toBe(0);
    await rm(join(src, 'b.txt'));
    await rm(join(src, 'sub', 'c.txt'));
    const first = onlyJson(await night(true));
    expect(first.deletedLocally).toMatchObject({ count: 2, sample: ['b.txt', 'sub/c.txt'] });
    expect((first.deletedLocally as { before?: number }).before).toBeUndefined();
    const second = onlyJson(await night(true));
    expect(second.deletedLocally).toMatchObject({ count: 0, sample: [], before: 2 });
    const third = await night(false);
    expect(third.code).toBe(0);
    expect(third.stdout).toMatch(/^mirror run \d+: nothing to do, its one entry already in place/);
    expect(third.stdout).not.toContain('deleted locally');
  });
});
