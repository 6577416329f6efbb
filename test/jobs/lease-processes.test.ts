// The lease on the service, between real `ferry` processes that share nothing but the service:
// each run has its own FERRY_STATE_DIR, as two machines, a fresh container and a laptop do. Pages
// are capped at 7, so every listing (the lease's own too) is read across pages. Runs in both
// emulator modes (vitest.config.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync, type ChildProcess } from 'node:child_process';
import Database from 'better-sqlite3';
import { mkdtemp, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { startService, type Service } from '../helpers/service.js';
import { documentCount as countDocuments, numberedTree, pathsOnce as checkPathsOnce } from '../helpers/runs.js';
import { onlyJson, runFerry, type CliResult } from '../helpers/cli.js';
import { leaseName } from '../../src/backends/project/lease-board.js';

const SKEW = fileURLToPath(new URL('../helpers/skew-clock/register.mjs', import.meta.url));

let service: Service;
beforeAll(async () => {
  // A little latency on every call, so that a run is still running when the next one starts.
  service = await startService({ maxPageSize: 7, faults: { latencyMs: 3 } });
});
afterAll(() => service.close());

type Answer = {
  status: string;
  exitCode: number;
  counts?: Record<string, number>;
  error?: string;
  holder?: { host: string; pid: number; run: string; since: string; note?: string };
  breakWith?: string;
  lease?: { run: string; waitedMs: number; tookOverFrom?: { pid: number; run: string; note?: string }[]; lost?: string; requests: number };
};

async function workspace(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'ferry-lease-'));
}

async function newProject(name: string): Promise<string> {
  return (await service.client().projects.create({ name, description: 'lease test' })).objectIdentifier;
}

const tree = (root: string, folders: number, files: number, prefix = 'f') => numberedTree(root, folders, files, prefix);
const pathsOnce = (project: string) => checkPathsOnce(service.client(), project);
const documentCount = (project: string) => countDocuments(service.client(), project);

function env(dir: string, store: string, extra: Record<string, string> = {}): Record<string, string> {
  return { ...service.env(), FERRY_STATE_DIR: join(dir, store), ...extra };
}

function mirror(src: string, project: string, e: Record<string, string>, flags: string[] = [], onSpawn?: (c: ChildProcess) => void): Promise<CliResult> {
  return runFerry(['mirror', src, '--project', project, '--to', 'Share', '--json', ...flags], e, onSpawn);
}

/** The one checkpoint store in a FERRY_STATE_DIR. */
async function storeFile(stateDir: string): Promise<string> {
  const files = (await readdir(stateDir)).filter((f) => f.endsWith('.sqlite'));
  expect(files).toHaveLength(1);
  return join(stateDir, files[0]!);
}

/** Resolves once `check` says so, polling. */
async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 20));
}

