// `ferry mirror` as a user runs it: a child process, exit codes, and an unreadable file.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { chmod, mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { remoteFiles, startService, writeTree, type Service } from '../helpers/service.js';
import { onlyJson, runFerry, type CliResult } from '../helpers/cli.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';
import { mirrorJobKey } from '../../jobs/mirror.js';

let service: Service;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.close());

/** Root reads any file, so the unreadable-file case runs the CLI as an unprivileged user. */
const NOBODY = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};

function ferry(args: string[], env: Record<string, string>, onSpawn?: (child: ChildProcess) => void): Promise<CliResult> {
  return runFerry(args, env, onSpawn, NOBODY);
}

async function workspace(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-cli-mirror-'));
  await chmod(dir, 0o777);
  return dir;
}

describe('ferry mirror (CLI)', () => {
  it('records an unreadable file as failed with its reason, uploads the rest, and exits 1', async () => {
    const dir = await workspace();
    const src = join(dir, 'src');
    await writeTree(src, { 'ok.txt': 'fine', 'sub/also-ok.txt': 'fine too', 'secret.txt': 'hidden' });
    await chmod(src, 0o755);
    await chmod(join(src, 'sub'), 0o755);
    await chmod(join(src, 'ok.txt'), 0o644);
    await chmod(join(src, 'sub', 'also-ok.txt'), 0o644);
    await chmod(join(src, 'secret.txt'), 0o000);
    const client = service.client();
    const project = (await client.projects.create({ name: 'cli', description: 'unreadable' })).objectIdentifier;

    const r = await ferry(['mirror', src, '--project', project, '--state', join(dir, 'state.sqlite'), '--json'], service.env());
    expect(r.code, r.stderr).toBe(1);
    const summary = onlyJson(r) as any;
    expect(summary.status).toBe('failed');
    expect(summary.counts).toMatchObject({ discovered: 3, uploaded: 2, failed: 1 });
    expect(summary.errors).toHaveLength(1);
    expect(summary.errors[0].key).toBe('secret.txt');
    expect(summary.errors[0].error).toContain('EACCES');
    expect((await remoteFiles(client, project)).map((f) => f.path).sort()).toEqual(['/ok.txt', '/sub/also-ok.txt']);

    // The run is on record, with its problem, for `jobs list` and `jobs show`.
    const listed = await ferry(['jobs', 'list', '--state', join(dir, 'state.sqlite')], service.env());
    expect(listed.stdout).toMatch(/^\s+1 {2}mirror {3}failed {6}.* uploaded 2 unchanged 0 skipped 0 failed 1 reconciled 0/m);
    const shown = (onlyJson(await ferry(['jobs', 'show', '1', '--state', join(dir, 'state.sqlite'), '--json'], service.env())) as any).run;
    expect(shown).toMatchObject({ id: 1, job: 'mirror', status: 'failed', params: { source: src, project } });
    expect(shown.errors[0]).toMatch(/^secret\.txt: cannot read .*EACCES/);
    const missing = await ferry(['jobs', 'show', '99', '--state', join(dir, 'state.sqlite')], service.env());
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no run 99 in this checkpoint store');
  });

  it('exits 2 naming a missing source, and 4 when another run holds the lock', async () => {
    const dir = await workspace();
    const env = service.env();
    const missing = await ferry(['mirror', join(dir, 'nope'), '--project', service.project, '--state', join(dir, 's.sqlite')], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`source folder ${join(dir, 'nope')} cannot be read: ENOENT`);

    // Another live process (this test) holds the job's lock.
    const src = join(dir, 'src');
    await writeTree(src, { 'a.txt': 'a' });
    const state = join(dir, 'lock.sqlite');
    const store = new SqliteCheckpointStore(state);
    const jobKey = mirrorJobKey(service.emulator.baseUrl, { source: src, project: service.project });
    const holder = store.startRun({ job: 'mirror', jobKey, params: {}, uploadId: null });
    expect(store.acquireLock(jobKey, 'this-test', holder.id)).toMatchObject({ ok: true });
    await chmod(state, 0o666);
    await chmod(`${state}-wal`, 0o666).catch(() => undefined);
    await chmod(`${state}-shm`, 0o666).catch(() => undefined);
    const refused = await ferry(['mirror', src, '--project', service.project, '--state', state], env);
    expect(refused.code, refused.stderr).toBe(4);
    expect(refused.stderr).toContain(`another run (${holder.id}, pid ${process.pid}`);
    expect(refused.stderr).toContain('is already working on this job; not starting a second one');
    store.releaseLock(jobKey, 'this-test');
    store.close();
  });

  it('on SIGINT stops taking files, records the uploads in flight, exits 3, and a rerun finishes the job exactly once', async () => {
    const dir = await workspace();
    const src = join(dir, 'src');
    const files: Record<string, string> = {};
    for (let i = 0; i < 120; i++) files[`f${i}.txt`] = `file ${i}`;
    await writeTree(src, files);
    await chmod(src, 0o755);
    for (const name of Object.keys(files)) await chmod(join(src, name), 0o644);
    const client = service.client();
    const project = (await client.projects.create({ name: 'sigint', description: 'interrupted' })).objectIdentifier;
    const count = async () => (await client.documents.list(project).page(1, 1)).totalCount ?? 0;
    const args = ['mirror', src, '--project', project, '--state', join(dir, 'state.sqlite'), '--concurrency', '2', '--json'];
    service.emulator.setFaults({ latencyMs: 10 });
    const interrupted = await ferry(args, service.env(), (child) => {
      const poll = async () => {
        while ((await count()) < 10) await new Promise((r) => setTimeout(r, 5));
        child.kill('SIGINT');
      };
      void poll();
    });
    service.emulator.setFaults({});
    expect(interrupted.code, interrupted.stderr).toBe(3);
    const first = onlyJson(interrupted) as any;
    expect(first.status).toBe('interrupted');
    expect(first.counts.uploaded).toBeLessThan(120);
    // Whatever was in flight when the signal came was let finish and recorded.
    expect(await count()).toBe(first.counts.uploaded);

    const rerun = await ferry(args, service.env());
    expect(rerun.code, rerun.stderr).toBe(0);
    const second = onlyJson(rerun) as any;
    expect(second.counts.uploaded + first.counts.uploaded).toBe(120);
    const remote = await remoteFiles(client, project);
    expect(new Set(remote.map((d) => d.path)).size).toBe(120);
    expect(remote).toHaveLength(120);
  });
});
