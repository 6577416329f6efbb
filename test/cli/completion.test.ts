// `ferry completion`: the bash script driven in bash as the shell drives it (COMP_WORDS), and the
// zsh and fish scripts naming what there is. Written from the program, so a new flag is in it.
import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { runFerry } from '../helpers/cli.js';

const run = promisify(execFile);

describe('ferry completion', () => {
  it('bash: commands, subcommands and flags of the command being typed', async () => {
    const script = await runFerry(['completion', 'bash'], {});
    expect(script.code, script.stderr).toBe(0);
    const dir = await mkdtemp(join(tmpdir(), 'ferry-completion-'));
    await writeFile(join(dir, 'ferry.bash'), script.stdout);
    const complete = async (...words: string[]) => {
      const line = words.map((w) => `'${w}'`).join(' ');
      const { stdout } = await run('bash', ['-c', `source ${join(dir, 'ferry.bash')}; COMP_WORDS=(${line}); COMP_CWORD=${words.length - 1}; _ferry; printf '%s\\n' "\${COMPREPLY[@]}"`]);
      return stdout.split('\n').filter(Boolean);
    };
    expect(await complete('ferry', 'mi')).toEqual(['mirror', 'migrate']);
    expect(await complete('ferry', 'mirror', '/srv/share', '--max-')).toEqual(['--max-entries', '--max-size', '--max-age', '--max-duration', '--max-transfer', '--max-files']);
    // A global flag's value is not taken for a command.
    expect(await complete('ferry', '-p', 'prod', 'jobs', '')).toEqual(['list', 'show', 'resume', '--help']);
    expect(await complete('ferry', 'playbooks', 'list', '--')).toEqual(expect.arrayContaining(['--search', '--json']));
    expect(await complete('ferry', 'completion', '')).toEqual(['--help']);
  });

  it('zsh and fish name every command', async () => {
    const zsh = await runFerry(['completion', 'zsh'], {});
    expect(zsh.stdout.startsWith('#compdef ferry\n')).toBe(true);
    expect(zsh.stdout).toContain('bashcompinit');
    const fish = await runFerry(['completion', 'fish'], {});
    for (const cmd of ['mirror', 'pull', 'migrate', 'ls', 'config', 'playbooks']) expect(fish.stdout).toContain(`-n '__fish_use_subcommand' -a ${cmd} `);
    expect(fish.stdout).toContain("complete -c ferry -n '__fish_seen_subcommand_from pull' -l min-size");
    const bad = await runFerry(['completion', 'powershell'], {});
    expect(bad.code).toBe(2);
  });
});
