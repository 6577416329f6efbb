// --metrics-file and --pushgateway as an operator's cron jobs use them: real runs of the `ferry`
// command, the file read back with a parser of the exposition format, a Pushgateway stood in by a
// small HTTP server, and the alert rules of config/prometheus held to what ferry writes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { copyFile, mkdir, mkdtemp, readFile, readdir, rm, truncate, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { parse as parseYaml } from 'yaml';
import { startService, writeServiceProfiles, writeTree, type Service } from '../helpers/service.js';
import { onlyJson, runFerry, type CliResult } from '../helpers/cli.js';
import { buildRichPlaybook } from '../helpers/playbook.js';

const EICAR = ['X5O!P%@AP[4\\PZX54(P^)7CC)7}$', 'EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*'].join('');

let service: Service;
let dir: string;
let env: Record<string, string>;
beforeAll(async () => {
  service = await startService();
  dir = await mkdtemp(join(tmpdir(), 'ferry-metrics-'));
  env = { ...service.env(), FERRY_STATE_DIR: join(dir, 'state') };
  await writeTree(join(dir, 'clean-src'), { 'c/one.txt': 'one', 'c/two.txt': 'two', 'three.txt': 'three' });
});
afterAll(() => service.close());

type Sample = { labels: Record<string, string>; value: number };

/** The exposition text, parsed by a parser of the format (not ours): series name -> samples. */
function parse(text: string): Map<string, Sample[]> {
  const families = parsePrometheusTextFormat(text) as { name: string; metrics: { labels?: Record<string, string>; value: string }[] }[];
  return new Map(families.map((f) => [f.name, f.metrics.map((m) => ({ labels: m.labels ?? {}, value: Number(m.value) }))]));
}

async function readMetrics(file: string): Promise<Map<string, Sample[]>> {
  return parse(await readFile(file, 'utf8'));
}

/** The sum of a series' samples whose labels include `where`. */
function value(m: Map<string, Sample[]>, name: string, where: Record<string, string> = {}): number | undefined {
  const samples = m.get(name)?.filter((s) => Object.entries(where).every(([k, v]) => s.labels[k] === v));
  return samples?.length ? samples.reduce((n, s) => n + s.value, 0) : undefined;
}

function ferry(args: string[], extra: Record<string, string> = {}, onSpawn?: (c: ChildProcess) => void): Promise<CliResult> {
  return runFerry(args, { ...env, ...extra }, onSpawn);
}

async function newProject(name: string): Promise<string> {
  return (await service.client().projects.create({ name, description: 'metrics' })).objectIdentifier;
}

/** Every series name a run wrote, for the alert rules' check. */
const written = new Set<string>();

/** A path whose folder cannot be made: it goes through a plain file. */
function underAFile(name: string): string {
  writeFileSync(join(dir, 'plain-file'), 'not a folder');
  return join(dir, 'plain-file', 'no', name);
}

