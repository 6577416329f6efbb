// Issue 22, point 2: one JSON shape. Every command that takes --json is run here with it, against the
// emulator, and its answer is held to docs/json-output.schema.json (onlyJson validates); so is the
// answer of each one refused for a bad flag. The list of commands is read from the program, so a
// command that gains --json without a case here fails this test. And the schema itself must refuse
// the shapes the issue reported (pull counting `uploaded`, a status that disagrees with the exit).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { Command } from 'commander';
import { buildProgram } from '../../src/cli/main.js';
import { commandPath } from '../../src/cli/envelope.js';
import { startService, writeServiceProfiles, writeTree, type Service } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';
import { envelopeErrors } from '../helpers/json-envelope.js';

let service: Service;
let dir: string;
let env: Record<string, string>;
beforeAll(async () => {
  service = await startService();
  dir = await mkdtemp(join(tmpdir(), 'ferry-json-'));
  env = { FERRY_CONFIG: writeServiceProfiles(service, join(dir, 'profiles.yaml')) };
});
afterAll(() => service.close());

/** Every command path that takes --json, from the program itself. */
async function jsonCommands(): Promise<string[]> {
  const out: string[] = [];
  const walk = (cmd: Command) => {
    if (cmd.options.some((o) => o.long === '--json')) out.push(commandPath(cmd));
    for (const sub of cmd.commands) walk(sub);
  };
  walk(await buildProgram());
  return out.sort();
}

async function json(args: string[], expected: { command: string; exitCode: number }): Promise<Record<string, any>> {
  const r = await runFerry([...args, '--json'], env);
  const answer = onlyJson(r);
  expect(answer, r.stderr).toMatchObject(expected);
  expect(r.code).toBe(expected.exitCode);
  return answer;
}

