// Exactly once against a service that lists late: real `ferry` processes, each with a store of its
// own (or none), against the emulator with --listing-lag, ferry told a bound above it. The cases
// of issue 44: a cold run right after another, three cold runs at once, kill -9 resumed at once,
// two warm stores one after the other; the same with no bound given (refusals allowed, never a
// copy); a lag that grows during a run; bad bounds. FERRY_TEST_LAG_MS sets the emulator's lag
// (default 1 s; the closing note's run used 3 s with a bound of 4 s).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { startService, type Service } from '../helpers/service.js';
import { documentCount as countDocuments, numberedTree, pathsOnce as checkPathsOnce } from '../helpers/runs.js';
import { onlyJson, runFerry, type CliResult } from '../helpers/cli.js';
import { leaseName } from '../../src/backends/project/lease-board.js';

const LAG_MS = Number(process.env.FERRY_TEST_LAG_MS ?? 1_000);
const BOUND = `${Math.ceil((LAG_MS * 4) / 3)}ms`;

let service: Service;
beforeAll(async () => {
  service = await startService({ listingLagMs: LAG_MS, faults: { latencyMs: 2 } });
});
afterAll(() => service.close());

type Answer = {
  status: string;
  exitCode: number;
  error?: string;
  counts?: Record<string, number>;
  errors?: { key: string; error: string }[];
  listingLag?: { boundMs: number; observedMaxMs: number; exceeded?: string };
};

async function workspace(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'ferry-lag-'));
}

async function newProject(name: string): Promise<string> {
  return (await service.client().projects.create({ name, description: 'listing lag test' })).objectIdentifier;
}

const tree = (root: string, folders: number, files: number, prefix = 'd') => numberedTree(root, folders, files, prefix);
/** Read once this file's lag has passed: the check must not itself read late. */
const pathsOnce = async (project: string) => {
  await sleep(LAG_MS + 50);
  return checkPathsOnce(service.client(), project);
};
const documentCount = (project: string) => countDocuments(service.client(), project);

function env(dir: string, store: string, extra: Record<string, string> = {}): Record<string, string> {
  return { ...service.env(), FERRY_STATE_DIR: join(dir, store), ...extra };
}

function mirror(src: string, project: string, e: Record<string, string>, flags: string[] = [], onSpawn?: (c: ChildProcess) => void): Promise<CliResult> {
  return runFerry(['mirror', src, '--project', project, '--json', '--listing-lag', BOUND, ...flags], e, onSpawn);
}

const answer = (r: CliResult) => onlyJson(r) as unknown as Answer;

