// `ferry migrate` between two emulator processes standing for two regions: projects with nested
// folders and a few hundred documents, two playbooks and organization metadata options, migrated
// with the migration killed (kill -9) twice midway and resumed, then verified.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { FerryClient } from '../../src/api/index.js';
import { mirror } from '../../jobs/mirror.js';
import { migrateJobKey } from '../../jobs/migrate.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';
import { buildRichPlaybook } from '../helpers/playbook.js';
import { onlyJson, runFerry } from '../helpers/cli.js';
import { startRegion, writeProfiles, type Region } from '../helpers/regions.js';
import { remoteFiles, remoteFolders, whereFoldersExist, writeTree } from '../helpers/service.js';

let uk: Region;
let us: Region;
let dir: string;
let env: Record<string, string>;
let src: FerryClient;
let dst: FerryClient;

beforeAll(async () => {
  // The source answers a little slowly, so that a kill lands midway.
  [uk, us] = await Promise.all([startRegion(['--faults', 'latency=3']), startRegion()]);
  dir = await mkdtemp(join(tmpdir(), 'ferry-migrate-'));
  // Source: contoso in the uk process; target: fabrikam in the us process (other metadata ids).
  env = await writeProfiles(join(dir, 'config.yaml'), { uk: { region: uk, tenant: 0 }, us: { region: us, tenant: 1 } });
  src = uk.client(0);
  dst = us.client(1);
});
afterAll(async () => {
  await Promise.all([uk?.stop(), us?.stop()]);
});

function definition(region: Region, tenant: number, name: string): string {
  return region.tenants[tenant]!.organizationMetadata.find((d) => d.name === name)!.objectIdentifier;
}

/** A project at the source with metadata and a tree of `files` documents (and empty folders). */
async function sourceProject(name: string, files: number, extra: { metadata?: Record<string, string>; ocrStrategy?: 'always' } = {}): Promise<{ id: string; paths: string[] }> {
  const region = definition(uk, 0, 'Region');
  const antarctica = (await src.organizationMetadataOptions.list(region).all()).find((o) => o.name === 'Antarctica')!;
  const project = await src.projects.create({
    name,
    description: `${name}, to be migrated`,
    metadata: [
      { organizationMetadataIdentifier: region, singleCategoryIdentifier: antarctica.objectIdentifier },
      { organizationMetadataIdentifier: definition(uk, 0, 'Department'), text: 'Legal' },
    ],
  });
  const tree: Record<string, string> = { 'empty/': '', 'a/b/empty too/': '' };
  for (let i = 0; i < files; i++) tree[`d${i % 4}/s${i % 3}/${i % 10 === 0 ? 'Übersicht café' : 'doc'} ${i}.txt`] = `${name} document ${i} `.repeat(1 + (i % 9));
  const root = join(dir, 'trees', name);
  await writeTree(root, tree);
  const store = new SqliteCheckpointStore(join(dir, `${name}.sqlite`));
  const summary = await mirror({ source: root, project: project.objectIdentifier, metadata: extra.metadata, ocrStrategy: extra.ocrStrategy }, { client: src, store });
  store.close();
  expect(summary.counts.uploaded).toBe(files);
  return { id: project.objectIdentifier, paths: Object.keys(tree).filter((k) => !k.endsWith('/')) };
}

/** Documents of the target's projects with these names, by project name. */
async function targetDocuments(names: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for await (const p of dst.projects.list()) {
    if (!names.includes(p.name ?? '')) continue;
    const paths = (await remoteFiles(dst, p.objectIdentifier)).map((d) => d.path ?? '');
    out.set(p.name ?? '', [...(out.get(p.name ?? '') ?? []), ...paths]);
  }
  return out;
}

