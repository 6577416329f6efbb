// `ferry run FILE` for every kind of job a file may describe: a pull pulls, a playbooks backup
// backs up, a migration migrates, each through the same code as its command, against the emulator
// as a child process; and a file of an unknown kind is refused naming the kinds.
import { describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { mirroredProject, remoteFiles, useService, writeServiceProfiles } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';

const useEmulator = useService();

type Summary = { command: string; job: string; status: string; exitCode: number; counts: Record<string, number>; target: { host: string; clientId: string; profile?: string }; projects?: { target: string }[] };

async function workspace(): Promise<{ dir: string; env: Record<string, string>; tenant: string; other: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-job-files-'));
  const config = writeServiceProfiles(useEmulator(), join(dir, 'profiles.yaml'));
  const [tenant, other] = useEmulator().emulator.tenants.map((t) => t.name) as [string, string];
  return { dir, env: { FERRY_CONFIG: config }, tenant, other };
}

describe('ferry run, every kind of job file', () => {
  it('a pull job file pulls the project into its folder (relative to the file), and a rerun downloads nothing', async () => {
    const w = await workspace();
    const project = await mirroredProject(useEmulator().client(), join(w.dir, 'seed'), { 'a.txt': 'alpha', 'sub/b.txt': 'beta', 'sub/deeper/c.txt': 'gamma' }, 'pulled by a job file');
    const job = join(w.dir, 'pull.yaml');
    await writeFile(job, `job: pull\nprofile: ${w.tenant}\nproject: ${project}\ndir: copy\nfrom: sub\nstate: pull.sqlite\n`);
    const first = onlyJson(await runFerry(['run', job, '--json'], w.env)) as Summary;
    expect(first).toMatchObject({ command: 'run', job: 'pull', status: 'succeeded', exitCode: 0, counts: { downloaded: 2, failed: 0 } });
    expect(first.target).toMatchObject({ clientId: useEmulator().emulator.tenants[0]!.clientId, profile: w.tenant });
    expect(await readFile(join(w.dir, 'copy', 'b.txt'), 'utf8')).toBe('beta');
    expect(await readFile(join(w.dir, 'copy', 'deeper', 'c.txt'), 'utf8')).toBe('gamma');
    const again = onlyJson(await runFerry(['run', job, '--json'], w.env)) as Summary;
    expect(again.counts).toMatchObject({ downloaded: 0, reconciled: 0 });
    // Its dry run is a pull's.
    const plan = onlyJson(await runFerry(['run', job, '-n', '--json'], w.env)) as Summary;
    expect(plan).toMatchObject({ status: 'planned', counts: { new: 0, unchanged: 2 } });
  });

  it('a playbooks-backup job file writes one archive per playbook and its index; the next night writes none again', async () => {
    const w = await workspace();
    const client = useEmulator().client();
    const names = ['Backed up A', 'Backed up B'];
    for (const name of names) await client.playbooks.create({ name, isPrivate: false, organizationWide: true });
    const job = join(w.dir, 'backup.yaml');
    await writeFile(job, `job: playbooks-backup\nprofile: ${w.tenant}\nout: backups\nkeepDaily: 7\nstate: backup.sqlite\n`);
    const first = onlyJson(await runFerry(['run', job, '--json'], w.env)) as Summary;
    expect(first).toMatchObject({ command: 'run', job: 'playbooks-backup', status: 'succeeded', exitCode: 0 });
    expect(first.counts.written).toBeGreaterThanOrEqual(names.length);
    const index = JSON.parse(await readFile(join(w.dir, 'backups', 'index.json'), 'utf8')) as { backups: { file: string }[] };
    expect(index.backups).toHaveLength(first.counts.written!);
    const folders = await readdir(join(w.dir, 'backups'));
    for (const name of names) expect(folders.some((f) => f.startsWith(name.replace(/ /g, '-')) || f.startsWith(name)), `${name} in ${folders.join(', ')}`).toBe(true);
    const again = onlyJson(await runFerry(['run', job, '--json'], w.env)) as Summary;
    expect(again.counts).toMatchObject({ written: 0 });
    const verify = await runFerry(['playbooks', 'verify', join(w.dir, 'backups')], w.env);
    expect(verify.code, verify.stdout).toBe(0);
    // A backup has no dry run, and says so.
    const dry = await runFerry(['run', job, '--dry-run'], w.env);
    expect(dry.code).toBe(2);
    expect(dry.stderr).toContain('a playbooks-backup job has no dry run');
  });

  it('a migrate job file migrates the projects it names into the target tenant, waits for their processing, and verifies', async () => {
    const w = await workspace();
    const project = await mirroredProject(useEmulator().client(), join(w.dir, 'seed'), { 'one.txt': 'one', 'two/three.txt': 'three' }, 'migrated by a job file');
    const job = join(w.dir, 'migrate.yaml');
    await writeFile(job, `job: migrate\nfrom: ${w.tenant}\nto: ${w.other}\nprojects: [${project}]\nwait: true\ntimeout: 60s\nverify: true\nstate: migrate.sqlite\n`);
    const plan = onlyJson(await runFerry(['run', job, '--dry-run', '--json'], w.env)) as Summary;
    expect(plan).toMatchObject({ command: 'run', status: 'planned', exitCode: 0 });
    const r = await runFerry(['run', job, '--json'], w.env);
    const summary = onlyJson(r) as Summary & { verification: { differenceCount: number }; processing: { refused: number; waited: boolean } };
    expect(summary, r.stderr).toMatchObject({ command: 'run', job: 'migrate', status: 'succeeded', exitCode: 0, counts: { copied: 3 } });
    expect(summary.verification.differenceCount).toBe(0);
    expect(summary.processing).toMatchObject({ refused: 0, waited: true });
    expect(summary.target).toMatchObject({ clientId: useEmulator().emulator.tenants[1]!.clientId, profile: w.other });
    const copied = await remoteFiles(useEmulator().client({}, 1), summary.projects![0]!.target);
    expect(copied.map((d) => d.path).sort()).toEqual(['/one.txt', '/two/three.txt']);
  });

  it('a mirror job file keeps to its window (maxFiles: exit 8), pings its notify URL, and paces by its bwlimit timetable; a timetable out of order is exit 2', async () => {
    const w = await workspace();
    const { createServer } = await import('node:http');
    const { once } = await import('node:events');
    const paths: string[] = [];
    const server = createServer((req, res) => {
      paths.push(req.url ?? '');
      req.resume().on('end', () => res.end('OK'));
    }).listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const project = (await useEmulator().client().projects.create({ name: 'window job file', description: 'issue 56' })).objectIdentifier;
      await mkdir(join(w.dir, 'share'), { recursive: true });
      for (let i = 0; i < 5; i++) await writeFile(join(w.dir, 'share', `f${i}.txt`), `file ${i}`);
      const job = join(w.dir, 'window.yaml');
      const notify = `http://127.0.0.1:${(server.address() as { port: number }).port}/ping/job-secret`;
      await writeFile(job, `job: mirror\nprofile: ${w.tenant}\nsource: share\nproject: ${project}\nstate: window.sqlite\nmaxFiles: 2\nbwlimit: "00:00,50M 12:00,40M"\nnotify: ${notify}\n`);
      const r = await runFerry(['run', job, '--json'], w.env);
      expect(r.code, r.stderr).toBe(8);
      expect(onlyJson(r)).toMatchObject({ status: 'limit', counts: { uploaded: 2 }, limit: { limit: 'max-files', value: 2 } });
      expect(paths).toEqual(['/ping/job-secret/start', '/ping/job-secret']);
      expect(r.stderr + r.stdout).not.toContain('job-secret');
      await writeFile(job, `job: mirror\nprofile: ${w.tenant}\nsource: share\nproject: ${project}\nbwlimit: "19:00,off 08:00,1M"\n`);
      const bad = await runFerry(['run', job], w.env);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/bwlimit: must be a rate above 0, or a timetable/);
    } finally {
      server.close();
    }
  });

  it('a file of an unknown kind is exit 2 listing the kinds, and nothing runs', async () => {
    const w = await workspace();
    const job = join(w.dir, 'teleport.yaml');
    await writeFile(job, 'job: teleport\nsource: x\n');
    const r = await runFerry(['run', job, '--json'], w.env);
    expect(r.code).toBe(2);
    expect((onlyJson(r) as { error: string }).error).toContain('job: "teleport" is not a kind of job; one of mirror, upload, pull, playbooks-backup, migrate');
  });
});