describe(`a service that lists new items up to ${LAG_MS} ms late, ferry told ${BOUND}`, () => {
  it('a cold run right after another: the second uploads nothing, every path once', async () => {
    const dir = await workspace();
    const src = join(dir, 'tree');
    const n = await tree(src, 15, 20);
    const project = await newProject('cold after cold');
    const first = answer(await mirror(src, project, env(dir, 'a')));
    expect(first.exitCode, JSON.stringify(first)).toBe(0);
    expect(first.counts?.uploaded).toBe(n);
    expect(first.listingLag).toMatchObject({ boundMs: Math.ceil((LAG_MS * 4) / 3) });
    const second = answer(await mirror(src, project, env(dir, 'b')));
    expect(second.exitCode, JSON.stringify(second)).toBe(0);
    expect(second.counts?.uploaded).toBe(0);
    expect(await pathsOnce(project)).toBe(n);
  });

  it('three cold runs at once: each exit 0 or a refusal naming the holder (4), every path once', async () => {
    const dir = await workspace();
    const src = join(dir, 'tree');
    const n = await tree(src, 10, 20);
    const project = await newProject('three cold at once');
    const answers = (await Promise.all([0, 1, 2].map((i) => mirror(src, project, env(dir, `s${i}`))))).map(answer);
    for (const a of answers) expect([0, 4], JSON.stringify(a)).toContain(a.exitCode);
    expect(answers.reduce((s, a) => s + (a.exitCode === 0 ? (a.counts?.uploaded ?? 0) : 0), 0)).toBe(n);
    expect(await pathsOnce(project)).toBe(n);
  });

  it('kill -9 mid-run, resumed at once from the same store: every path once', async () => {
    const dir = await workspace();
    const src = join(dir, 'tree');
    const n = await tree(src, 10, 20);
    const project = await newProject('killed and resumed');
    let holder: ChildProcess | undefined;
    const killed = mirror(src, project, env(dir, 'one'), ['--concurrency', '2'], (c) => (holder = c));
    while ((await documentCount(project)) < 40) await sleep(20);
    holder!.kill('SIGKILL');
    await killed;
    const again = answer(await mirror(src, project, env(dir, 'one')));
    expect(again.exitCode, JSON.stringify(again)).toBe(0);
    expect(await pathsOnce(project)).toBe(n);
  });

  it('two warm stores one after the other: the second takes what the first uploaded, no copies', async () => {
    const dir = await workspace();
    const src = join(dir, 'tree');
    const first = await tree(src, 2, 5, 'old');
    const project = await newProject('two warm stores');
    for (const store of ['a', 'b']) expect(answer(await mirror(src, project, env(dir, store))).exitCode).toBe(0);
    const added = await tree(src, 8, 20, 'new');
    const a = answer(await mirror(src, project, env(dir, 'a')));
    const b = answer(await mirror(src, project, env(dir, 'b')));
    expect([a.exitCode, b.exitCode]).toEqual([0, 0]);
    expect(a.counts?.uploaded).toBe(added);
    expect(b.counts?.uploaded).toBe(0);
    expect(await pathsOnce(project)).toBe(first + added);
  });

  it('no bound given: a run either finishes or is refused for the late listing it saw (exit 3, the setting named); never a copy', async () => {
    const dir = await workspace();
    const src = join(dir, 'tree');
    const n = await tree(src, 6, 10);
    const project = await newProject('no bound');
    const run = (store: string) => runFerry(['mirror', src, '--project', project, '--json'], env(dir, store));
    for (const store of ['x', 'y', 'z']) {
      const r = answer(await run(store));
      expect([0, 3], JSON.stringify(r)).toContain(r.exitCode);
      if (r.exitCode === 3) expect(r.error ?? JSON.stringify(r.errors)).toMatch(/--listing-lag/);
    }
    expect(await pathsOnce(project)).toBeLessThanOrEqual(n);
    // A refused run removes the claim it made: none is left to block the next run for a TTL.
    const leases = await service.client().projects.list({ searchText: leaseName(`project:${project}`) }, { leaseRecords: true }).all();
    expect(leases).toEqual([]);
  });

  it('a lag that grows past the bound during a run is caught at a renewal or at the last look before release: the run stops writing, exit 3, listingLag in the summary', async () => {
    const dir = await workspace();
    const src = join(dir, 'tree');
    await tree(src, 10, 30);
    const project = await newProject('lag grows');
    let child: ChildProcess | undefined;
    const metrics = join(dir, 'run.prom');
    const running = runFerry(['--metrics-file', metrics, 'mirror', src, '--project', project, '--json', '--listing-lag', BOUND, '--concurrency', '1', '--lock-ttl', `${3 * Math.ceil((LAG_MS * 4) / 3)}ms`], env(dir, 'g'), (c) => (child = c));
    // (A run that ended before writing ten ends the wait too: its answer then says why.)
    while ((await documentCount(project)) < 10 && child?.exitCode === null) await sleep(20);
    service.emulator.setListingLag(20 * LAG_MS);
    try {
      const r = await running;
      const a = answer(r);
      expect(a.exitCode, JSON.stringify(a)).toBe(3);
      expect(a.listingLag?.exceeded).toMatch(/later than the listing lag .*--listing-lag/);
      expect(a.listingLag?.observedMaxMs).toBeGreaterThanOrEqual(a.listingLag?.boundMs ?? Infinity);
      expect(r.stderr).toMatch(/listing lag/);
      expect(child).toBeDefined();
      // The metrics file says it too: the bound, and a lag seen above it.
      const prom = await readFile(metrics, 'utf8');
      const gauge = (name: string) => Number(new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, 'm').exec(prom)?.[1]);
      expect(gauge('ferry_listing_lag_bound_seconds')).toBeCloseTo((a.listingLag?.boundMs ?? 0) / 1000, 3);
      expect(gauge('ferry_listing_lag_observed_seconds')).toBeGreaterThanOrEqual(gauge('ferry_listing_lag_bound_seconds'));
    } finally {
      service.emulator.setListingLag(LAG_MS);
    }
  });

  it('bad bounds are refused before anything is attempted (exit 2, the setting named)', async () => {
    const dir = await workspace();
    const project = await newProject('bad bounds');
    for (const [bound, why] of [
      ['-1s', /negative/],
      ['soon', /not a duration/],
      ['2h', /above 1h/],
    ] as const) {
      const r = await runFerry(['mirror', dir, '--project', project, '--listing-lag', bound], env(dir, 'bad'));
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(why);
      expect(r.stderr).toMatch(/--listing-lag/);
    }
    // A TTL the bound does not fit in: the claim is held only the bound after it was made.
    const short = await runFerry(['mirror', dir, '--project', project, '--listing-lag', '4s', '--lock-ttl', '5s'], env(dir, 'bad'));
    expect(short.code).toBe(2);
    expect(short.stderr).toMatch(/a lease TTL of 5\.0 s is too short for a listing lag of 4\.0 s.*at least 3 times the lag \(12 s\) \(give --lock-ttl 12 s or more/);
    // Said first, whatever else is missing: no address, no credentials.
    const alone = await runFerry(['--listing-lag', 'soon', 'ls'], {});
    expect(alone.code).toBe(2);
    expect(alone.stderr).toMatch(/^ferry: --listing-lag "soon" is not a duration/);
    const fromEnv = await runFerry(['mirror', dir, '--project', project], env(dir, 'bad', { FERRY_LISTING_LAG: 'soon' }));
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toMatch(/FERRY_LISTING_LAG "soon" is not a duration/);
    expect(await documentCount(project)).toBe(0);
  });
});
