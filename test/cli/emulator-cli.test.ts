// `ferry emulator` as users start it: one ready line on stdout (JSON with --ready-json), logs on stderr only,
// state kept across a restart with --data, and a clean stop on SIGTERM.
import { describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { FerryClient } from '../../src/api/index.js';
import { inTerminal } from '../helpers/pty.js';

const bin = fileURLToPath(new URL('../../bin/ferry.js', import.meta.url));

interface Started {
  child: ChildProcess;
  ready: Record<string, any>;
  stdout: string[];
  stderr: () => string;
}

async function startCli(args: string[], env: Record<string, string> = {}): Promise<Started> {
  const child = spawn(process.execPath, [bin, 'emulator', '--port', '0', '--ready-json', ...args], { env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent', FERRY_LOG_LEVEL: 'info', ...env } });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const lines = createInterface({ input: child.stdout! });
  const stdout: string[] = [];
  lines.on('line', (l) => stdout.push(l));
  while (stdout.length === 0) {
    const [exited] = await Promise.race([once(lines, 'line').then(() => [false]), once(child, 'exit').then(() => [true])]);
    if (exited) throw new Error(`ferry emulator exited: ${stderr}`);
  }
  return { child, ready: JSON.parse(stdout[0]!), stdout, stderr: () => stderr };
}

async function stop(s: Started): Promise<number | null> {
  s.child.kill('SIGTERM');
  const [code] = await once(s.child, 'exit');
  return code as number | null;
}

function clientOf(ready: Record<string, any>): FerryClient {
  const t = ready.tenants[0];
  return new FerryClient({
    address: { baseUrl: ready.baseUrl, settingsUrl: ready.settingsUrl, authUrl: ready.authUrl },
    credentials: { clientId: t.clientId, clientSecret: t.clientSecret, audience: ready.audience },
  });
}

describe('ferry emulator (CLI)', () => {
  it('prints one JSON line when ready (--ready-json), serves the API, keeps state with --data, and stops on SIGTERM', async () => {
    const data = await mkdtemp(join(tmpdir(), 'ferry-emu-cli-'));
    const first = await startCli(['--data', data]);
    expect(Object.keys(first.ready).sort()).toEqual(['adminToken', 'audience', 'authUrl', 'baseUrl', 'settingsUrl', 'tenants']);
    expect(first.ready.tenants).toHaveLength(2);
    expect(new Set(first.ready.tenants.map((t: { region: string }) => t.region)).size).toBe(2);
    for (const t of first.ready.tenants) {
      expect(Object.keys(t)).toEqual(expect.arrayContaining(['name', 'region', 'clientId', 'clientSecret', 'readOnlyClientId', 'readOnlyClientSecret', 'organizationMetadata', 'assistants']));
    }
    const client = clientOf(first.ready);
    const project = await client.projects.create({ name: 'kept across restarts', description: 'cli' });
    await client.close();
    expect(await stop(first)).toBe(0);
    // stdout carried exactly the ready line; the logs went to stderr.
    expect(first.stdout).toHaveLength(1);
    expect(first.stderr()).toContain('"level"');
    expect(first.stderr()).not.toContain(first.ready.tenants[0].clientSecret);

    const second = await startCli(['--data', data]);
    const again = clientOf(second.ready);
    expect((await again.projects.get(project.objectIdentifier)).name).toBe('kept across restarts');
    await again.close();
    expect(await stop(second)).toBe(0);
  });

  it('names a bad --faults spec and a bad --seed file, with exit code 2', async () => {
    const faults = spawn(process.execPath, [bin, 'emulator', '--port', '0', '--faults', '429=2'], { env: { PATH: process.env.PATH ?? '' } });
    let err = '';
    faults.stderr.on('data', (d) => (err += d));
    const [code] = await once(faults, 'exit');
    expect(code).toBe(2);
    expect(err).toContain('--faults');
    expect(err).toContain('429');

    const dir = await mkdtemp(join(tmpdir(), 'ferry-seed-'));
    await writeFile(join(dir, 'seed.json'), '{"tenants": "nope"}');
    const seeded = spawn(process.execPath, [bin, 'emulator', '--port', '0', '--seed', join(dir, 'seed.json')], { env: { PATH: process.env.PATH ?? '' } });
    let err2 = '';
    seeded.stderr.on('data', (d) => (err2 += d));
    const [code2] = await once(seeded, 'exit');
    expect(code2).toBe(2);
    expect(err2).toContain('--seed');
    expect(err2).toContain('tenants');
  });

  it('--max-page-size caps every page silently (totalCount stays true), and a bad value is exit 2', async () => {
    const started = await startCli(['--max-page-size', '3']);
    const client = clientOf(started.ready);
    try {
      for (let i = 0; i < 5; i++) await client.projects.create({ name: `capped ${i}`, description: 'cap' });
      const page = await client.projects.list({}, { pageSize: 100 }).page(1);
      expect(page.items).toHaveLength(3);
      expect(page.totalCount).toBeGreaterThanOrEqual(5);
      let all = 0;
      for await (const _ of client.projects.list({}, { pageSize: 100 })) all++;
      expect(all).toBe(page.totalCount);
    } finally {
      await client.close();
      expect(await stop(started)).toBe(0);
    }
    const bad = spawn(process.execPath, [bin, 'emulator', '--port', '0', '--max-page-size', '0'], { env: { PATH: process.env.PATH ?? '' } });
    let err = '';
    bad.stderr.on('data', (d) => (err += d));
    const [code] = await once(bad, 'exit');
    expect(code).toBe(2);
    expect(err).toContain('--max-page-size must be a whole number of at least 1, not "0"');
  });
});

describe('ferry emulator --write-profiles', () => {
  it('writes a ready profile per client, secrets apart, and never replaces a file it did not write', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-emu-profiles-'));
    const file = join(dir, 'ferry.yaml');
    const s = await startCli(['--write-profiles', file]);
    try {
      const text = await readFile(file, 'utf8');
      // No secret in the config file itself: each is in a file of its own, readable by its owner alone.
      for (const t of s.ready.tenants) expect(text).not.toContain(t.clientSecret);
      const secretFile = join(`${file}.secrets`, `${s.ready.tenants[0].clientId}.secret`);
      expect((await readFile(secretFile, 'utf8')).trim()).toBe(s.ready.tenants[0].clientSecret);
      expect((await stat(secretFile)).mode & 0o777).toBe(0o600);
      const env = { PATH: process.env.PATH ?? '', HOME: '/nonexistent', FERRY_LOG_LEVEL: 'silent' };
      const run = (args: string[]) => new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const c = spawn(process.execPath, [bin, '--config', file, ...args], { env });
        let stdout = '';
        let stderr = '';
        c.stdout.on('data', (d) => (stdout += d));
        c.stderr.on('data', (d) => (stderr += d));
        c.on('close', (code) => resolve({ code, stdout, stderr }));
      });
      // The default profile and a named read-only one both work at once.
      const ls = await run(['ls']);
      expect(ls.code, ls.stderr).toBe(0);
      expect(ls.stdout).toContain(s.ready.tenants[0].assistants[0].projectIdentifier);
      const reader = await run(['-p', `${s.ready.tenants[1].name}-reader`, 'ls']);
      expect(reader.code, reader.stderr).toBe(0);
      expect(reader.stdout).toContain(s.ready.tenants[1].assistants[0].projectIdentifier);
      // A profile that is not there: the ones that are, named.
      const missing = await run(['-p', 'nope', 'ls']);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain(`its profiles: ${s.ready.tenants[0].name}, ${s.ready.tenants[0].name}-reader`);
    } finally {
      await stop(s);
    }
    // Its own file is replaced on the next start; a user's file never is.
    await stop(await startCli(['--write-profiles', file]));
    const mine = join(dir, 'mine.yaml');
    await writeFile(mine, 'profiles: {}\n');
    const refused = spawn(process.execPath, [bin, 'emulator', '--port', '0', '--write-profiles', mine], { env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent' } });
    let err = '';
    refused.stderr.on('data', (d) => (err += d));
    const [code] = await once(refused, 'exit');
    expect(code).toBe(2);
    expect(err).toContain('was not written by ferry emulator');
    expect(await readFile(mine, 'utf8')).toBe('profiles: {}\n');
  });

  it('gives the control API a token of its own (made up, --admin-token or FERRY_EMULATOR_ADMIN_TOKEN), never logs it, and serves none with --no-control', async () => {
    const call = async (ready: Record<string, any>, token?: string) =>
      (await fetch(`${ready.baseUrl}/_emulator/traffic`, token ? { headers: { authorization: `Bearer ${token}` } } : {})).status;
    const made = await startCli(['--log-level', 'debug']);
    expect(made.ready.adminToken).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(await call(made.ready, made.ready.adminToken)).toBe(200);
    expect(await call(made.ready)).toBe(401);
    await fetch(`${made.ready.baseUrl}/_emulator/reset`, { method: 'POST', headers: { authorization: `Bearer ${made.ready.adminToken}` } });
    await fetch(`${made.ready.baseUrl}/_emulator/reset`, { method: 'POST', headers: { authorization: 'Bearer wrong-token' } });
    expect(await stop(made)).toBe(0);
    expect(made.stderr()).not.toContain(made.ready.adminToken);

    const flagged = await startCli(['--admin-token', 'flag-admin-token-1']);
    expect(flagged.ready.adminToken).toBe('flag-admin-token-1');
    expect(await call(flagged.ready, 'flag-admin-token-1')).toBe(200);
    await stop(flagged);
    const fromEnv = await startCli([], { FERRY_EMULATOR_ADMIN_TOKEN: 'env-admin-token-2' });
    expect(await call(fromEnv.ready, 'env-admin-token-2')).toBe(200);
    await stop(fromEnv);

    const off = await startCli(['--no-control']);
    expect(off.ready.adminToken).toBeUndefined();
    expect((await fetch(`${off.ready.baseUrl}/_emulator/health`)).status).toBe(404);
    await stop(off);

    const bad = spawn(process.execPath, [bin, 'emulator', '--port', '0', '--admin-token', 'has a space'], { env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent' } });
    let err = '';
    bad.stderr.on('data', (d) => (err += d));
    const [code] = await once(bad, 'exit');
    expect(code).toBe(2);
    expect(err).toContain('--admin-token');
    expect(err).not.toContain('has a space');
  });

  it('without --ready-json, says it is ready in one plain line with no secret, and logs nothing below a warning', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-emu-plain-'));
    const file = join(dir, 'profiles.yaml');
    const child = spawn(process.execPath, [bin, 'emulator', '--port', '0', '--write-profiles', file], { env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent' } });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
    expect(line).toMatch(new RegExp(`^ferry emulator: ready at http://127\\.0\\.0\\.1:\\d+, tenants contoso \\(uk\\), fabrikam \\(us\\); profiles contoso, contoso-reader, fabrikam, fabrikam-reader in ${file.replace(/[.]/g, '\\.')} \\(export FERRY_CONFIG=.*\\); control API at http://127\\.0\\.0\\.1:\\d+/_emulator/ \\(its token: --admin-token, or adminToken in --ready-json\\); Ctrl-C or SIGTERM stops it$`));
    expect(line).not.toMatch(/secret/i);
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
    expect(stderr).toBe('');
  });

  it('in a terminal, says at once that it is starting, before the service loads, then that it is ready', async () => {
    const run = inTerminal(200, ['emulator', '--port', '0'], {});
    await run.waitFor(/ready at http/);
    run.type('\x03');
    const { output } = await run.done;
    const starting = output.indexOf('ferry emulator: starting (loading the service and building its state in memory)');
    expect(starting).toBeGreaterThanOrEqual(0);
    expect(starting).toBeLessThan(output.indexOf('ferry emulator: ready at'));
  });

  it('started with `npx ferry emulator &`, stops with npm\'s wrapper, even one killed with SIGKILL (which it cannot pass on)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-emu-npx-'));
    const repo = fileURLToPath(new URL('../..', import.meta.url));
    // The README's way: in the background under npx, its pid, then kill.
    const script = `npx ferry emulator --port 0 --ready-json > ${dir}/ready.json 2>${dir}/err.log &\nwrapper=$!\nfor i in $(seq 1 600); do [ -s ${dir}/ready.json ] && break; sleep 0.1; done\nkill -KILL $wrapper\nwait $wrapper 2>/dev/null\ncat ${dir}/ready.json`;
    const shell = spawn('bash', ['-c', script], { cwd: repo, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root' } });
    let out = '';
    shell.stdout.on('data', (d) => (out += d));
    await once(shell, 'exit');
    const ready = JSON.parse(out.trim()) as { baseUrl: string };
    // The emulator itself, found by the port it listens on, is gone: its address stops answering.
    let answering = true;
    for (let i = 0; i < 200 && answering; i++) {
      answering = await fetch(`${ready.baseUrl}/settings/health`).then(() => true, () => false);
      if (answering) await new Promise((r) => setTimeout(r, 50));
    }
    expect(answering).toBe(false);
  });
});