describe('--metrics-file: the textfile collector', () => {
  it('a mirror: the run\'s own counts, bytes, requests and times, labelled by job, tenant and project, never by a file name', async () => {
    const src = join(dir, 'mirror-src');
    await writeTree(src, { 'a/one.txt': 'one', 'a/two.txt': 'two', 'b/three.txt': 'three', 'bad\u0001name.txt': 'refused' });
    const project = await newProject('metrics mirror');
    const file = join(dir, 'mirror.prom');
    const r = await ferry(['mirror', src, '--project', project, '--json', '--metrics-file', file]);
    const summary = onlyJson(r) as { exitCode: number; counts: Record<string, number>; bytes: number };
    expect(summary.exitCode).toBe(1);
    const m = await readMetrics(file);
    for (const name of m.keys()) written.add(name);
    const labels = { job_kind: 'mirror', job_name: 'mirror', project };
    expect(value(m, 'ferry_items_total', { ...labels, outcome: 'uploaded' })).toBe(summary.counts.uploaded);
    expect(value(m, 'ferry_items_total', { ...labels, outcome: 'failed' })).toBe(summary.counts.failed);
    expect(value(m, 'ferry_items_failed_total', { ...labels, mark: 'item' })).toBe(1);
    expect(value(m, 'ferry_bytes_total', labels)).toBe(summary.bytes);
    expect(value(m, 'ferry_run_exit_code', labels)).toBe(1);
    expect(value(m, 'ferry_run_status', { ...labels, status: 'failed' })).toBe(1);
    expect(value(m, 'ferry_run_in_progress', labels)).toBe(0);
    expect(value(m, 'ferry_requests_total', { ...labels, code_class: '2xx' })).toBeGreaterThan(3);
    expect(value(m, 'ferry_run_end_timestamp_seconds', labels)).toBeGreaterThanOrEqual(value(m, 'ferry_run_start_timestamp_seconds', labels)!);
    // Failed: no last success yet. The tenant is the service's host.
    expect(m.get('ferry_run_last_success_timestamp_seconds')).toBeUndefined();
    expect(m.get('ferry_run_start_timestamp_seconds')![0]!.labels.tenant).toBe(new URL(service.emulator.baseUrl).host);
    // No label anywhere holds a file's name.
    const text = await readFile(file, 'utf8');
    expect(text).not.toMatch(/one\.txt|bad.name/);

    // The next run succeeds (the refused name taken out): a last success; a failed run after it keeps it.
    await rm(join(src, 'bad\u0001name.txt'));
    expect((await ferry(['mirror', src, '--project', project, '--metrics-file', file])).code).toBe(0);
    const ok = await readMetrics(file);
    const success = value(ok, 'ferry_run_last_success_timestamp_seconds', labels)!;
    expect(success).toBe(value(ok, 'ferry_run_end_timestamp_seconds', labels));
    expect(value(ok, 'ferry_items_total', { ...labels, outcome: 'unchanged' })).toBe(3);
    await writeTree(src, { 'bad\u0002again.txt': 'x' });
    expect((await ferry(['mirror', src, '--project', project, '--metrics-file', file])).code).toBe(1);
    expect(value(await readMetrics(file), 'ferry_run_last_success_timestamp_seconds', labels)).toBe(success);
  });

  it('an upload batch with failures: the failedReasonSummary by reason, beside the documents of the batch', async () => {
    const src = join(dir, 'upload-src');
    await writeTree(src, { 'ok/a.txt': 'fine', 'ok/b.txt': 'fine too', 'bad/archive.7z': '7z', 'bad/virus.txt': EICAR });
    const project = await newProject('metrics upload');
    const playbook = (await service.client().playbooks.create({ name: 'metrics upload', isPrivate: false, organizationWide: true })).objectIdentifier;
    const file = join(dir, 'upload.prom');
    const r = await ferry(['upload', src, '--project', project, '--playbook', playbook, '--json', '--metrics-file', file]);
    const answer = onlyJson(r) as { batches: { failedReasonSummary: Record<string, number>; counts: Record<string, number> }[] };
    const m = await readMetrics(file);
    for (const name of m.keys()) written.add(name);
    const reasons = answer.batches[0]!.failedReasonSummary;
    expect(reasons).toMatchObject({ unsupportedFileType: 1, maliciousFile: 1 });
    for (const [reason, n] of Object.entries(reasons)) expect(value(m, 'ferry_upload_failed_documents_total', { reason, playbook }) ?? 0, reason).toBe(n);
    expect(value(m, 'ferry_upload_documents_total', { job_kind: 'upload', playbook, project })).toBe(4);
    expect(value(m, 'ferry_run_exit_code', { job_kind: 'upload' })).toBe(r.code);
  });

  it('a backup: archives written, the newest good archive of each playbook; it heals a truncated archive (quarantined, verify exits 0), and a swapped one fails verify (exit 1)', async () => {
    const client = service.client({}, 1);
    const tenant = service.emulator.tenants[1]!;
    const a = await buildRichPlaybook(client, tenant, { name: 'Metrics backup a' });
    const b = await buildRichPlaybook(client, tenant, { name: 'Metrics backup b' });
    const out = join(dir, 'backups');
    const file = join(dir, 'backup.prom');
    const backupEnv = { ...service.env(1), FERRY_STATE_DIR: join(dir, 'backup-state') };
    const first = onlyJson(await ferry(['playbooks', 'backup', '--out', out, '--json', '--metrics-file', file], backupEnv)) as { counts: Record<string, number> };
    let m = await readMetrics(file);
    for (const name of m.keys()) written.add(name);
    expect(value(m, 'ferry_backup_archives_written_total', { job_kind: 'playbooks-backup' })).toBe(first.counts.written);
    for (const id of [a.id, b.id]) expect(value(m, 'ferry_backup_newest_good_archive_timestamp_seconds', { backup_playbook: id }), id).toBeGreaterThan(0);

    const index = JSON.parse(await readFile(join(out, 'index.json'), 'utf8')) as { backups: { playbookIdentifier: string; file: string }[] };
    const fileOf = (id: string) => join(out, index.backups.find((x) => x.playbookIdentifier === id)!.file);
    await truncate(fileOf(a.id), 100);
    expect((await ferry(['playbooks', 'verify', out], backupEnv)).code).toBe(1);
    const healed = onlyJson(await ferry(['playbooks', 'backup', '--out', out, '--json', '--metrics-file', file], backupEnv)) as { healed: { playbook: string; quarantinedAs: string }[] };
    expect(healed.healed).toEqual([expect.objectContaining({ playbook: a.id, quarantinedAs: expect.stringMatching(/\.zip\.quarantined$/) })]);
    m = await readMetrics(file);
    expect(value(m, 'ferry_backup_bad_archives_total')).toBe(1);
    expect(value(m, 'ferry_backup_quarantined_archives_total')).toBe(1);
    const verified = await ferry(['playbooks', 'verify', out, '--json'], backupEnv);
    expect(verified.code).toBe(0);
    expect(onlyJson(verified)).toMatchObject({ counts: { bad: 0, quarantined: 1 } });
    expect((await ferry(['playbooks', 'verify', out], backupEnv)).stdout).toMatch(/QUAR .*\.zip\.quarantined: moved aside/);

    // Another playbook's archive in place of b's: verify fails, naming it.
    const now = JSON.parse(await readFile(join(out, 'index.json'), 'utf8')) as { backups: { playbookIdentifier: string; file: string }[] };
    const current = (id: string) => join(out, now.backups.find((x) => x.playbookIdentifier === id)!.file);
    await copyFile(current(a.id), current(b.id));
    const swapped = await ferry(['playbooks', 'verify', out], backupEnv);
    expect(swapped.code).toBe(1);
    expect(swapped.stdout).toMatch(new RegExp(`BAD .*(holds playbook ${a.id}|sha256|bytes)`));
  });

  it('a migrate: the documents copied, as its JSON counts them', async () => {
    const config = writeServiceProfiles(service, join(dir, 'profiles.yaml'));
    const src = join(dir, 'migrate-src');
    await writeTree(src, { 'x/1.txt': 'one', 'x/2.txt': 'two' });
    const project = await newProject('metrics migrate');
    expect((await ferry(['mirror', src, '--project', project])).code).toBe(0);
    const file = join(dir, 'migrate.prom');
    const t = service.emulator.tenants;
    const r = await runFerry(['migrate', '--from', t[0]!.name, '--to', t[1]!.name, '--projects', project, '--json', '--state', join(dir, 'migrate.sqlite'), '--metrics-file', file], { FERRY_CONFIG: config });
    const answer = onlyJson(r) as { exitCode: number; counts: Record<string, number> };
    expect(answer.exitCode).toBe(0);
    const m = await readMetrics(file);
    for (const name of m.keys()) written.add(name);
    expect(value(m, 'ferry_items_total', { job_kind: 'migrate', outcome: 'uploaded' })).toBe(answer.counts.copied);
    expect(value(m, 'ferry_run_success', { job_kind: 'migrate' })).toBe(1);
  });

  it('is replaced atomically and rewritten at each --stats interval while a slowed run lasts: a reader polling it never sees half a file, and sees it in progress', async () => {
    const slow = await startService({ faults: { latencyMs: 150 } });
    try {
      const src = join(dir, 'slow-src');
      await writeTree(src, Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`s/${i}.txt`, `slow ${i}`])));
      const project = (await slow.client().projects.create({ name: 'slow', description: 'metrics' })).objectIdentifier;
      const file = join(dir, 'slow.prom');
      let running = true;
      const snapshots = new Set<number>();
      let reads = 0;
      const poll = (async () => {
        while (running) {
          const text = await readFile(file, 'utf8').catch(() => undefined);
          if (text !== undefined) {
            reads++;
            // Whole every time: it parses, and ends with the series written last.
            const m = parse(text);
            expect(text.endsWith('\n')).toBe(true);
            expect(m.has('ferry_lease_wait_seconds_total')).toBe(true);
            if (value(m, 'ferry_run_in_progress') === 1) snapshots.add(value(m, 'ferry_run_updated_timestamp_seconds')!);
          }
          await new Promise((r) => setTimeout(r, 5));
        }
      })();
      const r = await runFerry(['mirror', src, '--project', project, '--concurrency', '1', '--stats', '1s', '--metrics-file', file], { ...slow.env(), FERRY_STATE_DIR: join(dir, 'slow-state') });
      running = false;
      await poll;
      expect(r.code, r.stderr).toBe(0);
      // Written at the start and again at least once while it ran, each time whole.
      expect(snapshots.size).toBeGreaterThanOrEqual(2);
      expect(reads).toBeGreaterThan(snapshots.size);
      // No temporary file is left beside it.
      expect((await readdir(dir)).filter((n) => n.startsWith('.ferry-metrics-'))).toEqual([]);
    } finally {
      await slow.close();
    }
  });

  it.each([
    // A folder that does not exist is made, as --log-file's is; one under a file cannot be.
    ['a folder that cannot be made', () => underAFile('f.prom'), /--metrics-file .*: its folder .* cannot be made or written \(ENOTDIR\)/],
    ['a folder as the file', () => dir, /is a folder/],
  ])('refuses %s at start (exit 2), nothing sent', async (_what, path, message) => {
    const project = await newProject('metrics refused');
    const r = await ferry(['mirror', join(dir, 'mirror-src'), '--project', project, '--json', '--metrics-file', path()]);
    expect(r.code).toBe(2);
    expect(onlyJson(r).error).toMatch(message);
    expect(await service.client().documents.list(project).all()).toEqual([]);
  });

  it("a folder that does not exist is made; a job file's metricsFile: that cannot be written is named by its key", async () => {
    const project = await newProject('metrics folder made');
    const made = join(dir, 'made', 'on', 'demand', 'f.prom');
    const r = await ferry(['mirror', join(dir, 'mirror-src'), '--project', project, '--metrics-file', made]);
    // The source holds a name the service refuses (exit 1): the run ran, and its metrics are written.
    expect(r.code, r.stderr).toBe(1);
    expect((await readMetrics(made)).has('ferry_run_success')).toBe(true);
    const jobFile = join(dir, 'bad-metrics.yaml');
    await writeFile(jobFile, `job: mirror\nsource: ${join(dir, 'mirror-src')}\nproject: ${project}\nmetricsFile: ${underAFile('g.prom')}\n`);
    const refused = await ferry(['run', jobFile, '--json']);
    expect(refused.code).toBe(2);
    expect(onlyJson(refused).error).toMatch(/^the job file's metricsFile: /);
  });

  it('a job name with quotes, a backslash and a newline is escaped in the label, and read back whole', async () => {
    const src = join(dir, 'clean-src');
    const project = await newProject('metrics odd name');
    const jobs = join(dir, 'jobs');
    await mkdir(jobs, { recursive: true });
    const name = 'night "ly"\\ job\nb';
    const jobFile = join(jobs, `${name}.yaml`);
    await writeFile(jobFile, `job: mirror\nsource: ${src}\nproject: ${project}\n`);
    const file = join(dir, 'odd.prom');
    const r = await ferry(['run', jobFile, '--metrics-file', file]);
    expect(r.code, r.stderr).toBe(0);
    const m = await readMetrics(file);
    expect(m.get('ferry_run_success')![0]!.labels.job_name).toBe(name);
    expect(value(m, 'ferry_run_success', { job_name: name, job_kind: 'mirror' })).toBe(1);
  });
});

