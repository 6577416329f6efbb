// Every command ferry prints for its user to run next works as printed (issue 77): the commands
// in a summary's text are taken from it and run exactly so, as a newcomer pastes them.
import { describe, expect, it } from 'vitest';
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

describe('commands ferry prints, run as printed', () => {
  it('after a mirror into a project given by its name: report and watch find the run', async () => {
    const dir = await tempDir('ferry-printed-');
    await writeTree(join(dir, 'src'), { 'a.txt': 'alpha', 'b.txt': 'bravo' });
    await service().client().projects.create({ name: 'Archive 2019', description: 'named, not given by id' });
    // The default store of this environment: what a newcomer has.
    const env = { ...service().env(), FERRY_STATE_DIR: join(dir, 'state') };
    const r = await runFerry(['mirror', join(dir, 'src'), '--project', 'Archive 2019'], env);
    expect(r.code, r.stderr).toBe(0);
    const commands = printed(r.stdout);
    expect(commands.length, r.stdout).toBeGreaterThan(0);
    for (const command of commands) {
      const words = shellWords(command);
      expect(words[0]).toBe('ferry');
      const ran = await runFerry(words.slice(1), env);
      expect(ran.code, `${command}: ${ran.stderr}`).toBe(0);
    }
  });
});
