// Every command ferry prints for its user to run next works as printed (issue 77): the commands
// in a summary's text are taken from it and run exactly so, as a newcomer pastes them.
import { describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { useTempDirs } from '../helpers/temp.js';
import { useService, writeTree } from '../helpers/service.js';
import { runFerry } from '../helpers/cli.js';
import { shellWords } from '../helpers/shell-words.js';

const tempDir = useTempDirs();
const service = useService();

/** The commands a text summary tells its user to run: each `ferry …` between backquotes. */
function printed(text: string): string[] {
  return [...text.matchAll(/`(ferry [^`]+)`/g)].map((m) => m[1] as string);
}

/** Each command printed in `text`, run exactly so in `env`; what each said. */
async function runEachPrinted(text: string, env: Record<string, string>): Promise<{ command: string; stdout: string; stderr: string }[]> {
  const commands = printed(text);
  expect(commands.length, text).toBeGreaterThan(0);
  const out = [];
  for (const command of commands) {
    const words = shellWords(command);
    expect(words[0]).toBe('ferry');
    const ran = await runFerry(words.slice(1), env);
    expect(ran.code, `${command}: ${ran.stderr}`).toBe(0);
    out.push({ command, stdout: ran.stdout, stderr: ran.stderr });
  }
  return out;
}

describe('commands ferry prints, run as printed', () => {
  it('after a mirror into a project given by its name: report and watch find the run', async () => {
    const dir = await tempDir('ferry-printed-');
    await writeTree(join(dir, 'src'), { 'a.txt': 'alpha', 'b.txt': 'bravo' });
    await service().client().projects.create({ name: 'Archive 2019', description: 'named, not given by id' });
    // The default store of this environment: what a newcomer has.
    const env = { ...service().env(), FERRY_STATE_DIR: join(dir, 'state') };
    const r = await runFerry(['mirror', join(dir, 'src'), '--project', 'Archive 2019'], env);
    expect(r.code, r.stderr).toBe(0);
    await runEachPrinted(r.stdout, env);
  });

  it('after a job file naming its project and a store of its own: the printed commands open that store, and say which run of it they opened', async () => {
    const dir = await tempDir('ferry-printed-');
    await writeTree(join(dir, 'src'), { 'a.txt': 'alpha', 'sub/b.txt': 'bravo' });
    const project = (await service().client().projects.create({ name: 'job file state', description: '' })).objectIdentifier;
    const env = { ...service().env(), FERRY_STATE_DIR: join(dir, 'default-state') };
    // The default store holds runs of its own, so that run 1 there is another job's.
    await writeTree(join(dir, 'other'), { 'x.txt': 'another job' });
    const other = (await service().client().projects.create({ name: 'another job', description: '' })).objectIdentifier;
    expect((await runFerry(['mirror', join(dir, 'other'), '--project', other], env)).code).toBe(0);
    const state = join(dir, 'job state', 'nightly.sqlite');
    // The project by its name, as a newcomer writes it (docs/cli.md, *Names and ids*).
    await writeFile(join(dir, 'nightly.yaml'), `job: mirror\nsource: ${join(dir, 'src')}\nproject: "job file state"\nstate: ${state}\n`);
    const r = await runFerry(['run', join(dir, 'nightly.yaml')], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`--state '${state}'`);
    const ran = await runEachPrinted(r.stdout, env);
    const watched = ran.find((x) => x.command.startsWith('ferry watch'));
    expect(watched?.stderr).toContain(`project ${project}, made by run 1 of the checkpoint store ${state}`);
    expect(watched?.stdout).toContain('done: 2 completed, 0 failed');
  });
});
