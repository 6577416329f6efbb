// A migration whose checkpoint store is lost (another machine, another --state, a fresh container)
// finds its own work on the target: one project per source project, every document once, the
// replayed playbook found whole; a same-named project it did not make is never adopted silently;
// source and target the same tenant is refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { FerryClient } from '../../src/api/index.js';
import { mirror } from '../../jobs/mirror.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';
import { buildRichPlaybook } from '../helpers/playbook.js';
import { onlyJson, runFerry } from '../helpers/cli.js';
import { startRegion, writeProfiles, type Region } from '../helpers/regions.js';
import { remoteFiles, writeTree } from '../helpers/service.js';

let uk: Region;
let us: Region;
let dir: string;
let env: Record<string, string>;
let src: FerryClient;
let dst: FerryClient;
let map: string;

beforeAll(async () => {
  [uk, us] = await Promise.all([startRegion(['--faults', 'latency=3']), startRegion()]);
  dir = await mkdtemp(join(tmpdir(), 'ferry-migrate-stateless-'));
  env = await writeProfiles(join(dir, 'config.yaml'), { uk: { region: uk, tenant: 0 }, us: { region: us, tenant: 1 } });
  src = uk.client(0);
  dst = us.client(1);
  map = join(dir, 'map.yaml');
  await writeFile(map, `organizationMetadata:\n${us.tenants[1]!.organizationMetadata.map((d) => `  "${d.name}": ${d.objectIdentifier}`).join('\n')}\n`);
});
afterAll(async () => {
  await Promise.all([uk?.stop(), us?.stop()]);
});

async function sourceProject(name: string, files: number): Promise<{ id: string; paths: string[] }> {
  const project = await src.projects.create({ name, description: `${name}, to be migrated` });
  const tree: Record<string, string> = {};
  for (let i = 0; i < files; i++) tree[`f${i % 3}/doc ${i}.txt`] = `${name} ${i} `.repeat(1 + (i % 5));
  const root = join(dir, 'trees', name);
  await writeTree(root, tree);
  const store = new SqliteCheckpointStore(join(dir, `${name}.sqlite`));
  expect((await mirror({ source: root, project: project.objectIdentifier }, { client: src, store })).counts.uploaded).toBe(files);
  store.close();
  return { id: project.objectIdentifier, paths: Object.keys(tree).map((k) => `/${k}`).sort() };
}

async function targetProjects(name: string): Promise<string[]> {
  return (await dst.projects.list().all()).filter((p) => p.name === name).map((p) => p.objectIdentifier);
}

async function documentsOnTarget(): Promise<number> {
  let n = 0;
  // Counted by id (analytics), never from a listing of documents, which may be late.
  for (const p of await dst.projects.list().all()) n += (await dst.projects.analytics(p.objectIdentifier)).documentCount ?? 0;
  return n;
}

