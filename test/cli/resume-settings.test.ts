// A run killed with kill -9 and continued by `ferry jobs resume N` keeps exactly the settings it
// declares it keeps (src/settings/declared.ts, `resume: true`), read back from a versioned record
// through the job file's schema: the mirror's folder, filters and metadata, the migration's
// tenants and selection; and not the others (its lease, its window, how often it reports).
import { describe, expect, it } from 'vitest';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { mirroredProject, remoteFiles, useService, writeServiceProfiles, writeTree } from '../helpers/service.js';
import { killedWhen, onlyJson, runFerry } from '../helpers/cli.js';
import { RECORD_VERSION } from '../../src/settings/resume.js';

// Each request waits a little, so that a kill lands in the middle of the run.
const useEmulator = useService({ faults: { latencyMs: 25 } });

/** Runs ferry and kills it with SIGKILL once `when` says so. */
async function killed(args: string[], env: Record<string, string>, when: () => Promise<boolean>): Promise<void> {
  const result = await killedWhen(args, env, when);
  // Killed: no exit code. A run that ended on its own would make this test prove nothing.
  expect(result.code, `the run ended before it was killed: ${result.stdout} ${result.stderr}`).toBeNull();
}

type Run = { id: number; status: string; params: Record<string, unknown> };

describe('jobs resume keeps the settings it declares', () => {
  it('a mirror killed mid-run goes on with its folder, exclusions, metadata and concurrency; not its lease TTL, window or --stats', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-resume-settings-'));
    const src = join(dir, 'src');
    const files: Record<string, string> = {};
    for (let i = 0; i < 30; i++) files[`doc-${i}.txt`] = `text ${i} `.repeat(20);
    for (let i = 0; i < 10; i++) files[`noise-${i}.log`] = `log ${i}`;
    await writeTree(src, files);
    const client = useEmulator().client();
    const project = (await client.projects.create({ name: 'resumed with its settings', description: 'jobs resume' })).objectIdentifier;
    const state = join(dir, 'state.sqlite');
    const env = useEmulator().env();
    const held = async () => (await client.documents.list(project, { flattenList: true }).page(1, 1)).totalCount ?? 0;

    await killed(['mirror', src, '--project', project, '--to', 'kept', '--exclude', '*.log', '--metadata', 'team=legal', '--concurrency', '2', '--lock-ttl', '20s', '--max-files', '1000', '--stats', '5s', '--state', state, '--json'], env, async () => (await held()) >= 4);

    const [run] = (onlyJson(await runFerry(['jobs', 'list', '--state', state, '--json'], env)).items as Run[]);
    expect(run).toMatchObject({ status: 'running' });
    const shown = (onlyJson(await runFerry(['jobs', 'show', String(run!.id), '--state', state, '--json'], env)).run as Run).params;
    // Exactly the settings declared kept, as a job file writes them; the source made absolute.
    expect(shown).toEqual({ recordVersion: RECORD_VERSION, source: src, project, to: 'kept', exclude: ['*.log'], metadata: { team: 'legal' }, concurrency: 2 });

    const resumed = onlyJson(await runFerry(['jobs', 'resume', String(run!.id), '--state', state, '--json'], env));
    expect(resumed, JSON.stringify(resumed)).toMatchObject({ status: 'succeeded', exitCode: 0 });
    const docs = await remoteFiles(client, project);
    // Every .txt once, in the folder, with the metadata; no .log.
    expect(docs.map((d) => d.path).sort()).toEqual(Object.keys(files).filter((f) => f.endsWith('.txt')).map((f) => `/kept/${f}`).sort());
    for (const d of docs) expect(d.metadata?.find((m) => m.key === 'team')?.value, d.path ?? '').toBe('legal');
    const after = (onlyJson(await runFerry(['jobs', 'show', String(run!.id), '--state', state, '--json'], env)).run as Run);
    expect(after.status).toBe('succeeded');
  });

  it('a migration killed mid-run goes on from and to the same tenants with the same selection, and verifies', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-resume-migrate-'));
    const emulator = useEmulator();
    const config = writeServiceProfiles(emulator, join(dir, 'profiles.yaml'));
    const [from, to] = emulator.emulator.tenants.map((t) => t.name) as [string, string];
    const files: Record<string, string> = {};
    for (let i = 0; i < 24; i++) files[`part-${i % 3}/doc-${i}.txt`] = `migrated ${i} `.repeat(30);
    const project = await mirroredProject(emulator.client(), join(dir, 'seed'), files, `migrated and resumed ${Date.now()}`);
    const target = emulator.client({}, 1);
    const copied = async () => {
      let n = 0;
      for await (const p of target.projects.list()) n += (await remoteFiles(target, p.objectIdentifier)).length;
      return n;
    };
    const before = await copied();
    const state = join(dir, 'migrate.sqlite');
    const env = { FERRY_CONFIG: config };

    await killed(['migrate', '--from', from, '--to', to, '--projects', project, '--concurrency', '2', '--lock-ttl', '20s', '--max-transfer', '1G', '--state', state, '--json'], env, async () => (await copied()) >= before + 4);

    const [run] = (onlyJson(await runFerry(['jobs', 'list', '--state', state, '--json'], env)).items as Run[]);
    const shown = (onlyJson(await runFerry(['jobs', 'show', String(run!.id), '--state', state, '--json'], env)).run as Run).params;
    // The settings kept; beside them, what the selection came to (not settings: a resume does not read them).
    const { sourceUrl: _s, targetUrl: _t, selected, ...kept } = shown;
    expect(kept).toEqual({ recordVersion: RECORD_VERSION, from, to, projects: [project], concurrency: 2 });
    expect(selected).toEqual({ projects: [project], playbooks: [] });

    const resumed = onlyJson(await runFerry(['jobs', 'resume', String(run!.id), '--state', state, '--json'], env));
    expect(resumed, JSON.stringify(resumed)).toMatchObject({ status: 'succeeded', exitCode: 0 });
    const verify = await runFerry(['migrate', 'verify', '--from', from, '--to', to, '--projects', project, '--state', state, '--json'], env);
    expect(verify.code, verify.stdout).toBe(0);
    expect(await copied()).toBe(before + Object.keys(files).length);
  });

  it('a record an earlier ferry wrote, without its version, is refused with what to do instead', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-resume-old-'));
    const state = join(dir, 'state.sqlite');
    const { openStore } = await import('../../src/store/index.js');
    const store = openStore(state);
    const old = store.startRun({ job: 'mirror', jobKey: 'k', params: { source: '/somewhere', project: 'p' }, uploadId: null });
    store.close();
    const r = await runFerry(['jobs', 'resume', String(old.id), '--state', state], useEmulator().env());
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`run ${old.id} was recorded by an earlier ferry, whose record of a run is not versioned: run its command or job file again instead`);
  });
});
