// `ferry projects create NAME` (issue 77): the project a newcomer mirrors into, made from the CLI;
// a name already taken is refused, and the mirror it prints next works as printed.
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { useTempDirs } from '../helpers/temp.js';
import { useService, writeTree } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';
import { shellWords } from '../helpers/shell-words.js';

const tempDir = useTempDirs();
const service = useService();

describe('ferry projects create', () => {
  it('makes the project, names its id and tenant, and the printed mirror finds it by name', async () => {
    const dir = await tempDir('ferry-projects-');
    await writeTree(join(dir, 'src'), { 'a.txt': 'a' });
    const env = { ...service().env(), FERRY_STATE_DIR: join(dir, 'state') };
    const made = await runFerry(['projects', 'create', "Q3 board's files", '--description', 'for the board'], env);
    expect(made.code, made.stderr).toBe(0);
    const id = /\(([0-9a-f-]{36})\)/.exec(made.stdout)?.[1];
    const project = (await service().client().projects.get(id!)) as { name?: string; description?: string };
    expect(project).toMatchObject({ name: "Q3 board's files", description: 'for the board' });
    // The next command, as printed, with the source filled in.
    const next = /next: (ferry .*)$/m.exec(made.stdout)?.[1];
    const words = shellWords(next!.replace('SOURCE', join(dir, 'src')));
    expect(onlyJson(await runFerry([...words.slice(1), '--json'], env))).toMatchObject({ exitCode: 0, project: id, counts: { uploaded: 1 } });
  });

  it('a name taken already is exit 2 naming the project that has it; --json answers one object', async () => {
    const first = onlyJson(await runFerry(['projects', 'create', 'Taken', '--json'], service().env()));
    expect(first).toMatchObject({ command: 'projects create', status: 'succeeded', exitCode: 0, project: { name: 'Taken' } });
    const again = await runFerry(['projects', 'create', 'Taken', '--json'], service().env());
    expect(again.code).toBe(2);
    expect(JSON.stringify(onlyJson(again))).toContain(`exists already (${(first.project as { id: string }).id})`);
  });
});
