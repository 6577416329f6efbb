// After a rename, the service keeps the old name's document for good: `check` calls it "only on
// the service" on every later run (exit 1), and `check --one-way` (rclone's) asks only whether the
// project holds every file of the source, counting the rest (issue 77).
import { describe, expect, it } from 'vitest';
import { rename, writeFile } from 'node:fs/promises';
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

describe('check --job FILE', () => {
  it("compares what a nightly job file sends: its source, project by name, folder and excludes, none repeated by hand", async () => {
    const dir = await tempDir('ferry-check-job-');
    const src = join(dir, 'share');
    await writeTree(src, { 'a.txt': 'a', 'tmp/scratch.txt': 'left out by the job', 'b.log': 'left out too' });
    await service().client().projects.create({ name: 'Nightly share', description: '' });
    const job = join(dir, 'nightly.yaml');
    await writeFile(job, `job: mirror\nsource: share\nproject: Nightly share\nto: Share\nexclude: ["tmp/**", "*.log"]\nstate: nightly.sqlite\n`);
    expect((await runFerry(['run', job], service().env())).code).toBe(0);
    // The same tree by flags without the excludes: the files the job leaves out are "missing".
    const bare = onlyJson(await runFerry(['check', src, '--project', 'Nightly share', '--to', 'Share', '--json'], service().env()));
    expect(bare).toMatchObject({ exitCode: 1, counts: { missingOnTheService: 2 } });
    const byJob = onlyJson(await runFerry(['check', '--job', job, '--json'], service().env()));
    expect(byJob).toMatchObject({ status: 'matching', exitCode: 0, matching: 1 });
    await rename(join(src, 'a.txt'), join(src, 'renamed.txt'));
    expect((await runFerry(['run', job], service().env())).code).toBe(0);
    expect(onlyJson(await runFerry(['check', '--job', job, '--one-way', '--json'], service().env()))).toMatchObject({ exitCode: 0, matching: 1, onlyOnServiceLeftOut: 1 });
  });

  it('refuses what the job file already says, and a job that is not a mirror, naming each', async () => {
    const dir = await tempDir('ferry-check-job-');
    const job = join(dir, 'pull.yaml');
    await writeFile(job, `job: pull\nproject: ${(await service().client().projects.create({ name: 'pulled', description: '' })).objectIdentifier}\ndir: out\n`);
    const twice = await runFerry(['check', join(dir, 'x'), '--job', job, '--exclude', '*.tmp'], service().env());
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain('the job file names the source, project, filters and archive settings; leave out SOURCE, --exclude');
    const pull = await runFerry(['check', '--job', job], service().env());
    expect(pull.code).toBe(2);
    expect(pull.stderr).toContain('takes a mirror job file; this one is a pull job');
    const neither = await runFerry(['check'], service().env());
    expect(neither.code).toBe(2);
    expect(neither.stderr).toContain('name the SOURCE to compare (or --job FILE');
  });
});
