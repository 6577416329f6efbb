// A setup that cannot work is one line on stderr naming the file and what to do, exit 2, and
// nothing written: neither on the service nor in a checkpoint store.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmod, mkdir, mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runFerry } from '../helpers/cli.js';
import { startService, type Service } from '../helpers/service.js';

let service: Service;
let dir: string;
let src: string;
/** Root reads and writes every file: the permission cases run as nobody. */
const nobody = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};

beforeAll(async () => {
  service = await startService();
  dir = await mkdtemp(join(tmpdir(), 'ferry-setup-'));
  await chmod(dir, 0o755);
  src = join(dir, 'src');
  await mkdir(src);
  await writeFile(join(src, 'a.txt'), 'a');
  await chmod(src, 0o755);
});
afterAll(() => service.close());

async function documents(project: string): Promise<number> {
  return (await service.client().projects.analytics(project)).documentCount ?? 0;
}

function oneLine(stderr: string): string {
  const lines = stderr.trim().split('\n');
  expect(lines, stderr).toHaveLength(1);
  return lines[0] as string;
}

describe('setup errors', () => {
  it('a config file that is a folder', async () => {
    const folder = join(dir, 'config.yaml');
    await mkdir(folder);
    const r = await runFerry(['ls'], { FERRY_CONFIG: folder });
    expect(r.code).toBe(2);
    expect(oneLine(r.stderr)).toBe(`ferry: cannot read config file ${folder}: it is a folder; give the path of a YAML file (--config FILE or FERRY_CONFIG)`);
  });

  it('a profile with its secret written inline: refused without echoing it, nothing sent', async () => {
    const t = service.emulator.tenants[0]!;
    const inline = join(dir, 'inline-secret.yaml');
    await writeFile(inline, `profiles:\n  inline:\n    baseUrl: ${service.emulator.baseUrl}\n    settingsUrl: ${service.emulator.settingsUrl}\n    authUrl: ${service.emulator.authUrl}\n    audience: ${service.emulator.audience}\n    clientId: ${t.clientId}\n    clientSecret: ${t.clientSecret}\n`);
    const state = join(dir, 'inline-state');
    const r = await runFerry(['-p', 'inline', 'mirror', src, '--project', service.project, '--to', 'inline'], { FERRY_CONFIG: inline, FERRY_STATE_DIR: state });
    expect(r.code).toBe(2);
    const line = oneLine(r.stderr);
    expect(line).toContain(inline);
    expect(line).toMatch(/profiles\.inline\.clientSecret: secrets are not accepted in a profile; use FERRY_CLIENT_SECRET, clientSecretEnv or clientSecretFile/);
    expect(line).not.toContain(t.clientSecret);
    expect(await readdir(dir)).not.toContain('inline-state');
  });

  it('--state pointing at a read-only file, and at a folder', async () => {
    const project = (await service.client().projects.create({ name: 'read-only state', description: '' })).objectIdentifier;
    const ro = join(dir, 'ro.sqlite');
    await writeFile(ro, '');
    await chmod(ro, 0o444);
    const r = await runFerry(['mirror', src, '--project', project, '--state', ro], service.env(), undefined, nobody);
    expect(r.code).toBe(2);
    expect(oneLine(r.stderr)).toBe(`ferry: cannot open the checkpoint store ${ro}: the file is read-only; point FERRY_STATE_DIR (or --state FILE) at a place ferry can write`);
    const folder = join(dir, 'state-folder');
    await mkdir(folder);
    const f = await runFerry(['mirror', src, '--project', project, '--state', folder], service.env());
    expect(f.code).toBe(2);
    expect(oneLine(f.stderr)).toContain(`cannot open the checkpoint store ${folder}: it is a folder, not a file`);
    expect(await documents(project)).toBe(0);
  });
});
