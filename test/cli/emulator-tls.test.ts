// `ferry emulator --tls-cert --tls-key`: the service over https, as the real one is, so that the
// paths ferry takes to it (TLS on every request; a big upload by the bulk sender on a TLS
// connection of its own) run end to end. ferry trusts its certificate only when told
// (NODE_EXTRA_CA_CERTS); a key and certificate that do not go together are refused up front. A
// mirror killed with kill -9 mid-file over TLS uploads the file once next time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Agent, request } from 'undici';
import { FERRY_BIN, killedWhen, onlyJson, runFerry } from '../helpers/cli.js';
import { remoteFiles, writeTree } from '../helpers/service.js';
import { FerryClient } from '../../src/api/index.js';
import { readIdentity } from '../../src/backends/project/identity.js';
import { useTempDirs } from '../helpers/temp.js';
import { throwawayCertificate } from '../helpers/certificates.js';

const tempDir = useTempDirs();
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');


describe('ferry emulator over https', () => {
  let child: ChildProcess;
  let ready: Record<string, any>;
  let files: { cert: string; key: string };
  let env: Record<string, string>;

  beforeAll(async () => {
    files = throwawayCertificate(await tempDir('ferry-emu-tls-'), '127.0.0.1', 'emulator');
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

  it('a mirror killed with kill -9 mid-file over TLS: the next run, from the same store and from a fresh one, uploads it once', async () => {
    const ca = await readFile(files.cert);
    const agent = new Agent({ connect: { ca } });
    const tenant = ready.tenants[0];
    const client = new FerryClient({ address: { baseUrl: ready.baseUrl, settingsUrl: ready.settingsUrl, authUrl: ready.authUrl }, credentials: { clientId: tenant.clientId, clientSecret: tenant.clientSecret, audience: ready.audience }, ca });
    const received = async () => {
      const res = await request(`${ready.baseUrl}/_emulator/traffic`, { dispatcher: agent, headers: { authorization: `Bearer ${ready.adminToken}` } });
      return ((await res.body.json()) as { bytesReceived: number }).bytesReceived;
    };
    try {
      for (const store of ['the same store', 'a fresh store']) {
        const dir = await tempDir('ferry-emu-tls-killed-');
        const content = randomBytes(96 * 1024 * 1024);
        await writeTree(join(dir, 'src'), { 'big.bin': content });
        const trusted = { ...env, NODE_EXTRA_CA_CERTS: files.cert, FERRY_FORM_ORDER: 'any' };
        const project = ready.tenants[0].assistants[0].projectIdentifier as string;
        const to = `killed over tls, ${store}`;
        const before = await received();
        const args = ['mirror', join(dir, 'src'), '--project', project, '--to', to, '--lock-ttl', '2s', '--state', join(dir, 'state.sqlite'), '--json'];
        const killed = await killedWhen(args, trusted, async () => (await received()) - before > 1024 * 1024);
        expect(killed.code, `the mirror ended before it was killed: ${killed.stdout} ${killed.stderr}`).toBeNull();
        const state = store === 'the same store' ? join(dir, 'state.sqlite') : join(dir, 'fresh.sqlite');
        const next = onlyJson(await runFerry(['mirror', join(dir, 'src'), '--project', project, '--to', to, '--wait-lock', '20s', '--state', state, '--json'], trusted));
        expect(next.counts).toMatchObject({ uploaded: 1, failed: 0 });
        const landed = (await remoteFiles(client, project)).filter((d) => d.path === `/${to}/big.bin`);
        expect(landed).toHaveLength(1);
        expect(readIdentity(landed[0]!.metadata)?.sha256).toBe(sha(content));
      }
    } finally {
      await agent.close();
      await client.close();
    }
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
    const one = throwawayCertificate(dir, '127.0.0.1', 'one');
    const other = throwawayCertificate(dir, '127.0.0.1', 'other');
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