describe('the lease between processes with their own stores', () => {
  it('three cold runs at once, clocks 10 minutes apart: every path once; the runs that did not do the work say why (exit 4, the holder named)', async () => {
    const dir = await workspace();
    const src = join(dir, 'tree');
    const n = await tree(src, 20, 30);
    const project = await newProject('three at once');
    const skews = ['0', String(10 * 60_000), String(-10 * 60_000)];
    const results = await Promise.all(skews.map((skew, i) => mirror(src, project, env(dir, `state-${i}`, { NODE_OPTIONS: `--import=${SKEW}`, FERRY_TEST_CLOCK_SKEW_MS: skew }))));
    const answers = results.map((r) => onlyJson(r) as unknown as Answer);
    for (const [i, a] of answers.entries()) {
      expect([0, 4], `run ${i}: ${results[i]!.stderr}`).toContain(a.exitCode);
      if (a.exitCode === 4) {
        expect(a.status).toBe('locked');
        expect(a.holder).toMatchObject({ pid: expect.any(Number), run: expect.any(String), since: expect.any(String) });
        expect(a.error).toMatch(/another run holds the lease on project .*, folder Share on the service/);
        expect(a.breakWith).toContain(`ferry lock break --project ${project}`);
      } else {
        expect(a.lease?.run).toEqual(expect.any(String));
      }
    }
    const worked = answers.filter((a) => a.exitCode === 0);
    expect(worked.length).toBeGreaterThanOrEqual(1);
    // What was uploaded, all runs together, is the tree once.
    expect(worked.reduce((sum, a) => sum + (a.counts?.uploaded ?? 0), 0)).toBe(n);
    expect(await pathsOnce(project)).toBe(n);
    // And nothing of the lease is left behind on the service.
    const leases = await service.client().projects.list({ searchText: leaseName(`project:${project}`) }, { leaseRecords: true }).all();
    expect(leases).toEqual([]);
  });

  it('two warm stores 0.3 s apart over 200 new files: no copies; the second waits (--wait-lock) and takes what the first uploaded', async () => {
    const dir = await workspace();
    const src = join(dir, 'tree');
    const first = await tree(src, 2, 10, 'old');
    const project = await newProject('two warm stores');
    for (const store of ['a', 'b']) expect((await mirror(src, project, env(dir, store))).code).toBe(0);
    const added = await tree(src, 10, 20, 'new');
    const wait = ['--wait-lock', '2m'];
    const a = mirror(src, project, env(dir, 'a'), wait);
    await new Promise((r) => setTimeout(r, 300));
    const b = mirror(src, project, env(dir, 'b'), wait);
    const answers = (await Promise.all([a, b])).map((r) => onlyJson(r) as unknown as Answer);
    for (const x of answers) expect(x.exitCode, JSON.stringify(x)).toBe(0);
    expect(answers.reduce((s, x) => s + (x.counts?.uploaded ?? 0), 0)).toBe(added);
    expect(await pathsOnce(project)).toBe(first + added);
  });

  it('a holder killed with kill -9: the next run from another store waits out its TTL, takes over, and every path is there once', async () => {
    const dir = await workspace();
    const src = join(dir, 'tree');
    const n = await tree(src, 10, 20);
    const project = await newProject('holder killed');
    let holder: ChildProcess | undefined;
    const killed = mirror(src, project, env(dir, 'killed'), ['--lock-ttl', '3s', '--concurrency', '2'], (c) => (holder = c));
    await until(async () => (await documentCount(project)) >= 50);
    holder!.kill('SIGKILL');
    const gone = await killed;
    expect(gone.code).toBe(null);
    const next = onlyJson(await mirror(src, project, env(dir, 'other'), ['--wait-lock', '60s'])) as unknown as Answer;
    expect(next.exitCode, JSON.stringify(next)).toBe(0);
    expect(next.lease?.tookOverFrom?.map((h) => h.pid)).toEqual([holder!.pid]);
    expect((next.counts?.uploaded ?? 0) + (next.counts?.unchanged ?? 0) + (next.counts?.skipped ?? 0) + (next.counts?.reconciled ?? 0)).toBe(n);
    expect(await pathsOnce(project)).toBe(n);
  });

  it('the killed holder\'s own store takes its lease over at once: the store proved the process dead', async () => {
    const dir = await workspace();
    const src = join(dir, 'tree');
    const n = await tree(src, 5, 30);
    const project = await newProject('same store after kill');
    let holder: ChildProcess | undefined;
    const killed = mirror(src, project, env(dir, 'one'), ['--lock-ttl', '1h', '--concurrency', '2'], (c) => (holder = c));
    await until(async () => (await documentCount(project)) >= 30);
    holder!.kill('SIGKILL');
    await killed;
    // With a TTL of an hour, only the store's proof lets this run in: no --wait-lock either.
    const again = onlyJson(await mirror(src, project, env(dir, 'one'))) as unknown as Answer;
    expect(again.exitCode, JSON.stringify(again)).toBe(0);
    expect(again.lease?.tookOverFrom?.map((h) => h.pid)).toEqual([holder!.pid]);
    expect(await pathsOnce(project)).toBe(n);
  });

  it('a holder killed, then the run that took its store\'s lock killed before its lease cleared it: the third run is in at once, both known dead', async () => {
    const dir = await workspace();
    const src = join(dir, 'tree');
    const n = await tree(src, 5, 30);
    const project = await newProject('two kills in a row');
    let holder: ChildProcess | undefined;
    const killed = mirror(src, project, env(dir, 'one'), ['--lock-ttl', '1h', '--concurrency', '2'], (c) => (holder = c));
    await until(async () => (await documentCount(project)) >= 30);
    holder!.kill('SIGKILL');
    await killed;
    // The second run's state when killed between taking over the store's lock and its lease's
    // judgement (so the first one's claim is still on the service): written as that run leaves it,
    // so that the moment of the kill is not left to how processes happen to interleave.
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
    const db = new Database(await storeFile(join(dir, 'one')));
    const row = db.prepare('SELECT token, dead_tokens AS deadTokens FROM locks').get() as { token: string; deadTokens: string };
    expect(row.deadTokens).toBe('[]');
    db.prepare('UPDATE locks SET token = ?, pid = ?, dead_tokens = ?').run('second-run-token', Number(dead), JSON.stringify([row.token]));
    db.close();
    // With a TTL of an hour, only the chain of dead holders lets this run in: no --wait-lock.
    const third = onlyJson(await mirror(src, project, env(dir, 'one'))) as unknown as Answer;
    expect(third.exitCode, JSON.stringify(third)).toBe(0);
    expect(third.lease?.tookOverFrom?.map((h) => h.pid)).toEqual([holder!.pid]);
    expect(await pathsOnce(project)).toBe(n);
  });

  it('a holder stopped (SIGSTOP) past its TTL: another run takes over; continued, the holder writes nothing more and exits 7 saying it lost the lease', async () => {
    const dir = await workspace();
    const src = join(dir, 'tree');
    const n = await tree(src, 10, 20);
    const project = await newProject('holder stopped');
    let holder: ChildProcess | undefined;
    const stopped = mirror(src, project, env(dir, 'stopped'), ['--lock-ttl', '2s', '--concurrency', '2'], (c) => (holder = c));
    await until(async () => (await documentCount(project)) >= 50);
    holder!.kill('SIGSTOP');
    const other = onlyJson(await mirror(src, project, env(dir, 'other'), ['--wait-lock', '60s'])) as unknown as Answer;
    expect(other.exitCode, JSON.stringify(other)).toBe(0);
    expect(other.lease?.tookOverFrom?.map((h) => h.pid)).toEqual([holder!.pid]);
    expect(await pathsOnce(project)).toBe(n);
    const before = await documentCount(project);
    holder!.kill('SIGCONT');
    const r = await stopped;
    const lost = onlyJson(r) as unknown as Answer;
    expect(r.code).toBe(7);
    expect(lost.status).toBe('lease-lost');
    // Its first renewal after it was continued shows the gap, or (when a renewal was on its way
    // as it was stopped, and landed in time) that its claim is gone: taken over by the other run,
    // which is named when it still holds it, and has finished and let it go by then otherwise.
    expect(lost.lease?.lost).toMatch(/was not renewed for \d+ s of the service's time .*writes nothing more|is no longer this run's: its claim was removed from the service(, and mirror run .* holds it since .*| \(another run takes it over .*\): this run) writes nothing more/);
    expect(r.stderr).toMatch(/lease/);
    // Nothing after it was continued but what was on its way when it was stopped (docs/scale-out.md,
    // *The window that remains*: a small request stopped between its fence and its one write is
    // sent when the process goes on, and the service keeps it): at most one per write slot
    // (--concurrency 2), each one a copy that `ferry check` names. A holder that went on writing
    // would add the files it had not sent, some 150.
    const late = (await documentCount(project)) - before;
    expect(late).toBeLessThanOrEqual(2);
    const checked = onlyJson(await runFerry(['check', src, '--project', project, '--to', 'Share', '--json'], env(dir, 'other'))) as unknown as { counts: Record<string, number> };
    expect(checked.counts).toMatchObject({ changed: 0, missingOnTheService: 0, onlyOnTheService: 0, twiceOnTheService: late });
  });
});

