// Ctrl-C on a service that hiccups: the first SIGINT says "stopping" at once, starts no new work,
// waits out no Retry-After, and ends with every discovered entry accounted for (`interrupted` for
// those that did not end) and the line to resume; a second SIGINT exits at once (130). Either
// way the next run finishes the job and nothing arrives twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { remoteFiles, startService, writeTree, type Service } from '../helpers/service.js';
import { FERRY_BIN, onlyJson, runFerry } from '../helpers/cli.js';
import Database from 'better-sqlite3';

let service: Service;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.close());

const FILES = 120;

/** Documents the run has recorded as uploaded, read from its checkpoint store (another connection). */
function uploadedSoFar(state: string): number {
  try {
    const db = new Database(state, { readonly: true, fileMustExist: true });
    try {
      return (db.prepare("SELECT count(*) AS n FROM items WHERE state = 'uploaded'").get() as { n: number }).n;
    } finally {
      db.close();
    }
  } catch {
    return 0; // not created yet
  }
}

/** Runs ferry, sends SIGINT `times` times once `ready()` says so, and gives back how it ended. */
async function interrupted(args: string[], times: 1 | 2, ready: () => Promise<boolean>) {
  const child = spawn(process.execPath, [FERRY_BIN, ...args], { env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent', FERRY_LOG_LEVEL: 'silent', ...service.env() } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const closed = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  for (let poll = 0; poll < 2_000 && child.exitCode === null && !(await ready()); poll++) await new Promise((r) => setTimeout(r, 25));
  if (child.exitCode !== null) await closed;
  expect(child.exitCode, `the run ended before it could be interrupted: ${stdout.slice(0, 1500)} ${stderr.slice(0, 500)}`).toBeNull();
  const sentAt = Date.now();
  child.kill('SIGINT');
  let inFlight: number | undefined;
  if (times === 2) {
    // Once the first is handled (two signals sent together arrive as one), while its wind-down
    // waits for the requests in flight; the message says how many there are.
    for (let poll = 0; poll < 2_000 && !/(\d+) in flight/.test(stderr) && child.exitCode === null; poll++) await new Promise((r) => setTimeout(r, 2));
    inFlight = Number(/(\d+) in flight/.exec(stderr)?.[1] ?? 0);
    child.kill('SIGINT');
  }
  // A liveness guard, not a speed assertion: a run that never stops is killed and fails below.
  const guard = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const code = await closed;
  clearTimeout(guard);
  return { code, stdout, stderr, stoppedInMs: Date.now() - sentAt, inFlight };
}

describe('Ctrl-C on a faulty service', () => {
  async function setup(times: number) {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-sigint-'));
    const files: Record<string, string> = {};
    for (let i = 0; i < FILES; i++) files[`d${i % 5}/f${i}.txt`] = `file ${i}`;
    await writeTree(join(dir, 'src'), files);
    const client = service.client();
    const project = (await client.projects.create({ name: `sigint ${times}`, description: '' })).objectIdentifier;
    const state = join(dir, 'state.sqlite');
    return { client, project, state, args: ['mirror', join(dir, 'src'), '--project', project, '--state', state] };
  }

  /** The run, interrupted once at least 5 documents are recorded, on a service that refuses 30 % of requests with Retry-After: 1 (once) or answers in 2 s (twice). */
  async function crawl(args: string[], times: 1 | 2, state: string) {
    // Twice: the first signal waits for requests on the wire (2 s each here), the second does not.
    service.emulator.setFaults(times === 1 ? { probabilities: { '429': 0.3 }, seed: times } : { latencyMs: 2_000, seed: times });
    try {
      const run = await interrupted(args, times, async () => uploadedSoFar(state) >= 5);
      console.log(`SIGINT x${times}: the run ended ${run.stoppedInMs} ms after the ${times === 1 ? 'signal' : 'first signal'}`);
      return run;
    } finally {
      service.emulator.setFaults({});
    }
  }

  it('one SIGINT: says it is stopping, ends accounted with the resume line; jobs resume finishes it, nothing twice', async () => {
    const { client, project, state, args } = await setup(1);
    const first = await crawl(args, 1, state);
    expect(first.code, first.stderr).toBe(3);
    expect(first.stderr).toMatch(/SIGINT received: stopping, no new work is started; \d+ in flight finish first \(Ctrl-C again exits at once\)/);
    expect(first.stdout).toMatch(/mirror run \d+: interrupted/);
    const runId = /interrupted: \d+ not finished; resume with `ferry jobs resume (\d+)/.exec(first.stdout)?.[1];
    expect(runId, first.stdout).toBeDefined();
    // Every discovered entry is accounted for in the recorded run.
    const shown = await runFerry(['jobs', 'show', runId!, '--state', state, '--json'], service.env());
    const c = (onlyJson(shown) as { run: { counts: Record<string, number> } }).run.counts;
    expect(c.discovered).toBeGreaterThan(0);
    expect(c.uploaded! + c.reconciled! + c.skipped! + c.failed! + (c.interrupted ?? 0)).toBe(c.discovered);

    const resumed = await runFerry(['jobs', 'resume', runId!, '--state', state, '--json'], service.env());
    expect(resumed.code, resumed.stderr).toBe(0);
    const docs = await remoteFiles(client, project);
    expect(docs).toHaveLength(FILES);
    expect(new Set(docs.map((d) => d.path)).size).toBe(FILES);
  });

  it('a second SIGINT exits at once with 130; the next run finishes, nothing twice', async () => {
    // The case needs a request on the wire when the first signal lands; a moment when none is
    // (between two writes, or all of them still before sending: the first signal alone then ends
    // the run within milliseconds, exit 3) is tried again, up to three times.
    let tries = 0;
    let ctx: Awaited<ReturnType<typeof setup>>;
    let first: Awaited<ReturnType<typeof crawl>>;
    do {
      ctx = await setup(2);
      first = await crawl([...ctx.args, '--json'], 2, ctx.state);
    } while (first.code !== 130 && ++tries < 3);
    const { client, project, args } = ctx;
    expect(first.inFlight, first.stderr).toBeGreaterThan(0);
    expect(first.code).toBe(130);
    // Even exiting at once, --json answers with its one object (docs/json-output.schema.json).
    expect(onlyJson({ code: first.code, stdout: first.stdout, stderr: first.stderr })).toMatchObject({ command: 'mirror', status: 'interrupted', exitCode: 130 });
    const next = await runFerry([...args, '--json'], service.env());
    expect(next.code, next.stderr).toBe(0);
    const docs = await remoteFiles(client, project);
    expect(docs).toHaveLength(FILES);
    expect(new Set(docs.map((d) => d.path)).size).toBe(FILES);
  });

  it('a run stopped while it still walks its source says how far the walk got, so that its counts are not read as files missing', async () => {
    // 1,200 files: the engine looks entries up 256 at a time and walks on only as uploads need
    // more, so a run stopped after 5 uploads has read a part of the source.
    const dir = await mkdtemp(join(tmpdir(), 'ferry-sigint-walk-'));
    const files: Record<string, string> = {};
    for (let i = 0; i < 1_200; i++) files[`d${i % 4}/f${String(i).padStart(4, '0')}.txt`] = `file ${i}`;
    await writeTree(join(dir, 'src'), files);
    const project = (await service.client().projects.create({ name: 'sigint walk', description: '' })).objectIdentifier;
    const state = join(dir, 'state.sqlite');
    service.emulator.setFaults({ latencyMs: 20 });
    let run: Awaited<ReturnType<typeof interrupted>>;
    try {
      run = await interrupted(['mirror', join(dir, 'src'), '--project', project, '--state', state, '--concurrency', '2'], 1, async () => uploadedSoFar(state) >= 5);
    } finally {
      service.emulator.setFaults({});
    }
    expect(run.code, run.stderr).toBe(3);
    const seen = Number(/stopped after (\d+) of the source's entries: the rest were not looked at \(not missing\)/.exec(run.stdout)?.[1]);
    expect(seen, run.stdout).toBeGreaterThan(0);
    expect(seen).toBeLessThan(1_200);
    expect(run.stdout).toContain(`discovered ${seen} `);
    expect(run.stdout).toMatch(/interrupted: \d+ not finished; resume with `ferry jobs resume \d+/);
  });
});
