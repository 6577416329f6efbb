// A nightly job kept to its window, as cron runs it: `ferry` as a child process against the
// emulator over loopback. At --max-duration, --max-transfer or --max-files a run starts nothing
// new and exits 8 (status "limit"); the next run, with the same store or none, ends with every path
// once. --cutoff-mode hard cuts off what is in flight, for the next run to settle. --notify pings a
// local receiver at the start and the end, and never shows the URL's path.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { once } from 'node:events';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { AddressInfo } from 'node:net';
import { remoteFiles, useService, writeServiceProfiles, writeTree } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';
import { zipOf } from '../helpers/archives.js';

const useEmulator = useService();

type Summary = { status: string; exitCode: number; counts: Record<string, number>; limit?: { limit: string; value: number; cutoff: string; started: number; startedBytes: number; elapsedMs: number }; problems: { key: string; reason: string }[] };

async function tree(label: string, files: number, size = 100): Promise<{ dir: string; src: string; project: string }> {
  const dir = await mkdtemp(join(tmpdir(), `ferry-window-${label}-`));
  const src = join(dir, 'share');
  await writeTree(src, Object.fromEntries(Array.from({ length: files }, (_, i) => [`d${i % 3}/f${String(i).padStart(3, '0')}.txt`, `${String(i).padStart(4, '0')}${'x'.repeat(size - 4)}`])));
  const project = (await useEmulator().client().projects.create({ name: `window ${label}`, description: 'issue 56' })).objectIdentifier;
  return { dir, src, project };
}

/** Every path once on the service, and exactly `n` of them. */
async function everyPathOnce(project: string, n: number): Promise<void> {
  const docs = await remoteFiles(useEmulator().client(), project);
  const paths = docs.map((d) => d.path);
  expect(new Set(paths).size).toBe(paths.length);
  expect(paths.length).toBe(n);
}

