// After a rename, the service keeps the old name's document for good: `check` calls it "only on
// the service" on every later run (exit 1), and `check --one-way` (rclone's) asks only whether the
// project holds every file of the source, counting the rest (issue 77).
import { describe, expect, it } from 'vitest';
import { rename } from 'node:fs/promises';
import { join } from 'node:path';
import { useTempDirs } from '../helpers/temp.js';
import { useService, writeTree } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';

const tempDir = useTempDirs();
const service = useService();

describe('check --one-way', () => {
  it('after a rename: the old name is counted, not a difference; a file missing on the service still is', async () => {
    const dir = await tempDir('ferry-one-way-');
    const src = join(dir, 'src');
    await writeTree(src, { 'a.txt': 'a', 'b.txt': 'b' });
    const project = (await service().client().projects.create({ name: 'one way', description: '' })).objectIdentifier;
    const mirror = () => runFerry(['mirror', src, '--project', project, '--state', join(dir, 's.sqlite')], service().env());
    expect((await mirror()).code).toBe(0);
    await rename(join(src, 'b.txt'), join(src, 'renamed.txt'));
    expect((await mirror()).code).toBe(0);
    const both = onlyJson(await runFerry(['check', src, '--project', project, '--json'], service().env()));
    expect(both).toMatchObject({ exitCode: 1, counts: { onlyOnTheService: 1 } });
    const oneWay = onlyJson(await runFerry(['check', src, '--project', project, '--one-way', '--json'], service().env()));
    expect(oneWay).toMatchObject({ status: 'matching', exitCode: 0, matching: 2, onlyOnServiceLeftOut: 1, counts: { onlyOnTheService: 0 } });
    const text = await runFerry(['check', src, '--project', project, '--one-way'], service().env());
    expect(text.stdout).toContain('only on the service 1 (left out: --one-way)');
    // One way still sees what the service lacks.
    await writeTree(src, { 'new.txt': 'not mirrored' });
    expect(onlyJson(await runFerry(['check', src, '--project', project, '--one-way', '--json'], service().env()))).toMatchObject({ exitCode: 1, counts: { missingOnTheService: 1 } });
  });
});
