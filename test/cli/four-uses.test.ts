// The four uses of the README, end to end, as a newcomer lives them (issue 77): a nightly job, a
// tenant migration, playbook backups and the onboarding of a zipped archive with its sheet, each
// from the README's own commands against `ferry emulator --write-profiles` (its own process, two
// tenants), in text and in JSON. Every follow-up command ferry prints (between backquotes in its
// text; `next`, a project's `report`, or a backquoted command inside its JSON) is run exactly as
// printed, and must succeed. A command with a placeholder (SOURCE, FILE) is a template, not run.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { createInterface } from 'node:readline';
import { FerryClient } from '../../src/api/index.js';
import { yaml } from '../../src/libraries.js';
import { FERRY_BIN, runFerry, type CliResult } from '../helpers/cli.js';
import { assertEnvelope } from '../helpers/json-envelope.js';
import { shellWords } from '../helpers/shell-words.js';
import { writeTree } from '../helpers/service.js';
import { zipOf } from '../helpers/archives.js';

const README = new URL('../../README.md', import.meta.url);
const NIGHTLY = new URL('../../config/jobs/nightly-mirror.yaml', import.meta.url);
/** Words a printed template stands in for: such a line shows a form, it is not a command. */
const PLACEHOLDERS = new Set(['SOURCE', 'FILE', 'DIR', 'RUN', 'ID', 'PROJECT', 'NAME', 'PROFILE', 'TARGET', 'FOLDER']);

let emulator: ChildProcess;
let dir: string;
let env: Record<string, string>;
let tenants: { clientId: string; clientSecret: string }[];
let address: { baseUrl: string; settingsUrl: string; authUrl: string; audience: string };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-four-uses-'));
  // As the README starts it, with the secrets also on the ready line for this test's own client.
  emulator = spawn(process.execPath, [FERRY_BIN, 'emulator', '--port', '0', '--write-profiles', join(dir, 'profiles.yaml'), '--ready-json'], { env: { PATH: process.env.PATH ?? '', HOME: dir, FERRY_LOG_LEVEL: 'silent' }, stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(createInterface({ input: emulator.stdout! }), 'line')) as [string];
  const ready = JSON.parse(line) as typeof address & { tenants: typeof tenants };
  ({ tenants } = ready);
  address = ready;
  env = { FERRY_CONFIG: join(dir, 'profiles.yaml'), FERRY_STATE_DIR: join(dir, 'state'), HOME: dir };
});
afterAll(async () => {
  emulator?.kill('SIGTERM');
  if (emulator && emulator.exitCode === null) await once(emulator, 'exit');
});

function client(tenant: number): FerryClient {
  const t = tenants[tenant]!;
  return new FerryClient({ address, credentials: { clientId: t.clientId, clientSecret: t.clientSecret, audience: address.audience } });
}

