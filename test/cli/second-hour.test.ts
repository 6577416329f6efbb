// A newcomer's second hour, each stumble tried as a new user meets it: `ferry` as a child process.
import { describe, expect, it } from 'vitest';
import { mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:http';
import { once } from 'node:events';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { useService, writeTree } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';

const useEmulator = useService();

describe("a newcomer's second hour", () => {
  it('`ferry backup` points to `ferry playbooks backup`', async () => {
    const r = await runFerry(['backup'], useEmulator().env());
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown command 'backup'");
    expect(r.stderr).toContain('Did you mean ferry playbooks backup?');
  });

  it('a missing .zip or .tar.gz is called a file, not a folder', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-second-hour-'));
    for (const name of ['export.zip', 'export.tar.gz']) {
      const r = await runFerry(['mirror', join(dir, name), '--project', useEmulator().project, '--state', join(dir, 's.sqlite')], useEmulator().env());
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`source file ${join(dir, name)} cannot be read: ENOENT`);
      expect(r.stderr).not.toContain('folder');
    }
  });

  it('an unreachable service is said at its first refused connection, with how long ferry goes on trying', async () => {
    // A port that was just free: nothing listens there.
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as AddressInfo).port;
    server.close();
    await once(server, 'close');
    const base = `http://127.0.0.1:${port}`;
    const env = { ...useEmulator().env(), FERRY_BASE_URL: base, FERRY_SETTINGS_URL: base, FERRY_AUTH_URL: base, FERRY_LOG_LEVEL: 'warn' };
    const r = await runFerry(['ls'], env);
    expect(r.code).not.toBe(0);
    const first = r.stderr.split('\n')[0] as string;
    expect(first).toContain(`cannot reach 127.0.0.1:${port}: ECONNREFUSED; retrying for up to 4 s`);
    // Said at the first failure, not after the retries: against a host that takes each connection
    // and drops it at once, connections go on coming after the message. One written only at the
    // end would have none after it. (Counted, not timed: the retries' waits are jittered.)
    let connections = 0;
    let whenSaid = -1;
    const dropping = createNetServer((socket) => {
      connections++;
      socket.destroy();
    });
    dropping.listen(0, '127.0.0.1');
    await once(dropping, 'listening');
    const dropBase = `http://127.0.0.1:${(dropping.address() as AddressInfo).port}`;
    try {
      const dropped = await runFerry(['ls'], { ...env, FERRY_BASE_URL: dropBase, FERRY_SETTINGS_URL: dropBase, FERRY_AUTH_URL: dropBase }, (child) => child.stderr?.once('data', () => (whenSaid = connections)));
      expect(dropped.stderr.split('\n')[0]).toContain('cannot reach 127.0.0.1:');
      expect(whenSaid).toBeGreaterThan(0);
      expect(connections).toBeGreaterThan(whenSaid);
    } finally {
      dropping.close();
    }
    // Once, not at every retry.
    expect(r.stderr.split('cannot reach').length - 1).toBe(1);
  });

  it('a host that takes the connection and never answers (a firewall that drops it looks the same) is said within seconds, not at the timeout', async () => {
    // Accepts every connection and writes nothing: no refusal ever comes to be reported.
    const sockets: Socket[] = [];
    const silent = createNetServer((socket) => void sockets.push(socket));
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    const port = (silent.address() as AddressInfo).port;
    const base = `http://127.0.0.1:${port}`;
    const env = { ...useEmulator().env(), FERRY_BASE_URL: base, FERRY_SETTINGS_URL: base, FERRY_AUTH_URL: base, FERRY_LOG_LEVEL: 'warn' };
    let whenSaid: { connections: number; firstOpen: boolean } | undefined;
    try {
      // Stopped once it has spoken: the point is when the first word comes, not how the run ends.
      const r = await runFerry(['ls'], env, (child) => child.stderr?.once('data', () => {
        whenSaid = { connections: sockets.length, firstOpen: sockets[0] !== undefined && !sockets[0].destroyed };
        child.kill('SIGTERM');
      }));
      expect(r.stderr.split('\n')[0]).toContain(`no answer from 127.0.0.1:${port} after 1.5 s; still trying`);
      // Said while the first attempt still waits on its one connection: not at the request's own
      // timeout (30 s), which would have closed it and tried again. (Counted, not timed.)
      expect(whenSaid).toEqual({ connections: 1, firstOpen: true });
    } finally {
      for (const s of sockets) s.destroy();
      silent.close();
    }
  });

  it('`ferry mirror` with nothing named says what is missing in the order it is typed: the source first', async () => {
    const bare = await runFerry(['mirror'], useEmulator().env());
    expect(bare.code).toBe(2);
    expect(bare.stderr.split('\n')[0]).toMatch(/^error: missing required argument 'source' \(a folder, or a zip or tar .*\), then required option '--project <id>' not specified$/);
    // A flag's value is not taken for the source.
    expect((await runFerry(['mirror', '--to', 'Inbox'], useEmulator().env())).stderr).toContain("missing required argument 'source'");
    // With the source given, the flag is what is missing.
    expect((await runFerry(['mirror', '/tmp'], useEmulator().env())).stderr.split('\n')[0]).toBe("error: required option '--project <id>' not specified");
  });

  it('an upload whose files processing refused says "failed" in its headline, as its exit code (1) does', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-second-hour-upload-'));
    await writeTree(join(dir, 'src'), { 'ok.txt': 'ok', 'blob.bin': 'not indexable' });
    const client = useEmulator().client();
    const project = (await client.projects.create({ name: 'headline', description: 'issue 52' })).objectIdentifier;
    const playbook = (await client.playbooks.create({ name: 'headline', isPrivate: false, organizationWide: true })).objectIdentifier;
    const r = await runFerry(['upload', join(dir, 'src'), '--project', project, '--playbook', playbook, '--state', join(dir, 's.sqlite')], useEmulator().env());
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^upload run 1: failed in /m);
    expect(r.stdout).not.toMatch(/^upload run 1: succeeded/m);
  });

  it('--project NAME: a unique name is its project (the summary gives the id), two of one name are exit 2 listing both, an unknown one points to ferry ls', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-second-hour-name-'));
    await writeTree(join(dir, 'share'), { 'a.txt': 'a' });
    const client = useEmulator().client();
    const unique = `Onboarding ${dir}`;
    const id = (await client.projects.create({ name: unique, description: 'by name' })).objectIdentifier;
    const r = await runFerry(['mirror', join(dir, 'share'), '--project', unique, '--state', join(dir, 's.sqlite'), '--json'], useEmulator().env());
    expect(r.code, r.stderr).toBe(0);
    expect(onlyJson(r)).toMatchObject({ project: id, counts: { uploaded: 1 } });
    const check = await runFerry(['check', join(dir, 'share'), '--project', unique, '--json'], useEmulator().env());
    expect(onlyJson(check)).toMatchObject({ project: id, matching: 1 });
    // Every command that takes a project takes its name: pull, report, watch, lock.
    const pulled = await runFerry(['pull', unique, join(dir, 'copy'), '--state', join(dir, 'p.sqlite'), '--json'], useEmulator().env());
    expect(onlyJson(pulled), pulled.stderr).toMatchObject({ job: 'pull', counts: { downloaded: 1 } });
    const report = onlyJson(await runFerry(['report', '--run', 'last', '--project', unique, '--state', join(dir, 's.sqlite'), '--json'], useEmulator().env())) as { report: { project: string } };
    expect(report.report.project).toBe(id);
    expect(onlyJson(await runFerry(['watch', '--run', 'last', '--project', unique, '--state', join(dir, 's.sqlite'), '--json'], useEmulator().env()))).toMatchObject({ next: expect.stringContaining(`--project ${id}`) });
    expect(onlyJson(await runFerry(['lock', 'status', '--project', unique, '--json'], useEmulator().env()))).toMatchObject({ project: id, holders: [] });

    const twice = `Twice ${dir}`;
    const a = (await client.projects.create({ name: twice, description: 'one' })).objectIdentifier;
    const b = (await client.projects.create({ name: twice, description: 'two' })).objectIdentifier;
    const ambiguous = await runFerry(['mirror', join(dir, 'share'), '--project', twice, '--state', join(dir, 's.sqlite')], useEmulator().env());
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toContain(`names 2 projects`);
    expect(ambiguous.stderr).toContain(a);
    expect(ambiguous.stderr).toContain(b);

    const unknown = await runFerry(['mirror', join(dir, 'share'), '--project', unique.toUpperCase(), '--state', join(dir, 's.sqlite')], useEmulator().env());
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('`ferry ls` lists them with their ids');
    expect(unknown.stderr).toContain(`did you mean "${unique}"?`);
  });

  it('help that teaches: commands grouped by task, three examples, required options marked', async () => {
    const top = await runFerry(['--help'], {});
    expect(top.code).toBe(0);
    const headings = top.stdout.split('\n').filter((l) => /^[A-Z][a-z ]+:$/.test(l));
    expect(headings).toEqual(['Usage:', 'Options:', 'Move content:', 'Look around:', 'Playbooks:', 'Operate:', 'Examples:'].filter((h) => h !== 'Usage:'));
    // Each group holds its commands, mirror first.
    const group = (heading: string) => top.stdout.split(`${heading}\n`)[1]!.split('\n\n')[0]!.split('\n').filter((l) => /^  \S/.test(l)).map((l) => l.trim().split(' ')[0]);
    expect(group('Move content:')).toEqual(['mirror', 'upload', 'pull', 'migrate', 'run']);
    expect(group('Playbooks:')).toEqual(['playbooks']);
    expect(group('Operate:')).toContain('help');
    expect(top.stdout.match(/^  \$ ferry /gm)).toHaveLength(3);
    // Every line fits an 80-column terminal.
    expect(top.stdout.split('\n').filter((l) => l.length > 80)).toEqual([]);
    const mirror = await runFerry(['mirror', '--help'], {});
    expect(mirror.stdout.replace(/\s+/g, ' ')).toContain('--project <id> the project the documents go to: its id, or its name (required)');
    expect(mirror.stdout).not.toMatch(/--to <[^>]+>.*\(required\)/);
    const migrate = await runFerry(['migrate', '--help'], {});
    expect(migrate.stdout.match(/\(required\)/g)).toHaveLength(2);
  });

  it('-n is --dry-run', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-second-hour-n-'));
    await writeTree(join(dir, 'share'), { 'a.txt': 'a' });
    const r = await runFerry(['mirror', join(dir, 'share'), '--project', useEmulator().project, '--to', 'second-hour', '--state', join(dir, 's.sqlite'), '-n'], useEmulator().env());
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('plan (nothing was changed)');
    expect(r.stdout).toContain('upload, new: a.txt');
  });
});
