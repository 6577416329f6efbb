// What an rclone user types first (issue 77): `ferry sync`, `--delete`, one file as the source.
// Each is refused as before (exit 2), now with what ferry does instead, and that advice works.
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { useTempDirs } from '../helpers/temp.js';
import { remoteFiles, useService, writeTree } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';

const tempDir = useTempDirs();
const service = useService();

describe('rclone habits', () => {
  it('`ferry sync` names mirror and pull, and says nothing is deleted', async () => {
    const r = await runFerry(['sync', 'a', 'b'], {});
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("as rclone's `sync`");
    expect(r.stderr).toContain('`ferry mirror SOURCE --project P`');
  });

  it('--delete says the service keeps every document', async () => {
    const r = await runFerry(['mirror', '.', '--project', 'x', '--delete'], {});
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown option '--delete'");
    expect(r.stderr).toContain('ferry never deletes');
  });

  it('one file as the source: refused with the --include that mirrors it, and that advice works', async () => {
    const dir = await tempDir('ferry-rclone-');
    await writeTree(join(dir, 'src'), { 'report 2024.pdf': 'the one', 'other.txt': 'not this one' });
    const project = (await service().client().projects.create({ name: 'one file', description: '' })).objectIdentifier;
    const refused = await runFerry(['mirror', join(dir, 'src', 'report 2024.pdf'), '--project', project, '--state', join(dir, 's.sqlite')], service().env());
    expect(refused.code).toBe(2);
    const advice = /--include '([^']+)'/.exec(refused.stderr)?.[1];
    expect(advice, refused.stderr).toBe('report 2024.pdf');
    const done = onlyJson(await runFerry(['mirror', join(dir, 'src'), '--project', project, '--include', advice!, '--state', join(dir, 's.sqlite'), '--json'], service().env()));
    expect(done, JSON.stringify(done)).toMatchObject({ exitCode: 0, counts: { uploaded: 1 } });
    expect((await remoteFiles(service().client(), project)).map((d) => d.path)).toEqual(['/report 2024.pdf']);
  });
});