describe('ferry migrate without its checkpoint store', () => {
  it('killed once, finished from another --state, verified from a third: one project each, every document once, one playbook', async () => {
    const projects = [await sourceProject('Lost store A', 40), await sourceProject('Lost store B', 25)];
    const playbook = await buildRichPlaybook(src, uk.tenants[0]!, { name: 'Stateless playbook', assemblies: 2 });
    // The killed run's lease on the target lives on for its TTL: the next store waits it out.
    const selection = ['--projects', projects.map((p) => p.id).join(','), '--playbooks', playbook.id, '--map', map, '--concurrency', '4', '--json', '--lock-ttl', '2s', '--wait-lock', '30s'];
    const run = (state: string, onSpawn?: Parameters<typeof runFerry>[2]) => runFerry(['migrate', '--from', 'uk', '--to', 'us', ...selection, '--state', join(dir, state)], env, onSpawn);

    // Killed once documents are arriving.
    const killed = await run('a.sqlite', (child) => {
      void (async () => {
        while (child.exitCode === null && (await documentsOnTarget()) < 10) await new Promise((r) => setTimeout(r, 20));
        child.kill('SIGKILL');
      })();
    });
    expect(killed.code, `${killed.stdout}${killed.stderr}`).toBeNull();

    // Another machine: a store that knows nothing.
    const finished = await run('b.sqlite');
    expect(finished.code, finished.stderr).toBe(0);
    const summary = onlyJson(finished) as { projects: { outcome: string; documents: { copied: number } }[] };
    expect(summary.projects.map((p) => p.outcome)).toContain('existing');

    for (const [i, name] of ['Lost store A', 'Lost store B'].entries()) {
      const ids = await targetProjects(name);
      expect(ids, name).toHaveLength(1);
      const paths = (await remoteFiles(dst, ids[0]!)).map((d) => d.path ?? '').sort();
      expect(paths, name).toEqual(projects[i]!.paths);
    }
    expect((await dst.playbooks.searchAll().all()).filter((p) => p.name === 'Stateless playbook')).toHaveLength(1);

    // A third store proves it, with nothing remembered.
    const verify = await runFerry(['migrate', 'verify', '--from', 'uk', '--to', 'us', '--projects', projects.map((p) => p.id).join(','), '--playbooks', playbook.id, '--state', join(dir, 'c.sqlite'), '--json'], env);
    expect(verify.code, verify.stdout).toBe(0);
    expect(onlyJson(verify)).toMatchObject({ differenceCount: 0, counts: { projects: 2, documents: 65, playbooks: 1 } });

    // And a fourth run from yet another fresh store writes nothing: the playbook is found whole.
    const again = onlyJson(await run('d.sqlite')) as { counts: Record<string, number>; playbooks: { outcome: string }[] };
    expect(again.counts.copied).toBe(0);
    expect(again.playbooks.map((p) => p.outcome)).toEqual(['existing']);
    expect((await dst.playbooks.searchAll().all()).filter((p) => p.name === 'Stateless playbook')).toHaveLength(1);
    expect(await targetProjects('Lost store A')).toHaveLength(1);
  });

  it('stops at a same-named project it did not make (exit 2, nothing written) unless --into-existing; refuses the same tenant on both sides', async () => {
    const project = await sourceProject('Taken name', 5);
    const foreign = await dst.projects.create({ name: 'Taken name', description: 'made by hand at the target' });
    await writeTree(join(dir, 'foreign'), { 'mine.txt': 'a document of the target' });
    const store = new SqliteCheckpointStore(join(dir, 'foreign.sqlite'));
    await mirror({ source: join(dir, 'foreign'), project: foreign.objectIdentifier }, { client: dst, store });
    store.close();
    const args = ['migrate', '--from', 'uk', '--to', 'us', '--projects', project.id, '--state', join(dir, 'taken.sqlite'), '--json'];

    const plan = await runFerry([...args, '--dry-run'], env);
    expect(plan.code).toBe(1);
    expect((onlyJson(plan) as { blockers: string[] }).blockers.join(' ')).toContain(`a project named "Taken name" that no earlier migration of project ${project.id} made: ${foreign.objectIdentifier} (foreign documents)`);

    const refused = await runFerry(args, env);
    expect(refused.code).toBe(2);
    expect(String(onlyJson(refused).error)).toMatch(/--into-existing/);
    expect(await remoteFiles(dst, foreign.objectIdentifier)).toHaveLength(1);

    const into = await runFerry([...args, '--into-existing'], env);
    expect(into.code, into.stderr).toBe(0);
    expect(await targetProjects('Taken name')).toEqual([foreign.objectIdentifier]);
    expect(await remoteFiles(dst, foreign.objectIdentifier)).toHaveLength(6);

    const same = await runFerry(['migrate', '--from', 'uk', '--to', 'uk', '--projects', project.id, '--state', join(dir, 'same.sqlite'), '--json'], env);
    expect(same.code).toBe(2);
    expect(String(onlyJson(same).error)).toMatch(/same tenant.*--same-tenant/);
  });

  it('three --shard K/3 migrations started at once, each with its own store: every document once, verify clean', async () => {
    const projects = [];
    for (let i = 0; i < 6; i++) projects.push(await sourceProject(`Sharded ${i}`, 8));
    const ids = projects.map((p) => p.id).join(',');
    const runs = await Promise.all(
      [1, 2, 3].map((k) => runFerry(['migrate', '--from', 'uk', '--to', 'us', '--projects', ids, '--shard', `${k}/3`, '--state', join(dir, `shard-${k}.sqlite`), '--json'], env)),
    );
    const copied: string[] = [];
    for (const r of runs) {
      expect(r.code, r.stderr).toBe(0);
      for (const p of (onlyJson(r) as { projects: { source: string }[] }).projects) copied.push(p.source);
    }
    // Each project was taken by exactly one shard.
    expect(copied.sort()).toEqual(projects.map((p) => p.id).sort());
    for (const [i, p] of projects.entries()) {
      const target = await targetProjects(`Sharded ${i}`);
      expect(target, `Sharded ${i}`).toHaveLength(1);
      expect((await remoteFiles(dst, target[0]!)).map((d) => d.path ?? '').sort()).toEqual(p.paths);
    }
    const verify = await runFerry(['migrate', 'verify', '--from', 'uk', '--to', 'us', '--projects', ids, '--state', join(dir, 'shard-verify.sqlite'), '--json'], env);
    expect(verify.code, verify.stdout).toBe(0);
    expect(onlyJson(verify)).toMatchObject({ differenceCount: 0, counts: { projects: 6, documents: 48 } });
  });
  // Last: its documents on the target would count in the others' documentsOnTarget().
  it('two migrations of the same project at once, from two stores: one target project, every document once; the other says why (exit 4, the holder named)', async () => {
    const project = await sourceProject('Twice at once', 30);
    const run = (state: string) => runFerry(['migrate', '--from', 'uk', '--to', 'us', '--projects', project.id, '--map', map, '--json', '--state', join(dir, state)], env);
    const answers = (await Promise.all([run('twice-1.sqlite'), run('twice-2.sqlite')])).map((r) => ({ code: r.code, json: onlyJson(r) as { status: string; holder?: { pid: number }; error?: string; counts?: Record<string, number> } }));
    for (const a of answers) expect([0, 4], JSON.stringify(a.json)).toContain(a.code);
    for (const a of answers.filter((x) => x.code === 4)) {
      expect(a.json.status).toBe('locked');
      expect(a.json.error).toMatch(/another run holds the lease on migrations from .* on the service/);
      expect(a.json.holder?.pid).toEqual(expect.any(Number));
    }
    const ids = await targetProjects('Twice at once');
    expect(ids).toHaveLength(1);
    expect((await remoteFiles(dst, ids[0]!)).map((d) => d.path ?? '').sort()).toEqual(project.paths);
  });

});
