// One declaration per setting (src/settings/declared.ts), held to what users meet: every flag of
// every command is in docs/cli.md with the default and range its --help gives; every flag of a job
// kind's command is a key its job file takes; today's job files still load; a duration is read the
// same by a flag and by a job file.
import { describe, expect, it } from 'vitest';
import { mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { Command, Option } from 'commander';
import { buildProgram } from '../../src/cli/main.js';
import { BEGIN, END, optionTables } from '../../src/cli/option-tables.js';
import { settingOf } from '../../src/cli/settings-flags.js';
import { JOB_COMMANDS, JOB_KINDS, JOB_SETTINGS, SETTINGS, type JobKind, type Setting } from '../../src/settings/declared.js';
import { formFromFlags, setPath, type Form } from '../../src/settings/form.js';
import { jobKeys } from '../../src/settings/schema.js';
import { definitionFromFlags, loadDefinition } from '../../jobs/definition.js';

const DOC = readFileSync(new URL('../../docs/cli.md', import.meta.url), 'utf8');
const ID = '2b0c8a3e-1f7e-4c1e-9f0a-0c9e1d2b3a4f';

function commandAt(program: Command, path: string): Command {
  let cmd = program;
  for (const name of path.split(' ')) cmd = cmd.commands.find((c) => c.name() === name)!;
  return cmd;
}

/** Every command and subcommand with its path: `playbooks backup`. */
function commands(program: Command): [string, Command][] {
  const out: [string, Command][] = [];
  const walk = (cmd: Command, path: string[]) => {
    for (const sub of cmd.commands.filter((c) => c.name() !== 'help')) {
      out.push([[...path, sub.name()].join(' '), sub]);
      walk(sub, [...path, sub.name()]);
    }
  };
  walk(program, []);
  return out;
}

/** docs/cli.md's row for a flag of a command: its cells. */
function docRow(path: string, flags: string): string[] | undefined {
  const block = DOC.slice(DOC.indexOf(BEGIN), DOC.indexOf(END));
  const section = block.split(/^### /m).find((s) => s.startsWith(`\`ferry ${path}\``));
  const line = section?.split('\n').find((l) => l.startsWith(`| \`${flags}\` |`));
  return line?.split(/(?<!\\)\|/).slice(1, -1).map((c) => c.trim());
}

describe('every flag in docs/cli.md as --help gives it', async () => {
  const program = await buildProgram();

  it('the option tables of docs/cli.md are the program\'s (npm run docs:options writes them)', () => {
    expect(DOC).toContain(optionTables(program));
  });

  it.each(commands(program))('ferry %s: each flag\'s default and range in --help are its row\'s in docs/cli.md', (path, cmd) => {
    const help = cmd.createHelp();
    for (const option of cmd.options.filter((o: Option) => !o.hidden)) {
      const row = docRow(path, option.flags);
      expect(row, `docs/cli.md has no row for ferry ${path} ${option.flags}`).toBeDefined();
      const [, def, range] = row as string[];
      const said = help.optionDescription(option);
      // --help says a default as "(default X" (a declared setting) or "(default: X)" (commander's, or in words).
      const helpDefault = /\(default:? (.*?)[;)]/.exec(said)?.[1]?.replace(/^"(.*)"$/, '$1') ?? '';
      expect(def.replace(/&lt;/g, '<').replace(/\\\|/g, '|'), `ferry ${path} ${option.flags}: --help says "${said}"`).toBe(helpDefault);
      if (range && option.argChoices) expect(said).toContain(`(choices: ${option.argChoices.map((c) => `"${c}"`).join(', ')})`);
      else if (range) expect(said, `${path} ${option.flags}`).toContain(range);
    }
  });
});

/** A value each kind of setting takes, as a job file writes it. */
function sample(s: Setting, dir: string): unknown {
  if (s.negates) return false;
  if ('values' in s.kind) return (s.kind.values as string[])[0];
  if (s.kind.expected === 'true or false') return true;
  const byArg: Record<string, unknown> = {
    '<duration>': '30s', '<age>': '7d', '<size>': '10M', '<rate>': '08:00,512k 19:00,off', '<n>': 5, '<ids>': [ID], '<K/N>': '1/2', '<char>': 'tab',
    '<glob>': ['*.pdf'], '<key=value>': { team: 'legal' }, '<url>': 'https://ping.example.invalid/abc', '<id>': ID, '<name>': 'cp850', '<mapping>': { badFile: 'retry' },
  };
  if (s.key === 'filterFrom') return join(dir, 'rules.txt');
  if (s.key === 'map') return join(dir, 'map.yaml');
  if ('isPath' in s.kind) return join(dir, `${s.key}.out`);
  return byArg[s.kind.arg ?? ''] ?? 'some text';
}

/** The keys a job file of each kind needs, and the ones a key needs beside it. */
const REQUIRED: Record<JobKind, Form> = {
  mirror: { source: 'src', project: ID },
  upload: { source: 'src', project: ID, playbook: ID },
  pull: { project: ID, dir: 'copy' },
  'playbooks-backup': { out: 'backups' },
  migrate: { from: 'a', to: 'b', projects: [ID] },
};
const NEEDS: Record<string, Form> = { manifestDelimiter: { manifest: 'm.csv' }, manifestEncoding: { manifest: 'm.csv' }, manifestSheet: { manifest: 'm.xlsx' }, manifestPartial: { manifest: 'm.csv' }, backupDir: { overwriteChanged: true } };

describe('every flag of a job kind is a key of its job file', async () => {
  const program = await buildProgram();
  const dir = await mkdtemp(join(tmpdir(), 'ferry-settings-'));
  await writeFile(join(dir, 'rules.txt'), '+ *.pdf\n- *\n');
  await writeFile(join(dir, 'map.yaml'), 'organizationMetadata: {}\n');
  const run = commandAt(program, 'run');

  it.each(JOB_KINDS.map((k) => [k] as const))('%s: each flag of its command loads from a job file under its declared key', async (kind) => {
    const cmd = commandAt(program, JOB_COMMANDS[kind]);
    const keys = jobKeys(kind);
    for (const option of cmd.options.filter((o: Option) => !o.hidden && o.long !== '--help')) {
      const s = settingOf(option);
      expect(s, `ferry ${JOB_COMMANDS[kind]} ${option.flags} is declared in src/settings/declared.ts`).toBeDefined();
      if (s!.runFlag) {
        // How a run shows its result is said to `ferry run FILE`, not written in the file.
        expect(run.options.map((o) => o.long), option.flags).toContain(option.long);
        continue;
      }
      expect(keys, option.flags).toContain(s!.key);
      const form: Form = { job: kind, ...REQUIRED[kind], ...NEEDS[s!.key] };
      if (s!.asForm !== undefined) {
        delete form[s!.key];
        setPath(form, s!.key, s!.asForm);
      } else setPath(form, s!.key, sample(s!, dir));
      const file = join(dir, `${kind}-${s!.key}.json`);
      await writeFile(file, JSON.stringify(form));
      expect(() => loadDefinition(file), `${kind} job file with ${s!.key}: ${JSON.stringify(form)}`).not.toThrow();
    }
  });

  it('the job files written against today\'s keys (config/jobs) still load', async () => {
    const folder = new URL('../../config/jobs/', import.meta.url);
    const files = (await readdir(folder)).filter((f) => f.endsWith('.yaml'));
    expect(files.length).toBeGreaterThanOrEqual(5);
    for (const f of files) expect(() => loadDefinition(new URL(f, folder).pathname), f).not.toThrow();
  });

  it('each declared setting is a flag or a key of some job kind, and no key is declared twice for one kind', () => {
    for (const kind of JOB_KINDS) {
      const keys = jobKeys(kind);
      expect(new Set(keys).size, `${kind}: ${keys.join(', ')}`).toBe(keys.length);
    }
    const used = new Set([...Object.values(JOB_SETTINGS).flat()]);
    for (const name of Object.keys(SETTINGS)) expect(used.has(name as keyof typeof SETTINGS) || SETTINGS[name as keyof typeof SETTINGS].flag !== undefined, name).toBe(true);
  });
});

describe('one reader per kind of value', () => {
  it('--max-duration 1d is taken by the flag and by a job file alike', async () => {
    const byFlag = definitionFromFlags('mirror', { source: 'src', ...formFromFlags(JOB_SETTINGS.mirror, { project: ID, maxDuration: '1d' }) });
    expect(byFlag.kind === 'mirror' && byFlag.mirror.limits?.maxDurationMs).toBe(86_400_000);
    const dir = await mkdtemp(join(tmpdir(), 'ferry-settings-'));
    await writeFile(join(dir, 'job.yaml'), `job: mirror\nsource: src\nproject: ${ID}\nmaxDuration: 1d\nwaitLock: 1w\n`);
    const byFile = loadDefinition(join(dir, 'job.yaml'));
    expect(byFile.kind === 'mirror' && byFile.mirror.limits?.maxDurationMs).toBe(86_400_000);
    expect(byFile.kind === 'mirror' && byFile.mirror.lock?.waitMs).toBe(7 * 86_400_000);
  });

  it('a value out of range is refused by the flag and the job file with the same range', async () => {
    expect(() => formFromFlags(JOB_SETTINGS.mirror, { lockTtl: '2h' })).toThrow('--lock-ttl "2h" is outside 2s to 1h');
    expect(() => formFromFlags(JOB_SETTINGS.mirror, { concurrency: '300' })).toThrow('--concurrency must be from 1 to 256, not "300"');
    const dir = await mkdtemp(join(tmpdir(), 'ferry-settings-'));
    await writeFile(join(dir, 'job.yaml'), `job: mirror\nsource: src\nproject: ${ID}\nlockTtl: 2h\nconcurrency: 300\nstats: 500ms\n`);
    expect(() => loadDefinition(join(dir, 'job.yaml'))).toThrow(/concurrency: must be from 1 to 256[\s\S]*lockTtl: must be from 2s to 1h[\s\S]*stats: must be at least 1s/);
  });

  it('a job file\'s metadata is held to the flag\'s rule: keys starting with "ferry." are ferry\'s own', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-settings-'));
    await writeFile(join(dir, 'job.yaml'), `job: mirror\nsource: src\nproject: ${ID}\nmetadata: { ferry.path: x }\n`);
    expect(() => loadDefinition(join(dir, 'job.yaml'))).toThrow(/metadata "ferry.path=x": keys starting with "ferry." are ferry's own/);
    expect(() => definitionFromFlags('mirror', { source: 'src', ...formFromFlags(JOB_SETTINGS.mirror, { project: ID, metadata: ['ferry.path=x'] }) })).toThrow(/--metadata "ferry.path=x"/);
  });

  it('two flags of one key cannot be given together', () => {
    expect(() => formFromFlags(JOB_SETTINGS.migrate, { projects: ID, allProjects: true })).toThrow('--projects and --all-projects cannot be given together');
  });
});