describe('--pushgateway', () => {
  let gateway: Server;
  let url: string;
  const pushes: { method: string; path: string; body: string }[] = [];
  beforeAll(async () => {
    gateway = createServer((req: IncomingMessage, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        pushes.push({ method: req.method ?? '', path: decodeURIComponent(req.url ?? ''), body });
        res.writeHead(200).end();
      });
    });
    gateway.listen(0, '127.0.0.1');
    await once(gateway, 'listening');
    url = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => gateway.close(() => r())));

  it('pushes the run\'s series at its end, grouped by job name and instance; what it pushes parses', async () => {
    const src = join(dir, 'clean-src');
    const project = await newProject('metrics push');
    const r = await ferry(['mirror', src, '--project', project, '--json', '--pushgateway', url]);
    expect(r.code).toBe(0);
    expect(pushes.length).toBeGreaterThanOrEqual(1);
    const last = pushes[pushes.length - 1]!;
    expect(last.method).toBe('POST');
    expect(last.path).toBe(`/metrics/job/mirror/instance/${hostname()}`);
    const m = parse(last.body);
    expect(value(m, 'ferry_items_total', { project, outcome: 'unchanged' })! + value(m, 'ferry_items_total', { project, outcome: 'uploaded' })!).toBe(3);
    expect(value(m, 'ferry_run_success', { project })).toBe(1);
  });

  it('a job file names its metrics file (beside it) and the Pushgateway; a profile may name the Pushgateway', async () => {
    const project = await newProject('metrics job file');
    const jobs = join(dir, 'job-with-metrics');
    await mkdir(jobs, { recursive: true });
    const jobFile = join(jobs, 'weekly.yaml');
    await writeFile(jobFile, `job: mirror\nsource: ${join(dir, 'clean-src')}\nproject: ${project}\nmetricsFile: weekly.prom\npushgateway: ${url}\n`);
    const before = pushes.length;
    expect((await ferry(['run', jobFile])).code).toBe(0);
    expect(value(await readMetrics(join(jobs, 'weekly.prom')), 'ferry_run_success', { job_name: 'weekly', project })).toBe(1);
    expect(pushes.slice(before).map((p) => p.path)).toContain(`/metrics/job/weekly/instance/${hostname()}`);

    const config = join(dir, 'push-profiles.yaml');
    const t = service.emulator.tenants[0]!;
    await writeFile(config, `profiles:\n  pushed:\n    baseUrl: ${service.emulator.baseUrl}\n    settingsUrl: ${service.emulator.settingsUrl}\n    authUrl: ${service.emulator.authUrl}\n    audience: ${service.emulator.audience}\n    clientId: ${t.clientId}\n    clientSecretEnv: PUSHED_SECRET\n    pushgateway: ${url}\n`);
    const fromProfile = pushes.length;
    const r = await runFerry(['-p', 'pushed', 'mirror', join(dir, 'clean-src'), '--project', project, '--to', 'profiled'], { FERRY_CONFIG: config, PUSHED_SECRET: t.clientSecret, FERRY_STATE_DIR: join(dir, 'pushed-state') });
    expect(r.code, r.stderr).toBe(0);
    expect(pushes.slice(fromProfile).map((p) => p.path)).toContain(`/metrics/job/mirror/instance/${hostname()}`);
  });

  it('a run stopped by SIGTERM still pushes, with status interrupted', async () => {
    const src = join(dir, 'term-src');
    await writeTree(src, Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`t/${i}.txt`, `term ${i}`])));
    const project = await newProject('metrics sigterm');
    service.emulator.setFaults('latency=60');
    try {
      const before = pushes.length;
      const r = await ferry(['mirror', src, '--project', project, '--json', '--concurrency', '1', '--pushgateway', url], {}, (child) => {
        void (async () => {
          while (child.exitCode === null && ((await service.client().projects.analytics(project)).documentCount ?? 0) < 3) await new Promise((res) => setTimeout(res, 20));
          child.kill('SIGTERM');
        })();
      });
      expect(r.code).toBe(3);
      expect(onlyJson(r)).toMatchObject({ status: 'interrupted' });
      const m = parse(pushes.slice(before).at(-1)!.body);
      expect(value(m, 'ferry_run_status', { project, status: 'interrupted' })).toBe(1);
      expect(value(m, 'ferry_run_exit_code', { project })).toBe(3);
      expect(value(m, 'ferry_items_total', { project, outcome: 'interrupted' })).toBeGreaterThan(0);
    } finally {
      service.emulator.setFaults('');
    }
  });

  it('a Pushgateway that is down is a warning in the summary; the exit code stays the job\'s', async () => {
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const project = await newProject('metrics push down');
    // With credentials in it, as a gateway behind basic auth is written: they are shown as ***, nowhere in full.
    const r = await ferry(['mirror', join(dir, 'clean-src'), '--project', project, '--json', '--pushgateway', `http://pguser:PGPASSWORD-9c1@127.0.0.1:${port}/`]);
    expect(r.code).toBe(0);
    const answer = onlyJson(r) as { status: string; problems: { key: string; reason: string }[] };
    expect(answer.status).toBe('succeeded');
    expect(answer.problems).toContainEqual({ key: '(metrics)', reason: expect.stringMatching(/^warning: the metrics were not pushed to http:\/\/\*\*\*@127\.0\.0\.1:\d+.*the job itself is not affected/) });
    expect(r.stdout + r.stderr).not.toMatch(/PGPASSWORD|pguser/);
  });

  it('an address that is not a URL is refused at start (exit 2), and so is --metrics-file on a command that runs no job', async () => {
    const project = await newProject('metrics push refused');
    const bad = await ferry(['mirror', join(dir, 'clean-src'), '--project', project, '--json', '--pushgateway', 'not a url']);
    expect(bad.code).toBe(2);
    expect(onlyJson(bad).error).toMatch(/--pushgateway not a url is not a URL/);
    const ls = await ferry(['ls', '--json', '--metrics-file', join(dir, 'ls.prom')]);
    expect(ls.code).toBe(2);
    expect(onlyJson(ls).error).toMatch(/apply to the commands that run a job/);
  });
});

describe('config/prometheus/ferry-alerts.yaml and the Grafana dashboard', () => {
  it('every series the alert rules and the dashboard name is one a real run above wrote', async () => {
    expect(written.size).toBeGreaterThan(15);
    const rules = parseYaml(await readFile(new URL('../../config/prometheus/ferry-alerts.yaml', import.meta.url), 'utf8')) as { groups: { rules: { alert: string; expr: string }[] }[] };
    const exprs = rules.groups.flatMap((g) => g.rules.map((r) => r.expr));
    expect(exprs.length).toBeGreaterThanOrEqual(5);
    const dashboard = JSON.parse(await readFile(new URL('../../config/grafana/ferry-dashboard.json', import.meta.url), 'utf8')) as { panels: { targets: { expr: string }[] }[] };
    exprs.push(...dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr)));
    const named = new Set(exprs.flatMap((e) => e.match(/\bferry_[a-z0-9_]+/g) ?? []));
    expect(named.size).toBeGreaterThan(10);
    expect([...named].filter((n) => !written.has(n))).toEqual([]);
  });
});
