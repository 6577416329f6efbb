// No flag spelled by hand that ferry does not take: every `--flag` the source names (in a message,
// a printed command, a help text) is a flag of one of its commands, read from the program itself
// (commander's definitions, made from src/settings/declared.ts for the settings). A flag renamed in
// its declaration leaves no message naming the old one behind.
import { describe, expect, it } from 'vitest';
import type { Command } from 'commander';
import { buildProgram } from '../../src/cli/main.js';
import { code, sources } from './sources.js';

/** Flags of other programs that ferry's messages name: rclone's that ferry answers with why not, LibreOffice's. */
const OTHERS = new Set(['--delete', '--delete-after', '--delete-during', '--delete-excluded', '--headless', '--convert-to']);

/** The string and template literals of a file: what it says, not its comments or code (`--count` is a decrement). */
const said = (text: string) => [...code(text).matchAll(/'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`/g)].map((m) => m[0]).join('\n');

function longFlags(cmd: Command, into: Set<string>): Set<string> {
  for (const o of cmd.options) {
    if (o.long) into.add(o.long);
    // A boolean `--x` takes `--no-x` too, and `--no-x` names `--x`.
    if (o.long?.startsWith('--no-')) into.add(`--${o.long.slice(5)}`);
    else if (o.long) into.add(`--no-${o.long.slice(2)}`);
  }
  for (const sub of cmd.commands) longFlags(sub, into);
  return into;
}

describe('flags named in the source', async () => {
  const program = await buildProgram();
  const taken = longFlags(program, new Set(['--help', '--version']));

  it('each one is a flag ferry takes', async () => {
    expect(taken.size).toBeGreaterThan(100);
    const files = [...(await sources('src')), ...(await sources('jobs'))];
    const stray = files.flatMap((f) => [...said(f.text).matchAll(/(?<![\w-])--[a-z][a-z0-9-]*(?![\w-])/g)].map((m) => m[0]).filter((flag) => !taken.has(flag) && !OTHERS.has(flag)).map((flag) => `${f.path}: ${flag}`));
    expect([...new Set(stray)]).toEqual([]);
  });
});
