// `ferry emulator --tls-cert --tls-key`: the service over https, as the real one is, so that the
// paths ferry takes to it (TLS on every request; a big upload by the bulk sender on a TLS
// connection of its own) run end to end. ferry trusts its certificate only when told
// (NODE_EXTRA_CA_CERTS); a key and certificate that do not go together are refused up front.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { FERRY_BIN, onlyJson, runFerry } from '../helpers/cli.js';
import { writeTree } from '../helpers/service.js';
import { useTempDirs } from '../helpers/temp.js';

const tempDir = useTempDirs();
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A throwaway self-signed certificate for 127.0.0.1 (the system's openssl): the files' paths. */
function certificate(dir: string, name = 'emulator'): { cert: string; key: string } {
  const cert = join(dir, `${name}.pem`);
  const key = join(dir, `${name}.key`);
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  return { cert, key };
}

describe('ferry emulator over https', () => {
  let child: ChildProcess;
  let ready: Record<string, any>;
  let files: { cert: string; key: string };
  let env: Record<string, string>;

  beforeAll(async () => {
    files = certificate(await tempDir('ferry-emu-tls-'));
    child = spawn(process.execPath, [FERRY_BIN, 'emulator', '--port', '0', '--ready-json', '--tls-cert', files.cert, '--tls-key', files.key], { env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent', FERRY_LOG_LEVEL: 'warn' } });
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    const first = await Promise.race([lines.next(), once(child, 'exit').then(() => ({ value: undefined }))]);
    if (!first.value) throw new Error(`ferry emulator exited: ${stderr}`);
    ready = JSON.parse(first.value as string);
    const tenant = ready.tenants[0];
    env = { FERRY_BASE_URL: ready.baseUrl, FERRY_SETTINGS_URL: ready.settingsUrl, FERRY_AUTH_URL: ready.authUrl, FERRY_AUDIENCE: ready.audience, FERRY_CLIENT_ID: tenant.clientId, FERRY_CLIENT_SECRET: tenant.clientSecret };
  });
  afterAll(async () => {
    child.kill('SIGTERM');
    if (child.exitCode === null) await once(child, 'exit');
  });

  it('says https in every URL it gives', () => {
    expect(ready.baseUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(ready.authUrl).toBe(`${ready.baseUrl}/auth`);
    expect(ready.settingsUrl).toBe(`${ready.baseUrl}/settings`);
  });

  it('takes a mirror (a big file by the bulk sender over TLS) and gives it back to a pull, byte for byte, its certificate trusted through NODE_EXTRA_CA_CERTS', async () => {
    const dir = await tempDir('ferry-emu-tls-sync-');
    const big = randomBytes(9 * 1024 * 1024 + 5);
    const small = Buffer.from('a small file\n');
    await writeTree(join(dir, 'src'), { 'big.bin': big, 'notes/small.txt': small });
    const trusted = { ...env, NODE_EXTRA_CA_CERTS: files.cert };
    const project = ready.tenants[0].assistants[0].projectIdentifier as string;
    const up = onlyJson(await runFerry(['mirror', join(dir, 'src'), '--project', project, '--to', 'tls', '--state', join(dir, 'state.sqlite'), '--json'], trusted));
    expect(up.counts).toMatchObject({ uploaded: 2, failed: 0 });
    const down = onlyJson(await runFerry(['pull', project, join(dir, 'copy'), '--state', join(dir, 'pull.sqlite'), '--json'], trusted));
    expect(down.counts).toMatchObject({ failed: 0 });
    expect(sha(await readFile(join(dir, 'copy', 'tls', 'big.bin')))).toBe(sha(big));
    expect(await readFile(join(dir, 'copy', 'tls', 'notes', 'small.txt'))).toEqual(small);
  });

  it('is refused by a ferry not told to trust its certificate, saying why', async () => {
    const result = await runFerry(['ls'], env);
    expect(result.code).not.toBe(0);
    expect(result.stdout + result.stderr).toMatch(/self-signed|SELF_SIGNED|unable to verify/i);
    // Trusted, the same command lists the tenant's projects.
    const trusted = await runFerry(['ls'], { ...env, NODE_EXTRA_CA_CERTS: files.cert });
    expect(trusted.code, trusted.stderr).toBe(0);
  });
});

describe('ferry emulator refuses TLS files that cannot serve', () => {
  it('--tls-cert without --tls-key, a missing file, and a key that is not the certificate\'s: exit 2, naming them', async () => {
    const dir = await tempDir('ferry-emu-tls-bad-');
    const one = certificate(dir, 'one');
    const other = certificate(dir, 'other');
    const cases: [string[], RegExp][] = [
      [['--tls-cert', one.cert], /--tls-cert and --tls-key go together/],
      [['--tls-cert', join(dir, 'absent.pem'), '--tls-key', one.key], /--tls-cert .*absent\.pem.*ENOENT/],
      [['--tls-cert', one.cert, '--tls-key', other.key], /--tls-cert .*one\.pem with --tls-key .*other\.key.*mismatch/],
    ];
    for (const [flags, said] of cases) {
      const result = await runFerry(['emulator', '--port', '0', ...flags], {});
      expect(result.code, flags.join(' ')).toBe(2);
      expect(result.stderr).toMatch(said);
    }
  });
});
