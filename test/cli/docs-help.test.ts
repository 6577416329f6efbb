// docs/cli.md and every command's --help say the same flags: each flag a command takes is in its
// section of the reference, and each flag a section names is one its commands take (or a global
// one). Read from the program itself (commander's definitions), so no flag can drift unseen.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Command } from 'commander';
import { buildProgram } from '../../src/cli/main.js';

const DOC = readFileSync(new URL('../../docs/cli.md', import.meta.url), 'utf8');

/** The reference's sections, by the command they document: `## \`ferry mirror …\`` -> mirror. */
function sections(): Map<string, string> {
  const out = new Map<string, string>();
  const parts = DOC.split(/^## /m).slice(1);
  for (const part of parts) {
    const m = /^`ferry ([a-z]+)/.exec(part);
    if (m) out.set(m[1] as string, (out.get(m[1] as string) ?? '') + part);
  }
  return out;
}

function flagsOf(cmd: Command): string[] {
  return cmd.options.map((o) => o.long).filter((f): f is string => f !== undefined && f !== '--help');
}

/** Every command with its subcommands' flags: `ferry jobs` documents list, show and resume together. */
function commandFlags(cmd: Command): Set<string> {
  const all = new Set(flagsOf(cmd));
  for (const sub of cmd.commands) for (const f of commandFlags(sub)) all.add(f);
  return all;
}

const FLAG = /(?<![\w-])--[a-z][a-z0-9-]*/g;

describe('docs/cli.md and --help', async () => {
  const program = await buildProgram();
  const globals = new Set([...flagsOf(program), '--version', '--help']);
  const docs = sections();
  const commands = program.commands.filter((c) => c.name() !== 'help');

  it('the global options are documented at the top', () => {
    const top = DOC.split(/^## /m)[0] as string;
    for (const f of globals) expect(top, f).toContain(f);
    expect(top).toContain('-V');
  });

  it.each(commands.map((c) => [c.name(), c] as const))('ferry %s: every flag in its section, and every flag of its section a real one', (name, cmd) => {
    const section = docs.get(name);
    expect(section, `docs/cli.md has no section for ferry ${name}`).toBeDefined();
    const taken = commandFlags(cmd);
    // A section may document another command's flags by reference ("Takes every flag of `ferry mirror`").
    const byReference = new Set<string>();
    for (const [, other] of (section as string).matchAll(/every\s+flag\s+of\s+`ferry ([a-z]+)`/g)) {
      const referenced = commands.find((c) => c.name() === other);
      if (referenced) for (const f of commandFlags(referenced)) byReference.add(f);
    }
    const missing = [...taken].filter((f) => !byReference.has(f) && !new RegExp(`${f}(?![a-z0-9-])`).test(section as string));
    expect(missing, `flags of ferry ${name} missing from its section of docs/cli.md`).toEqual([]);
    const named = new Set((section as string).match(FLAG) ?? []);
    // Flags of other commands a section may point at, named as such ("ferry mirror's --include").
    const elsewhere = new Set<string>();
    for (const other of commands) if (other !== cmd) for (const f of commandFlags(other)) elsewhere.add(f);
    const unknown = [...named].filter((f) => !taken.has(f) && !globals.has(f) && !elsewhere.has(f));
    expect(unknown, `flags named in the section of ferry ${name} that no command takes`).toEqual([]);
  });
});