describe('bad input to the lease', () => {
  it('a lease record written by hand with garbage blocks for one TTL from its making, is then taken over and removed', async () => {
    const dir = await workspace();
    const src = join(dir, 'tree');
    const n = await tree(src, 1, 5);
    const project = await newProject('garbage lease');
    await service.client().projects.create({ name: leaseName(`project:${project}`), description: '{"this is": not json' });
    // Judged with the judge's own TTL: 30 s here, so that a slow start of the process (a loaded
    // machine took over 2 s) still finds it within one TTL of its making; 2 s below, to take it over.
    const refused = onlyJson(await mirror(src, project, env(dir, 'a'), ['--lock-ttl', '30s'])) as unknown as Answer;
    expect(refused.exitCode).toBe(4);
    expect(refused.holder?.note).toMatch(/an unreadable lease record/);
    const ok = onlyJson(await mirror(src, project, env(dir, 'a'), ['--lock-ttl', '2s', '--wait-lock', '30s'])) as unknown as Answer;
    expect(ok.exitCode, JSON.stringify(ok)).toBe(0);
    expect(ok.lease?.tookOverFrom?.[0]?.note).toMatch(/unreadable/);
    expect(await pathsOnce(project)).toBe(n);
    expect(await service.client().projects.list({ searchText: leaseName(`project:${project}`) }, { leaseRecords: true }).all()).toEqual([]);
  });

  it('a lease of a newer protocol is never judged expired: exit 4 naming it; `ferry lock status` shows it, `ferry lock break` removes it with a warning', async () => {
    const dir = await workspace();
    const src = join(dir, 'tree');
    const n = await tree(src, 1, 5);
    const project = await newProject('newer lease');
    await service.client().projects.create({ name: leaseName(`project:${project}`), description: JSON.stringify({ v: 2, holder: 'ferry 9' }) });
    const refused = onlyJson(await mirror(src, project, env(dir, 'a'), ['--lock-ttl', '2s', '--wait-lock', '3s'])) as unknown as Answer;
    expect(refused.exitCode).toBe(4);
    expect(refused.holder?.note).toMatch(/protocol 2, written by a newer ferry/);
    // The record is a project of the service, yet never the user's: `ferry ls` leaves it out.
    const listed = onlyJson(await runFerry(['ls', '--json'], env(dir, 'a'))) as { items: { name: string }[] };
    expect(listed.items.length).toBeGreaterThan(0);
    expect(listed.items.filter((p) => p.name.startsWith('.ferry-lease'))).toEqual([]);
    const status = onlyJson(await runFerry(['lock', 'status', '--project', project, '--json'], env(dir, 'a')));
    expect(status).toMatchObject({ command: 'lock status', exitCode: 0, records: 1, holders: [{ note: expect.stringMatching(/protocol 2/) }] });
    const broke = await runFerry(['lock', 'break', '--project', project, '--json'], env(dir, 'a'));
    expect(onlyJson(broke)).toMatchObject({ command: 'lock break', exitCode: 0, removed: 1 });
    expect(broke.stderr).toMatch(/warning: broke 1 lease on project .*may write for up to/);
    const ok = onlyJson(await mirror(src, project, env(dir, 'a'))) as unknown as Answer;
    expect(ok.exitCode).toBe(0);
    expect(await pathsOnce(project)).toBe(n);
  });

  it.each([['0'], ['0s'], ['-5s'], ['2h'], ['soon']])('--lock-ttl %s is refused at start (exit 2), nothing sent', async (ttl) => {
    const dir = await workspace();
    const src = join(dir, 'tree');
    await tree(src, 1, 2);
    const project = await newProject(`ttl ${ttl}`);
    const r = await runFerry(['mirror', src, '--project', project, '--json', `--lock-ttl=${ttl}`], env(dir, 'a'));
    expect(r.code).toBe(2);
    expect(onlyJson(r).error).toMatch(/--lock-ttl/);
    expect(await documentCount(project)).toBe(0);
  });

  it('--no-lock holds no lease and says so', async () => {
    const dir = await workspace();
    const src = join(dir, 'tree');
    const n = await tree(src, 1, 3);
    const project = await newProject('no lock');
    const r = onlyJson(await mirror(src, project, env(dir, 'a'), ['--no-lock'])) as unknown as Answer & { problems: { key: string; reason: string }[] };
    expect(r.exitCode).toBe(0);
    expect(r.lease).toEqual({ off: '--no-lock' });
    expect(r.problems).toContainEqual({ key: '(lease)', reason: expect.stringMatching(/no lease held on the service \(--no-lock\)/) });
    expect(await pathsOnce(project)).toBe(n);
  });
});