describe('one JSON shape for every command (docs/json-output.schema.json)', () => {
  it('every command with --json answers in the shape, counts named for what happened, errors apart from problems', async () => {
    const seen = new Set<string>();
    const run = async (command: string, args: string[], exitCode = 0) => {
      seen.add(command);
      return json(args, { command, exitCode });
    };
    const project = service.project;
    const tenant = service.emulator.tenants[0]!;
    const client = service.client();
    const playbook = (await client.playbooks.create({ name: 'JSON shape', isPrivate: false, organizationWide: true })).objectIdentifier;
    const state = join(dir, 'state.sqlite');
    const src = join(dir, 'src');
    await writeTree(src, { 'a/one.txt': 'one', 'a/two.txt': 'two', 'b/three.txt': 'three' });
    const mixed = join(dir, 'mixed');
    await writeTree(mixed, { 'ok.txt': 'fine', 'bad\u0001name.txt': 'refused' });
    await symlink(join(mixed, 'ok.txt'), join(mixed, 'link.txt'));

    expect((await run('doctor', ['doctor'])).target).toMatchObject({ clientId: tenant.clientId });
    expect((await run('config list', ['config', 'list'])).profiles.length).toBeGreaterThan(0);
    await run('config show', ['config', 'show']);
    expect((await run('ls', ['ls'])).items.map((p: { id: string }) => p.id)).toContain(project);

    const plan = await run('mirror', ['mirror', mixed, '--project', project, '--to', 'Mixed', '--state', state, '--dry-run']);
    expect(plan).toMatchObject({ status: 'planned', dryRun: true, counts: { new: 1 }, errors: [{ key: 'bad\u0001name.txt' }], problems: [{ key: 'link.txt' }] });
    const mirrored = await run('mirror', ['mirror', mixed, '--project', project, '--to', 'Mixed', '--state', state], 1);
    // The refused name failed; the symlink was skipped with its reason, which is no error.
    expect(mirrored).toMatchObject({ status: 'failed', job: 'mirror', counts: { uploaded: 1, failed: 1, skipped: 1 } });
    expect(mirrored.errors.map((e: { key: string }) => e.key)).toEqual(['bad\u0001name.txt']);
    expect(mirrored.problems).toEqual([{ key: 'link.txt', reason: expect.stringMatching(/^skipped: symbolic link/) }]);
    await run('mirror', ['mirror', src, '--project', project, '--to', 'Src', '--state', state]);
    expect((await run('ls', ['ls', `${project}/Src`, '-R'])).count).toBe(5);
    expect(await run('check', ['check', src, '--project', project, '--to', 'Src'])).toMatchObject({ status: 'matching', differenceCount: 0, counts: { missingOnTheService: 0 } });
    expect(await run('scan', ['scan', src, '--project', project, '--to', 'Src'])).toMatchObject({ status: 'succeeded', plan: { new: 0 }, census: { files: expect.any(Number) } });
    // The leases on the service: none left behind by the runs above, and breaking none says so.
    expect(await run('lock status', ['lock', 'status', '--project', project])).toMatchObject({ records: 0, holders: [] });
    expect(await run('projects create', ['projects', 'create', 'envelope shape'])).toMatchObject({ project: { name: 'envelope shape' } });
    expect(await run('metadata ls', ['metadata', 'ls'])).toMatchObject({ count: 0 });
    expect(await run('lock break', ['lock', 'break', '--project', project, '--path', 'Src'])).toMatchObject({ removed: 0, broken: [], warning: expect.stringMatching(/^nothing to break/) });

    const pulled = await run('pull', ['pull', project, join(dir, 'pulled'), '--from', 'Src', '--state', state]);
    expect(pulled.counts).toEqual({ discovered: 3, downloaded: 3, unchanged: 0, skipped: 0, failed: 0, reconciled: 0 });
    expect((await run('pull', ['pull', project, join(dir, 'pulled'), '--from', 'Src', '--state', state, '--dry-run'])).counts).toMatchObject({ unchanged: 3, goneFromTheProject: 0 });

    const jobFile = join(dir, 'job.yaml');
    await writeFile(jobFile, `job: mirror\nsource: ${src}\nproject: ${project}\nto: Src\nstate: ${state}\n`);
    expect(await run('run', ['run', jobFile])).toMatchObject({ job: 'mirror', counts: { reconciled: 0, unchanged: 3 } });
    const runs = await run('jobs list', ['jobs', 'list', '--state', state]);
    expect(runs.items.find((r: { job: string }) => r.job === 'pull').counts).toHaveProperty('downloaded', 3);
    // And in text, a pull's runs say downloaded, as its summary does.
    expect((await runFerry(['jobs', 'list', '--state', state], env)).stdout).toMatch(/ pull +succeeded .* downloaded 3 unchanged 0 skipped 0 failed 0 reconciled 0/);
    expect((await run('jobs show', ['jobs', 'show', '1', '--state', state])).run).toMatchObject({ id: 1, job: 'mirror' });
    // Only unfinished runs resume: the answer to a finished one is an error, in the same shape.
    expect(await run('jobs resume', ['jobs', 'resume', '2', '--state', state], 2)).toMatchObject({ status: 'error', error: expect.stringContaining('already succeeded') });

    const uploaded = await run('upload', ['upload', src, '--project', project, '--playbook', playbook, '--to', 'Batch', '--state', state]);
    expect(uploaded.batches[0]).toMatchObject({ job: 'upload', counts: { uploaded: 3 } });
    const batch = uploaded.batches[0].uploadIdentifier as string;
    expect((await run('watch', ['watch', '--playbook', playbook, '--upload', batch])).next).toContain(batch);
    expect((await run('report', ['report', '--upload', batch, '--state', state])).report).toBeTypeOf('object');
    expect(await run('report', ['report', '--upload', batch, '--state', state, '--out', join(dir, 'r.csv')])).toMatchObject({ format: 'csv' });

    expect((await run('playbooks list', ['playbooks', 'list'])).items.map((p: { id: string }) => p.id)).toContain(playbook);
    const zip = join(dir, 'pb.zip');
    expect((await run('playbooks export', ['playbooks', 'export', playbook, '--out', zip, '--state', state])).counts).toMatchObject({ written: 1 });
    expect((await run('playbooks verify', ['playbooks', 'verify', zip])).counts).toEqual({ checked: 1, bad: 0, quarantined: 0 });
    await mkdir(join(dir, 'backups'));
    expect((await run('playbooks backup', ['playbooks', 'backup', '--out', join(dir, 'backups'), '--state', state])).counts).toHaveProperty('written');
    expect((await run('playbooks import', ['playbooks', 'import', zip, '--mode', 'server', '--state', state])).counts).toMatchObject({ created: 1 });

    const other = service.emulator.tenants[1]!.name;
    const migrateArgs = ['migrate', '--from', tenant.name, '--to', other, '--projects', project, '--state', join(dir, 'migrate.sqlite')];
    // Plans, summaries and verifications name each side by host, client id and profile (issue 22, point 8).
    const named = (t: { clientId: string; name: string }) => expect.stringMatching(new RegExp(`^127\\.0\\.0\\.1:\\d+, client ${t.clientId}, profile ${t.name}$`));
    const otherTenant = service.emulator.tenants[1]!;
    expect(await run('migrate', [...migrateArgs, '--dry-run'])).toMatchObject({ status: 'planned', dryRun: true, from: named(tenant), to: named(otherTenant) });
    const migrated = await run('migrate', migrateArgs);
    expect(migrated.counts).toHaveProperty('copied');
    expect(migrated.counts).not.toHaveProperty('uploaded');
    expect(migrated).toMatchObject({ from: named(tenant), to: named(otherTenant) });
    expect(await run('migrate verify', ['migrate', 'verify', '--from', tenant.name, '--to', other, '--projects', project, '--state', join(dir, 'migrate.sqlite')])).toMatchObject({ status: 'matching', from: named(tenant), to: named(otherTenant) });

    // `migrate verify` is an action of migrate (an argument, not a subcommand), named in its answers.
    expect([...seen].sort()).toEqual([...(await jsonCommands()), 'migrate verify'].sort());
  }, 300_000);

  it('a command refused for its flags answers in the same shape, naming itself', async () => {
    for (const command of await jsonCommands()) {
      const words = command.split(' ');
      const answer = await json([...words, '--no-such-flag'], { command, exitCode: 2 });
      expect(answer).toMatchObject({ status: 'error', kind: 'usage', error: expect.stringMatching(/option/) });
    }
  });

  it('the schema refuses what the issue reported', () => {
    const summary = { command: 'pull', status: 'succeeded', exitCode: 0, job: 'pull', runId: 1, bytes: 0, durationMs: 1, errors: [], problems: [] };
    expect(envelopeErrors({ ...summary, counts: { discovered: 1, downloaded: 1, unchanged: 0, skipped: 0, failed: 0, reconciled: 0 } })).toEqual([]);
    // pull reusing `uploaded` for its downloads
    expect(envelopeErrors({ ...summary, counts: { discovered: 1, uploaded: 1, skipped: 0, failed: 0, reconciled: 0 } })).not.toEqual([]);
    // a summary that says succeeded while the process exits 1
    expect(envelopeErrors({ ...summary, exitCode: 1, counts: { discovered: 0, downloaded: 0, skipped: 0, failed: 0, reconciled: 0 } })).not.toEqual([]);
    // no status at all (the upload job's answer before)
    expect(envelopeErrors({ command: 'upload', exitCode: 0, batches: [] })).not.toEqual([]);
    // harmless notices inside errors: an error needs its `error`, a problem its `reason`
    expect(envelopeErrors({ ...summary, counts: { discovered: 0, downloaded: 0, skipped: 0, failed: 0, reconciled: 0 }, problems: [{ key: 'a', error: 'skipped' }] })).not.toEqual([]);
    // an error exit that does not say what went wrong
    expect(envelopeErrors({ command: 'mirror', status: 'error', exitCode: 2 })).not.toEqual([]);
  });
});