describe('limits', () => {
  it('--max-files 10 uploads exactly 10 and exits 8 (status limit, which limit, the next run carries on); the next run finishes, every path once', async () => {
    const t = await tree('files', 25);
    const state = join(t.dir, 'state.sqlite');
    const prom = join(t.dir, 'ferry.prom');
    const first = await runFerry(['--metrics-file', prom, 'mirror', t.src, '--project', t.project, '--state', state, '--max-files', '10', '--json'], useEmulator().env());
    expect(first.code, first.stderr).toBe(8);
    expect(await readFile(prom, 'utf8')).toMatch(/ferry_run_status\{[^}]*status="limit"[^}]*\} 1/);
    const s = onlyJson(first) as Summary;
    expect(s).toMatchObject({ status: 'limit', exitCode: 8, counts: { uploaded: 10 }, limit: { limit: 'max-files', value: 10, cutoff: 'soft', started: 10 } });
    expect(s.problems).toContainEqual({ key: '(limit)', reason: expect.stringMatching(/reached its max-files limit \(10 items\).*the next run carries on where this one stopped/) });
    await everyPathOnce(t.project, 10);
    // A second night at its window, its store knowing ten: what it did not reach is not said deleted.
    const second = await runFerry(['mirror', t.src, '--project', t.project, '--state', state, '--max-files', '5', '--json'], useEmulator().env());
    expect(second.code, second.stderr).toBe(8);
    expect(onlyJson(second)).toMatchObject({ counts: { uploaded: 5 }, deletedLocally: { count: 0 } });
    const text = await runFerry(['mirror', t.src, '--project', t.project, '--state', state, '--max-files', '2'], useEmulator().env());
    expect(text.code, text.stderr).toBe(8);
    expect(text.stdout).toMatch(/limit: .*the next run of the same command carries on \(exit 8\)/);
    const last = await runFerry(['mirror', t.src, '--project', t.project, '--state', state, '--json'], useEmulator().env());
    expect(last.code, last.stderr).toBe(0);
    expect((onlyJson(last) as Summary).counts.uploaded).toBe(8);
    await everyPathOnce(t.project, 25);
    // A window that ends before the walk begins: what the store knows and the run did not reach is not said deleted.
    const early = await runFerry(['mirror', t.src, '--project', t.project, '--state', state, '--max-duration', '1ms', '--json'], useEmulator().env());
    expect(early.code, early.stderr).toBe(8);
    expect(onlyJson(early)).toMatchObject({ status: 'limit', counts: { uploaded: 0 }, deletedLocally: { count: 0 } });
  });

  it('a run stopped by its window before its walk reached what the store knows says none of it deleted locally', async () => {
    const t = await tree('walk', 0);
    const zip = join(t.dir, 'export.zip');
    const known = Array.from({ length: 25 }, (_, i) => ({ name: `z/known-${i}.txt`, data: `known ${i}` }));
    await writeFile(zip, await zipOf(known));
    const state = join(t.dir, 'state.sqlite');
    const first = await runFerry(['mirror', zip, '--project', t.project, '--state', state, '--json'], useEmulator().env());
    expect(first.code, first.stderr).toBe(0);
    // Now 300 new entries come first in the archive: the run's backlog fills with them, and its
    // window ends before its walk reaches the 25 it knows.
    await writeFile(zip, await zipOf([...Array.from({ length: 300 }, (_, i) => ({ name: `a/new-${i}.txt`, data: `new ${i}` })), ...known]));
    const early = await runFerry(['mirror', zip, '--project', t.project, '--state', state, '--max-duration', '1ms', '--json'], useEmulator().env());
    expect(early.code, early.stderr).toBe(8);
    expect(onlyJson(early)).toMatchObject({ status: 'limit', walkStopped: true, deletedLocally: { count: 0 } });
    const rest = await runFerry(['mirror', zip, '--project', t.project, '--state', state, '--json'], useEmulator().env());
    expect(rest.code, rest.stderr).toBe(0);
    await everyPathOnce(t.project, 325);
  });

  it('--max-transfer stops within one file per slot of the budget; a limit smaller than one file still moves one; a fresh store then finishes with every path once', async () => {
    const t = await tree('transfer', 20, 1_000);
    const r = await runFerry(['mirror', t.src, '--project', t.project, '--state', join(t.dir, 'a.sqlite'), '--max-transfer', '5000', '--concurrency', '1', '--json'], useEmulator().env());
    expect(r.code, r.stderr).toBe(8);
    const s = onlyJson(r) as Summary;
    expect(s.limit).toMatchObject({ limit: 'max-transfer', value: 5_000, started: 5, startedBytes: 5_000 });
    expect(s.counts.uploaded).toBe(5);
    const wide = await runFerry(['mirror', t.src, '--project', t.project, '--state', join(t.dir, 'a.sqlite'), '--max-transfer', '5000', '--concurrency', '4', '--json'], useEmulator().env());
    expect(wide.code, wide.stderr).toBe(8);
    const w = onlyJson(wide) as Summary;
    // Items start while less than the budget has started: at most one file a slot beyond it.
    expect(w.limit!.startedBytes).toBeGreaterThanOrEqual(5_000);
    expect(w.limit!.startedBytes).toBeLessThan(5_000 + 4 * 1_000);
    const tiny = await runFerry(['mirror', t.src, '--project', t.project, '--state', join(t.dir, 'a.sqlite'), '--max-transfer', '1', '--json'], useEmulator().env());
    expect(tiny.code, tiny.stderr).toBe(8);
    expect((onlyJson(tiny) as Summary).counts.uploaded).toBe(1);
    // Another machine, no store: it finds what the others sent and sends the rest.
    const fresh = await runFerry(['mirror', t.src, '--project', t.project, '--state', join(t.dir, 'fresh.sqlite'), '--json'], useEmulator().env());
    expect(fresh.code, fresh.stderr).toBe(0);
    await everyPathOnce(t.project, 20);
  });

  it('--max-duration on a slow service: exit 8 at the limit, what was in flight finished; --cutoff-mode hard cuts it off and the next run settles it with no copy', async () => {
    const slow = useEmulator();
    const t = await tree('duration', 40);
    const state = join(t.dir, 'state.sqlite');
    slow.emulator.setFaults({ latencyMs: 400 });
    try {
      const stopped = await runFerry(['mirror', t.src, '--project', t.project, '--state', state, '--max-duration', '2s', '--concurrency', '2', '--json'], slow.env());
      expect(stopped.code, stopped.stderr).toBe(8);
      const s = onlyJson(stopped) as Summary;
      expect(s.limit).toMatchObject({ limit: 'max-duration', value: 2_000, cutoff: 'soft' });
      expect(s.counts.uploaded).toBeLessThan(40);
      // Soft: every file started was finished (none left in flight for the next run).
      expect(s.counts.uploaded + (s.counts.failed ?? 0)).toBe(s.limit!.started);
    } finally {
      slow.emulator.setFaults({});
    }
    const rest = await runFerry(['mirror', t.src, '--project', t.project, '--state', state, '--json'], slow.env());
    expect(rest.code, rest.stderr).toBe(0);
    await everyPathOnce(t.project, 40);
    // Uploads held to 100 KiB/s, 400 KB each, two at once: those started are on the wire at the
    // limit. Soft lets them finish; hard cuts them off (none finished), for the next run to settle.
    for (const cutoff of ['soft', 'hard'] as const) {
      const big = await tree(`duration-${cutoff}`, 6, 400_000);
      const bigState = join(big.dir, 'state.sqlite');
      const r = await runFerry(['mirror', big.src, '--project', big.project, '--state', bigState, '--max-duration', '2500ms', '--cutoff-mode', cutoff, '--bwlimit', '100K', '--concurrency', '2', '--json'], slow.env());
      expect(r.code, r.stderr).toBe(8);
      const h = onlyJson(r) as Summary;
      expect(h.limit).toMatchObject({ limit: 'max-duration', cutoff });
      expect(h.limit!.started).toBeGreaterThan(0);
      expect(h.counts.failed ?? 0).toBe(0);
      expect(h.counts.uploaded).toBe(cutoff === 'soft' ? h.limit!.started : 0);
      const settled = await runFerry(['mirror', big.src, '--project', big.project, '--state', bigState, '--json'], slow.env());
      expect(settled.code, settled.stderr).toBe(0);
      await everyPathOnce(big.project, 6);
    }
  });

  it('a migrate of a project stopped at --max-files, then at --max-duration on a slow service, carries on in the next run: every document once on the target', async () => {
    const service = useEmulator();
    const t = await tree('migrate', 12);
    const seeded = await runFerry(['mirror', t.src, '--project', t.project, '--state', join(t.dir, 'seed.sqlite'), '--json'], service.env());
    expect(seeded.code, seeded.stderr).toBe(0);
    const env = { FERRY_CONFIG: writeServiceProfiles(service, join(t.dir, 'profiles.yaml')) };
    const [from, to] = service.emulator.tenants;
    const state = join(t.dir, 'migrate.sqlite');
    const args = ['migrate', '--from', from!.name, '--to', to!.name, '--projects', t.project, '--state', state, '--json'];
    const first = await runFerry([...args, '--max-files', '5'], env);
    expect(first.code, first.stderr).toBe(8);
    expect(onlyJson(first)).toMatchObject({ status: 'limit', limit: { limit: 'max-files', value: 5 } });
    // A slow night: the window ends mid-copy; what was in flight finishes.
    service.emulator.setFaults({ latencyMs: 300 });
    try {
      const slow = await runFerry([...args, '--max-duration', '2s', '--concurrency', '1'], env);
      expect(slow.code, slow.stderr).toBe(8);
      expect(onlyJson(slow)).toMatchObject({ status: 'limit', limit: { limit: 'max-duration', value: 2_000 } });
    } finally {
      service.emulator.setFaults({});
    }
    const last = await runFerry(args, env);
    expect(last.code, last.stderr).toBe(0);
    const target = service.client({}, 1);
    const projects = (await target.projects.list().all()).filter((p) => p.name === `window migrate`);
    expect(projects).toHaveLength(1);
    await expect(remoteFiles(target, projects[0]!.objectIdentifier).then((d) => d.map((x) => x.path).sort())).resolves.toEqual((await remoteFiles(service.client(), t.project)).map((x) => x.path).sort());
  });

  it('an upload at its window leaves its batch open; the next run continues the same batch and completes it', async () => {
    const client = useEmulator().client();
    const t = await tree('upload', 8);
    const playbook = (await client.playbooks.create({ name: 'window upload', isPrivate: false, organizationWide: true })).objectIdentifier;
    const state = join(t.dir, 'state.sqlite');
    const args = ['upload', t.src, '--project', t.project, '--playbook', playbook, '--state', state, '--no-wait', '--json'];
    const first = await runFerry([...args, '--max-files', '3'], useEmulator().env());
    expect(first.code, first.stderr).toBe(8);
    const a = onlyJson(first) as { status: string; batches: { uploadIdentifier: string; counts: { uploaded: number } }[] };
    expect(a.status).toBe('limit');
    expect(a.batches).toHaveLength(1);
    expect(a.batches[0]!.counts.uploaded).toBe(3);
    const batch = a.batches[0]!.uploadIdentifier;
    expect((await client.documentUploads.get(playbook, batch)).dateCompleted ?? null).toBeNull();
    const second = await runFerry(args, useEmulator().env());
    expect(second.code, second.stderr).toBe(0);
    const b = onlyJson(second) as typeof a;
    expect(b.batches.map((x) => x.uploadIdentifier)).toEqual([batch]);
    expect(b.batches[0]!.counts.uploaded).toBe(5);
    expect((await client.documentUploads.get(playbook, batch)).dateCompleted).toBeTruthy();
    await everyPathOnce(t.project, 8);
  });

  it('a window of a day: --max-duration 1d and a job file\'s maxDuration: 1d are the same 86,400,000 ms (one reader of durations)', async () => {
    const t = await tree('a day', 2);
    const env = useEmulator().env();
    const flag = await runFerry(['mirror', t.src, '--project', t.project, '--state', join(t.dir, 'flag.sqlite'), '--max-duration', '1d', '--json'], env);
    expect(flag.code, flag.stderr).toBe(0);
    await writeFile(join(t.dir, 'daily.yaml'), `job: mirror\nsource: ${t.src}\nproject: ${t.project}\nstate: ${join(t.dir, 'job.sqlite')}\nmaxDuration: 1d\n`);
    const job = await runFerry(['run', join(t.dir, 'daily.yaml'), '--json'], env);
    expect(job.code, job.stderr).toBe(0);
    const plan = await runFerry(['mirror', t.src, '--project', t.project, '--max-duration', '1w', '--dry-run', '--json'], env);
    expect(plan.code, plan.stderr).toBe(0);
  });

  it('bad input: a limit of 0 or below, a size that is none, a timetable out of order or with a bad time, each exit 2 naming it', async () => {
    const t = await tree('bad', 1);
    const env = useEmulator().env();
    for (const [flag, value, said] of [
      ['--max-duration', '0', /--max-duration "0" is no time at all/],
      ['--max-duration', '-5s', /--max-duration "-5s" is not a duration/],
      ['--max-transfer', '5Q', /--max-transfer "5Q" is not a size/],
      ['--max-files', '0', /--max-files must be a whole number of at least 1/],
      ['--bwlimit', '19:00,off 08:00,512k', /--bwlimit "19:00,off 08:00,512k": "08:00,512k" comes after a slot that starts later/],
      ['--bwlimit', '25:00,1M', /"25:00,1M": 25:00 is not a time of day/],
      ['--bwlimit', '08:00,fast', /"08:00,fast": fast is not a rate/],
    ] as const) {
      const r = await runFerry(['mirror', t.src, '--project', t.project, `${flag}=${value}`], env);
      expect(r.code, `${flag} ${value}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(said);
    }
  });
});

describe('--notify', () => {
  let server: Server;
  let pings: { path: string; body: string }[] = [];
  let base = '';
  beforeAll(async () => {
    server = createServer(async (req: IncomingMessage, res) => {
      let body = '';
      for await (const chunk of req) body += chunk;
      pings.push({ path: req.url ?? '', body });
      res.end('OK');
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => server.close());

  it('pings /start, then the URL with the summary on success (a limit counts as success), /fail on a failing run; the path is in no output', async () => {
    const secret = 'ping/0f6c2a4e-secret-check-uuid';
    const t = await tree('notify', 6);
    pings = [];
    const ok = await runFerry(['--notify', `${base}/${secret}`, 'mirror', t.src, '--project', t.project, '--state', join(t.dir, 's.sqlite'), '--json', '--log-level', 'debug'], useEmulator().env());
    expect(ok.code, ok.stderr).toBe(0);
    expect(pings.map((p) => p.path)).toEqual([`/${secret}/start`, `/${secret}`]);
    const sent = JSON.parse(pings[1]!.body) as { command: string; exitCode: number; run: Summary };
    expect(sent).toMatchObject({ command: 'mirror', exitCode: 0, status: 'succeeded', run: { status: 'succeeded', counts: { uploaded: 6 } } });
    expect(`${ok.stdout}${ok.stderr}`).not.toContain('0f6c2a4e');
    pings = [];
    const limited = await runFerry(['--notify', `${base}/${secret}`, 'mirror', t.src, '--project', t.project, '--state', join(t.dir, 'other.sqlite'), '--resync', '--max-files', '1'], useEmulator().env());
    expect([0, 8]).toContain(limited.code);
    expect(pings.map((p) => p.path)).toEqual([`/${secret}/start`, `/${secret}`]);
    pings = [];
    const failing = await runFerry(['--notify', `${base}/${secret}`, 'mirror', join(t.dir, 'missing'), '--project', t.project], useEmulator().env());
    expect(failing.code).toBe(2);
    expect(pings.map((p) => p.path)).toEqual([`/${secret}/start`, `/${secret}/fail`]);
    expect(JSON.parse(pings[1]!.body)).toMatchObject({ exitCode: 2, status: 'error' });
    expect(`${failing.stdout}${failing.stderr}`).not.toContain('0f6c2a4e');
  });

  it('a profile names its notify URL for every job of it; --notify on a command that runs no job is exit 2', async () => {
    const service = useEmulator();
    const t = await tree('notify-profile', 2);
    const config = writeServiceProfiles(service, join(t.dir, 'profiles.yaml'));
    const name = service.emulator.tenants[0]!.name;
    const text = await readFile(config, 'utf8');
    await writeFile(config, text.replace(`  ${name}:\n`, `  ${name}:\n    notify: ${base}/ping/profile-secret\n`));
    pings = [];
    const r = await runFerry(['-p', name, 'mirror', t.src, '--project', t.project, '--state', join(t.dir, 's.sqlite')], { FERRY_CONFIG: config });
    expect(r.code, r.stderr).toBe(0);
    expect(pings.map((p) => p.path)).toEqual(['/ping/profile-secret/start', '/ping/profile-secret']);
    expect(r.stdout + r.stderr).not.toContain('profile-secret');
    const shown = await runFerry(['config', 'show', name, '--json'], { FERRY_CONFIG: config });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).not.toContain('profile-secret');
    const ls = await runFerry(['--notify', `${base}/ping/x`, 'ls'], service.env());
    expect(ls.code).toBe(2);
    expect(ls.stderr).toMatch(/--notify applies to the commands that run a job/);
  });

  it('a receiver that is down, or that never answers: the run keeps its exit code, with one warning naming only scheme and host, each ping bounded; a URL that is not http(s) is exit 2', async () => {
    const dead = createServer();
    dead.listen(0, '127.0.0.1');
    await once(dead, 'listening');
    const port = (dead.address() as AddressInfo).port;
    dead.close();
    await once(dead, 'close');
    const t = await tree('notify-dead', 2);
    const r = await runFerry(['--notify', `http://127.0.0.1:${port}/ping/secret-dead-uuid`, 'mirror', t.src, '--project', t.project, '--state', join(t.dir, 's.sqlite')], useEmulator().env());
    expect(r.code, r.stderr).toBe(0);
    const warnings = r.stderr.split('\n').filter((l) => l.includes('ping to'));
    expect(warnings).toEqual([`ferry: warning: the start ping to http://127.0.0.1:${port} did not go through (ECONNREFUSED): the run's result is not changed by it`]);
    expect(r.stderr).not.toContain('secret-dead-uuid');
    // A receiver that takes the connection and never answers: each ping gives up (5 s), one warning.
    const silent = createServer(() => undefined);
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    try {
      const slowPort = (silent.address() as AddressInfo).port;
      const slow = await runFerry(['--notify', `http://127.0.0.1:${slowPort}/ping/secret-slow-uuid`, 'mirror', t.src, '--project', t.project, '--state', join(t.dir, 'slow.sqlite'), '--json'], useEmulator().env());
      expect(slow.code, slow.stderr).toBe(0);
      expect(onlyJson(slow)).toMatchObject({ status: 'succeeded' });
      expect(slow.stderr.split('\n').filter((l) => l.includes('ping to'))).toEqual([`ferry: warning: the start ping to http://127.0.0.1:${slowPort} did not go through (no answer within 5 s): the run's result is not changed by it`]);
      expect(slow.stderr).not.toContain('secret-slow-uuid');
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
    const ftp = await runFerry(['--notify', 'ftp://example.com/ping/secret-ftp', 'mirror', t.src, '--project', t.project], useEmulator().env());
    expect(ftp.code).toBe(2);
    expect(ftp.stderr).toMatch(/--notify ftp:\/\/… is not an http\(s\) URL/);
    expect(ftp.stderr).not.toContain('secret-ftp');
  });
});