/** Every command a result printed for its user to run next. */
function printedBy(r: CliResult): string[] {
  const found: string[] = [];
  const quoted = (text: string) => {
    for (const m of text.matchAll(/`(ferry [^`]+)`/g)) found.push(m[1] as string);
  };
  const line = r.stdout.trim();
  if (line.startsWith('{') && !line.includes('\n')) {
    const value = JSON.parse(line) as Record<string, unknown>;
    assertEnvelope(value);
    const walk = (v: unknown, key = ''): void => {
      if (typeof v === 'string') {
        if ((key === 'next' || key === 'report') && v.startsWith('ferry ')) found.push(v);
        else quoted(v);
      } else if (Array.isArray(v)) for (const x of v) walk(x, key);
      else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, k);
    };
    walk(value);
  } else quoted(r.stdout);
  quoted(r.stderr);
  return [...new Set(found)].filter((c) => !shellWords(c).some((w) => PLACEHOLDERS.has(w)));
}

/** What ran as printed, over the whole file: each use must have run some. */
const ranAsPrinted: string[] = [];

/** `ferry ARGS`, which must exit `code`; then every follow-up it printed, each of which must exit 0. */
async function ferry(args: string[], code = 0): Promise<CliResult> {
  const r = await runFerry(args, env);
  expect(r.code, `ferry ${args.join(' ')}\n${r.stdout}\n${r.stderr}`).toBe(code);
  for (const command of printedBy(r)) {
    const words = shellWords(command);
    const ran = await runFerry(words.slice(1), env);
    // Worked as printed: exit 0, or a watch that waited to the end and says processing refused some (its exit 1, docs/cli.md).
    const refusedSaid = words[1] === 'watch' && ran.code === 1 && /done: \d+ completed, [1-9]\d* failed/.test(ran.stdout);
    expect(refusedSaid ? 0 : ran.code, `printed by ferry ${args.join(' ')}, run as printed: ${command}\n${ran.stdout}\n${ran.stderr}`).toBe(0);
    ranAsPrinted.push(command);
  }
  return r;
}

/** The README's lines for a use: each `ferry …` line of its section's first sh block. */
async function readmeLines(heading: string): Promise<string[]> {
  const text = await readFile(README, 'utf8');
  const start = text.indexOf(heading);
  expect(start, heading).toBeGreaterThanOrEqual(0);
  const block = /```sh\n([\s\S]*?)```/.exec(text.slice(start))?.[1] ?? '';
  return block.split('\n').filter((l) => l.startsWith('ferry '));
}

/** A README line as words, its comment cut, each of the README's stand-in words replaced by this test's value ('' leaves it out). */
function fromReadme(line: string, values: Record<string, string>): string[] {
  const words = shellWords(line.replace(/\s+#.*$/, '').replaceAll('$PROJECT', 'PROJECT_ID')).slice(1);
  return words.map((w) => values[w] ?? w).filter((w) => w !== '');
}

describe('the four uses of the README, as a newcomer runs them', () => {
  it('a nightly job: a project made by name, the example job file run by cron twice and after a rename, checked by its job file', async () => {
    const made = await ferry(['projects', 'create', 'Nightly share']);
    expect(made.stdout).toContain('created project "Nightly share"');
    const share = join(dir, 'share');
    await writeTree(share, { 'contracts/acme.pdf': '%PDF-1.4 acme', 'contracts/globex.docx': 'globex terms', 'sheets/q1.xlsx': 'q1', 'notes/~$lock.docx': 'an Office lock file' });
    // The example job file, pointed at this machine: its profile, share, project by name and files.
    const job = yaml().parse(await readFile(NIGHTLY, 'utf8')) as Record<string, unknown>;
    Object.assign(job, { profile: 'contoso', source: share, project: 'Nightly share', state: join(dir, 'nightly', 'nightly.sqlite'), metricsFile: join(dir, 'nightly', 'metrics', 'nightly.prom') });
    const file = join(dir, 'nightly.yaml');
    await writeFile(file, yaml().stringify(job));
    // The README's cron line: text first (a person watching), then JSON (cron).
    const first = await ferry(['run', file]);
    expect(first.stdout).toMatch(/mirror run \d+: succeeded/);
    expect(first.stdout).toContain('--state');
    const again = await ferry(['run', file, '--json']);
    expect(JSON.parse(again.stdout)).toMatchObject({ status: 'succeeded', counts: { uploaded: 0 } });
    await rename(join(share, 'contracts', 'acme.pdf'), join(share, 'contracts', 'acme-2019.pdf'));
    const renamed = await ferry(['run', file, '--json']);
    expect(JSON.parse(renamed.stdout)).toMatchObject({ status: 'succeeded', counts: { uploaded: 1 } });
    // The README's check lines, by the job file: the old name is counted, not a difference.
    const checked = await ferry(['check', '--job', file, '--one-way']);
    expect(checked.stdout).toContain('only on the service 1 (left out: --one-way)');
    await ferry(['check', '--job', file], 1);
  });

  it('a tenant migration: the README lines with names for ids, the plan, the run with --verify, the proof later; everything once on the target', async () => {
    const contoso = client(0);
    await contoso.projects.create({ name: 'Migrated by name', description: 'to fabrikam' });
    await writeTree(join(dir, 'to-migrate'), { 'a.txt': 'alpha', 'sub/b.txt': 'bravo' });
    await ferry(['mirror', join(dir, 'to-migrate'), '--project', 'Migrated by name']);
    await contoso.playbooks.create({ name: 'Migrated playbook', description: '', isPrivate: false, organizationWide: true });
    const values = { 'uk-prod': 'contoso', 'us-prod': 'fabrikam', '--all-projects': '--projects', '--all-playbooks': '--playbooks', '--map': '', 'map.yaml': '' };
    const lines = await readmeLines('## `ferry migrate`');
    expect(lines).toHaveLength(3);
    const named = (args: string[]) => args.flatMap((a) => (a === '--projects' ? [a, 'Migrated by name'] : a === '--playbooks' ? [a, 'Migrated playbook'] : [a]));
    const plan = await ferry(named(fromReadme(lines[0]!, values)));
    expect(plan.stdout).toMatch(/Migrated by name/);
    const run = await ferry(named(fromReadme(lines[1]!, values)));
    expect(run.stdout).toMatch(/migrate run \d+: succeeded/);
    expect(run.stdout).toMatch(/^verify .*profile contoso -> .*profile fabrikam: 1 project, 1 folder, 2 documents \(20 B hashed\), 1 playbook compared: 0 differences$/m);
    const json = await ferry([...named(fromReadme(lines[1]!, values)), '--wait', '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ status: 'succeeded' });
    await ferry(named(fromReadme(lines[2]!, values)));
    await contoso.close();
    // Exactly once on the target, after three runs.
    const fabrikam = client(1);
    expect((await fabrikam.projects.list().all()).filter((p) => p.name === 'Migrated by name')).toHaveLength(1);
    expect((await fabrikam.playbooks.searchAll().all()).filter((p) => p.name === 'Migrated playbook')).toHaveLength(1);
    await fabrikam.close();
  });

  it('playbook backups: the nightly backup, verify, and a restore of the backup folder into the other tenant', async () => {
    const contoso = client(0);
    await contoso.playbooks.create({ name: 'Backed up', description: 'nightly', isPrivate: false, organizationWide: true });
    await contoso.close();
    const backups = join(dir, 'backups');
    const lines = await readmeLines('## `ferry playbooks`');
    const values = { '/srv/backups/playbooks': backups };
    const backup = lines.find((l) => l.startsWith('ferry playbooks backup'))!;
    await ferry(fromReadme(backup, values));
    const again = await ferry([...fromReadme(backup, values), '--json']);
    expect(JSON.parse(again.stdout)).toMatchObject({ status: 'succeeded', counts: { written: 0 } });
    await ferry(fromReadme(lines.find((l) => l.startsWith('ferry playbooks verify'))!, values));
    const restored = await ferry(['playbooks', 'import', backups, '--mode', 'replay', '--to-profile', 'fabrikam', '--json']);
    expect(JSON.parse(restored.stdout)).toMatchObject({ status: 'succeeded', counts: { failed: 0 } });
    const names = (await client(1).playbooks.searchAll().all()).map((p) => p.name);
    expect(names).toContain('Backed up');
  });

  it('onboarding a zipped archive with its sheet: the dry run stops naming --strip-components, then the README line with it, waited for, then the report', async () => {
    await ferry(['projects', 'create', 'Archive 2019']);
    const names = ['contracts/acme.txt', 'contracts/globex.txt', 'scans/empty.txt'];
    const archive = join(dir, 'archive-2019.zip');
    await writeFile(archive, await zipOf(names.map((n) => ({ name: `archive-2019/${n}`, data: n.includes('empty') ? '' : `content of ${n}` }))));
    const rows = join(dir, 'rows.csv');
    await writeFile(rows, `path,Department\r\n${names.map((n, i) => `${n},D${i}`).join('\r\n')}\r\n`);
    const line = (await readmeLines('## `ferry mirror`')).find((l) => l.includes('--strip-components'))!;
    const args = fromReadme(line, { PROJECT_ID: 'Archive 2019', 'archive-2019.zip': archive, 'rows.csv': rows });
    const without = args.slice(0, args.indexOf('--strip-components'));
    const refused = await ferry([...without, '--dry-run'], 2);
    expect(refused.stderr).toContain('--strip-components 1 takes it off');
    await ferry([...args, '--dry-run']);
    // Waited for: the empty file is refused by processing (exit 1), and the summary names the report.
    const done = await ferry([...args, '--wait'], 1);
    expect(done.stdout).toMatch(/1 refused \(badFile 1\)/);
    const report = await ferry(['report', '--run', 'last']);
    expect(report.stdout).toContain('scans/empty.txt');
    // The same sheet into another project, not waited for, in JSON: `next` says watch and report.
    await ferry(['projects', 'create', 'Archive 2019 again']);
    const json = await ferry([...fromReadme(line, { PROJECT_ID: 'Archive 2019 again', 'archive-2019.zip': archive, 'rows.csv': rows }), '--json']);
    expect((JSON.parse(json.stdout) as { next: string[] }).next).toEqual([expect.stringMatching(/^ferry watch --run \d+$/), expect.stringMatching(/^ferry report --run \d+$/)]);
  });

  it('and the two other job kinds, pull and upload, from the README lines, in text and JSON', async () => {
    await ferry(['projects', 'create', 'Pulled and uploaded']);
    await writeTree(join(dir, 'onboarding'), { 'contracts/2024/a.txt': 'alpha', 'contracts/2024/b.tmp': 'scratch', 'empty.txt': '' });
    await ferry(['mirror', join(dir, 'onboarding'), '--project', 'Pulled and uploaded', '--to', 'Contracts', '--wait'], 1);
    const pull = (await readmeLines('## `ferry pull`'))[0]!;
    const values = { PROJECT_ID: 'Pulled and uploaded', './contracts': join(dir, 'pulled'), 'Contracts/2024': 'Contracts/contracts/2024' };
    await ferry(fromReadme(pull, values));
    expect(await readFile(join(dir, 'pulled', 'a.txt'), 'utf8')).toBe('alpha');
    const json = await ferry([...fromReadme(pull, values), '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ status: 'succeeded', counts: { downloaded: 0 } });
    const playbook = await client(0).playbooks.create({ name: 'Upload target', description: '', isPrivate: false, organizationWide: true });
    const upload = (await readmeLines('## `ferry upload`'))[0]!;
    const uploadValues = { PROJECT_ID: 'Pulled and uploaded', './onboarding': join(dir, 'onboarding'), $PLAYBOOK: playbook.objectIdentifier };
    // The empty file is refused by processing, so both the text and the JSON have something to report.
    await ferry(fromReadme(upload, uploadValues), 1);
    await ferry([...fromReadme(upload, uploadValues), '--json'], 1);
  });

  it('every use ran follow-up commands as printed', () => {
    expect(ranAsPrinted.filter((c) => c.startsWith('ferry watch')).length).toBeGreaterThan(0);
    expect(ranAsPrinted.filter((c) => c.startsWith('ferry report')).length).toBeGreaterThan(1);
    expect(ranAsPrinted.some((c) => c.includes('--state'))).toBe(true);
  });
});