// One story in four steps (each its own test, sharing what the earlier ones made), so that no
// single test carries the whole migration on a slow machine.
describe('ferry migrate between two regions', () => {
  let projects: { name: string; id: string; paths: string[] }[];
  let playbooks: { id: string }[];
  let names: string[];
  let state: string;
  let args: string[];

  it('plans before anything is written', async () => {
    // Organization metadata: an option only the source has, used by every project.
    await src.organizationMetadataOptions.create(definition(uk, 0, 'Region'), 'Antarctica');
    projects = [
      { name: 'Contracts', ...(await sourceProject('Contracts', 60, { metadata: { dept: 'legal', kind: 'contract' }, ocrStrategy: 'always' })) },
      { name: 'Archive', ...(await sourceProject('Archive', 45)) },
      { name: 'Small', ...(await sourceProject('Small', 15)) },
    ];
    playbooks = [await buildRichPlaybook(src, uk.tenants[0]!, { name: 'Supplier contracts' }), await buildRichPlaybook(src, uk.tenants[0]!, { name: 'NDAs', assemblies: 3 })];
    // The target knows 'Department' from a project of its own (found by name); the others the
    // selection uses are named in the mapping file.
    await dst.projects.create({ name: 'Existing at the target', description: '', metadata: [{ organizationMetadataIdentifier: definition(us, 1, 'Department'), text: 'Ops' }] });
    const map = join(dir, 'map.yaml');
    const mapped = ['Region', 'Practice areas', 'Contract value'].map((n) => `  ${n}: ${definition(us, 1, n)}`);
    await writeFile(map, `organizationMetadata:\n${mapped.join('\n')}\n`);
    names = projects.map((p) => p.name);
    state = join(dir, 'migrate.sqlite');
    args = ['migrate', '--from', 'uk', '--to', 'us', '--projects', projects.map((p) => p.id).join(','), '--playbooks', playbooks.map((p) => p.id).join(','), '--map', map, '--state', state, '--concurrency', '4', '--json',
      // A run killed here leaves its lease on the target: the next run of this store takes it over
      // at once; one that comes after this test's own hold of the store's lock waits out the TTL.
      '--lock-ttl', '3s', '--wait-lock', '30s'];

    // The plan, before anything is written.
    const planned = await runFerry([...args, '--dry-run'], env);
    expect(planned.code, `${planned.stdout}\n${planned.stderr}`).toBe(0);
    const plan = onlyJson(planned) as any;
    expect(plan.totals).toMatchObject({ projects: 3, documents: 120, playbooks: 2, alreadyCopied: 0, folders: expect.any(Number) });
    expect(plan.blockers).toEqual([]);
    // Every document it would copy, named by project and path.
    expect(plan).toMatchObject({ command: 'migrate', dryRun: true, itemCount: 120 });
    expect(plan.items).toHaveLength(120);
    for (const item of plan.items as { action: string; key: string }[]) {
      expect(item.action).toBe('new');
      expect(projects.some((p) => item.key.startsWith(`${p.name}/`)), item.key).toBe(true);
    }
    expect(plan.options.missingOnTarget).toBeGreaterThanOrEqual(1);
    expect(plan.notCarried.map((n: { what: string }) => n.what)).toContain('assistants and their messages');
    expect((await targetDocuments(names)).size).toBe(0);
  });

  let kills: string[];
  it('is killed twice midway (kill -9); a second migrate of the same pair while one holds the lock exits 4', async () => {
    kills = [];
    for (const after of [20, 70]) {
      const r = await runFerry(args, env, (child) => {
        void (async () => {
          for (let poll = 0; poll < 20_000 && child.exitCode === null; poll++) {
            const done = [...(await targetDocuments(names)).values()].reduce((n, p) => n + p.length, 0);
            if (done >= after) {
              child.kill('SIGKILL');
              kills.push(`${done} documents`);
              return;
            }
            await new Promise((r) => setTimeout(r, 40));
          }
        })();
      });
      if (r.code !== null) kills.push(`(run ended by itself: ${r.code})`);
    }
    // A live holder of the pair's lock (this process): the second run is refused, nothing written.
    const store = new SqliteCheckpointStore(state);
    const key = migrateJobKey(src, dst);
    expect(store.acquireLock(key, 'this-test', 1)).toMatchObject({ ok: true });
    try {
      const before = [...(await targetDocuments(names)).values()].reduce((n, p) => n + p.length, 0);
      const refused = await runFerry(args, env);
      expect(refused.code).toBe(4);
      expect(onlyJson(refused)).toMatchObject({ status: 'locked', exitCode: 4 });
      expect([...(await targetDocuments(names)).values()].reduce((n, p) => n + p.length, 0)).toBe(before);
    } finally {
      store.releaseLock(key, 'this-test');
      store.close();
    }
  });

  it('resumes, verifies, and holds every document exactly once with its settings and metadata', async () => {
    const last = await runFerry([...args, '--verify'], env);
    expect(last.code, `${last.stdout}\n${last.stderr}`).toBe(0);
    const summary = onlyJson(last) as any;
    console.log(`migration killed at ${kills.join(', ')}; the final run copied ${summary.counts.copied}, found ${summary.counts.reconciled}`);
    expect(summary.status).toBe('succeeded');
    // Accounting: 3 projects + 120 documents + 2 playbooks, each exactly one outcome.
    expect(summary.counts.discovered).toBe(125);
    expect(summary.counts.copied + summary.counts.reconciled + summary.counts.unchanged + summary.counts.skipped + summary.counts.failed).toBe(125);
    expect(summary.verification).toMatchObject({ differenceCount: 0, counts: { projects: 3, documents: 120, playbooks: 2 } });

    // Exactly once on the target: one project per name, every path once, nothing else.
    const targetProjects = (await dst.projects.list().all()).filter((p) => names.includes(p.name ?? ''));
    expect(targetProjects.map((p) => p.name).sort()).toEqual([...names].sort());
    const got = await targetDocuments(names);
    for (const p of projects) {
      const paths = got.get(p.name) ?? [];
      expect(new Set(paths).size, `${p.name}: duplicates`).toBe(paths.length);
      expect(paths.sort()).toEqual(p.paths.map((k) => `/${k}`).sort());
    }
    const contracts = targetProjects.find((p) => p.name === 'Contracts')!;
    expect(await remoteFolders(dst, contracts.objectIdentifier)).toEqual(expect.arrayContaining(whereFoldersExist(['/empty', '/a/b/empty too'])));
    const doc = (await remoteFiles(dst, contracts.objectIdentifier))[0]!;
    expect(doc.ocrStrategy).toBe('always');
    expect(Object.fromEntries((doc.metadata ?? []).map((m) => [m.key, m.value]))).toMatchObject({ dept: 'legal', kind: 'contract' });
    // The option the target lacked was created once, and the project uses it.
    const regionOptions = await dst.organizationMetadataOptions.list(definition(us, 1, 'Region')).all();
    expect(regionOptions.filter((o) => o.name === 'Antarctica')).toHaveLength(1);
    expect(contracts.metadataValues?.find((v) => v.metadata?.name === 'Region')?.singleCategoryIdentifier).toBe(regionOptions.find((o) => o.name === 'Antarctica')!.objectIdentifier);
    const targetPlaybooks = (await dst.playbooks.searchAll().all()).filter((p) => ['Supplier contracts', 'NDAs'].includes(p.name ?? ''));
    expect(targetPlaybooks).toHaveLength(2);
  });

  it('a rerun copies nothing; the text report and `ferry migrate verify` agree', async () => {
    // A rerun copies nothing; `ferry migrate verify` agrees, and says so in text too.
    const again = onlyJson(await runFerry(args, env)) as any;
    expect(again.counts).toMatchObject({ copied: 0, failed: 0 });
    // The report as a terminal shows it: the job's counts, then each project and playbook.
    const text = await runFerry(args.filter((a) => a !== '--json'), env);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^migrate run \d+: succeeded/);
    expect(text.stdout).toContain('copied 0');
    for (const name of [...names, 'Supplier contracts', 'NDAs']) expect(text.stdout).toContain(name);
    const verify = await runFerry(['migrate', 'verify', '--from', 'uk', '--to', 'us', '--projects', projects.map((p) => p.id).join(','), '--playbooks', playbooks.map((p) => p.id).join(','), '--state', state], env);
    expect(verify.code, verify.stdout).toBe(0);
    expect(verify.stdout).toMatch(/3 projects, \d+ folders, 120 documents .* 2 playbooks compared: 0 differences/);
  });
});
