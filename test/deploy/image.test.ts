// The image, built and run (issue 78): both targets of the Dockerfile built with `docker build`
// from this tree on a base made locally (deploy/image/local-base.sh: no image can be pulled here),
// then run, every container on the host network (loopback only; the daemon has no bridge):
//   - the emulator image turns healthy by its HEALTHCHECK and serves its API;
//   - the ferry image, read-only, as user 65532, its state in a named volume, mirrors a bind-mounted
//     tree into it and pulls it back byte for byte;
//   - `docker stop` during a mirror: tini passes SIGTERM, ferry exits 3, and the next run with the
//     same volume finishes with every file once;
//   - a state volume owned by another user: exit 2, one line naming it;
//   - its OCI annotations and its SBOM.
// Run by `npm run test:image` (vitest.image.config.ts), not by `npm test`: docs/scale-out.md says
// why (CI's time). Where no Docker engine answers, it fails under CI=true, else is skipped saying so.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { chmod, chown, mkdir, mkdtemp, readFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FerryClient } from '../../src/api/index.js';
import { numberedTree, pathsOnce } from '../helpers/runs.js';
import { remoteFiles } from '../helpers/service.js';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../..', import.meta.url));
const TAG = randomBytes(4).toString('hex');
const FERRY = `ferry:image-test-${TAG}`;
const EMULATOR = `ferry-emulator:image-test-${TAG}`;
const IMAGE_UID = 65532;

/** `docker ARGS` (the legacy builder: BuildKit would pull its frontend image, which cannot be reached). */
async function docker(args: string[], opts: { timeoutMs?: number } = {}): Promise<{ stdout: string; stderr: string }> {
  return run('docker', args, { env: { ...process.env, DOCKER_BUILDKIT: '0' }, maxBuffer: 64 << 20, timeout: opts.timeoutMs ?? 0 });
}

/** Why no Docker engine can be used here, or undefined. */
async function unavailable(): Promise<string | undefined> {
  try {
    await docker(['info', '--format', '{{.ServerVersion}}']);
    return undefined;
  } catch (err) {
    return `no Docker engine answers (${(err as Error).message.split('\n')[0]}): start dockerd --bridge=none --iptables=false as root`;
  }
}

let why: string | undefined;
let revision: string;
let dir: string;
let emulatorId: string;
let ready: { baseUrl: string; settingsUrl: string; authUrl: string; audience: string; tenants: { clientId: string; clientSecret: string; assistants: { projectIdentifier: string }[] }[]; adminToken: string };
const containers: string[] = [];
const volumes: string[] = [];

beforeAll(async () => {
  why = await unavailable();
  if (why) {
    if (process.env.CI) throw new Error(why);
    return;
  }
  dir = await mkdtemp(join(tmpdir(), 'ferry-image-'));
  await chmod(dir, 0o755);
  // The base the Dockerfile names, made here when it is not.
  const base = `node:${/ARG NODE_VERSION=(\S+)/.exec(await readFile(join(repo, 'Dockerfile'), 'utf8'))![1]}-bookworm-slim`;
  if (!(await docker(['images', '-q', base])).stdout.trim()) await run('sh', [join(repo, 'deploy/image/local-base.sh'), base.split(':')[1]!.split('-')[0]!], { maxBuffer: 16 << 20 });
  revision = (await run('git', ['rev-parse', 'HEAD'], { cwd: repo })).stdout.trim();
  await docker(['build', '--network', 'host', '--build-arg', `REVISION=${revision}`, '-t', FERRY, repo], { timeoutMs: 900_000 });
  await docker(['build', '--network', 'host', '--target', 'emulator', '-t', EMULATOR, repo], { timeoutMs: 900_000 });
  // The emulator image on a free loopback port; its health check told where to look.
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  emulatorId = (await docker(['run', '-d', '--network', 'host', '-e', `FERRY_EMULATOR_HEALTH_URL=http://127.0.0.1:${port}/_emulator/health`, EMULATOR, 'emulator', '--host', '127.0.0.1', '--port', String(port), '--ready-json'])).stdout.trim();
  containers.push(emulatorId);
  for (;;) {
    const logs = (await docker(['logs', emulatorId])).stdout.trim();
    if (logs) {
      ready = JSON.parse(logs.split('\n')[0]!);
      break;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}, 1_200_000);

afterAll(async () => {
  if (why) return;
  for (const c of containers) await docker(['rm', '-f', c]).catch(() => undefined);
  for (const v of volumes) await docker(['volume', 'rm', '-f', v]).catch(() => undefined);
  await docker(['rmi', '-f', FERRY, EMULATOR]).catch(() => undefined);
});

function client(): FerryClient {
  const t = ready.tenants[0]!;
  return new FerryClient({ address: ready, credentials: { clientId: t.clientId, clientSecret: t.clientSecret, audience: ready.audience } });
}

/** The ferry image as the manifests run it: read-only, /tmp a tmpfs, its state a named volume, as user 65532, on the host network. */
function ferryRun(volume: string, mounts: string[], args: string[], extra: string[] = []): string[] {
  const t = ready.tenants[0]!;
  const env = { FERRY_BASE_URL: ready.baseUrl, FERRY_SETTINGS_URL: ready.settingsUrl, FERRY_AUTH_URL: ready.authUrl, FERRY_AUDIENCE: ready.audience, FERRY_CLIENT_ID: t.clientId, FERRY_CLIENT_SECRET: t.clientSecret, FERRY_LOG_LEVEL: 'silent' };
  return ['run', '--network', 'host', '--read-only', '--tmpfs', '/tmp', '-v', `${volume}:/var/lib/ferry`, ...mounts.flatMap((m) => ['-v', m]), ...Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]), ...extra, FERRY, ...args];
}

function volume(): string {
  const v = `ferry-image-test-${TAG}-${volumes.length}`;
  volumes.push(v);
  return v;
}

describe('the image, built and run', () => {
  it('the emulator image turns healthy by its own HEALTHCHECK, and serves its API', async (ctx) => {
    if (why) return ctx.skip(why);
    let health = '';
    for (let i = 0; i < 150 && health !== 'healthy'; i++) {
      health = (await docker(['inspect', '--format', '{{.State.Health.Status}}', emulatorId])).stdout.trim();
      if (health !== 'healthy') await new Promise((r) => setTimeout(r, 200));
    }
    expect(health).toBe('healthy');
    const c = client();
    expect((await c.projects.list().all()).length).toBeGreaterThan(0);
    await c.close();
  });

  it('the ferry image: a bind-mounted tree mirrored and pulled back byte for byte, read-only, as user 65532, state in a named volume', async (ctx) => {
    if (why) return ctx.skip(why);
    const src = join(dir, 'tree');
    const files = await numberedTree(src, 3, 10);
    const out = join(dir, 'pulled');
    await mkdir(out);
    await chown(out, IMAGE_UID, IMAGE_UID);
    const project = ready.tenants[0]!.assistants[0]!.projectIdentifier;
    const state = volume();
    const mirrored = await docker(ferryRun(state, [`${src}:/data:ro`], ['mirror', '/data', '--project', project, '--to', 'image', '--json']));
    expect(JSON.parse(mirrored.stdout)).toMatchObject({ status: 'succeeded', counts: { uploaded: files } });
    const pulled = await docker(ferryRun(state, [`${out}:/out`], ['pull', project, '/out', '--from', 'image', '--json']));
    expect(JSON.parse(pulled.stdout)).toMatchObject({ status: 'succeeded', counts: { downloaded: files } });
    for (const f of ['f0/file-0.txt', 'f2/file-9.txt']) expect(await readFile(join(out, f))).toEqual(await readFile(join(src, f)));
    // Every container of this file on the host network: nothing but loopback.
    const modes = await Promise.all(containers.map(async (c) => (await docker(['inspect', '--format', '{{.HostConfig.NetworkMode}}', c])).stdout.trim()));
    expect(new Set(modes)).toEqual(new Set(['host']));
  });

  it('docker stop during a mirror: tini passes SIGTERM, ferry exits 3, and the next run with the same volume finishes, every file once', async (ctx) => {
    if (why) return ctx.skip(why);
    const src = join(dir, 'stopped');
    const files = await numberedTree(src, 4, 25);
    const c = client();
    const project = (await c.projects.create({ name: `docker stop ${TAG}`, description: '' })).objectIdentifier;
    const state = volume();
    // Slow answers, so that the stop lands mid-run.
    const control = (method: string, path: string, body?: unknown) => fetch(`${ready.baseUrl}/_emulator/${path}`, { method, headers: { authorization: `Bearer ${ready.adminToken}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
    expect((await control('PUT', 'faults', { spec: 'latency=150' })).status).toBe(200);
    const name = `ferry-stop-${TAG}`;
    containers.push(name);
    const child = spawn('docker', ferryRun(state, [`${src}:/data:ro`], ['mirror', '/data', '--project', project, '--concurrency', '2', '--json'], ['--name', name]), { stdio: 'ignore' });
    try {
      for (;;) {
        if ((await remoteFiles(c, project)).length >= 5) break;
        // A container that ended before its fifth upload failed: said with what it printed, not waited on.
        const state = (await docker(['inspect', '--format', '{{.State.Running}} {{.State.ExitCode}}', name]).catch(() => ({ stdout: 'starting' }))).stdout.trim();
        if (state.startsWith('false')) throw new Error(`the mirror ended before the stop (${state}): ${(await docker(['logs', name])).stderr}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      await docker(['stop', '-t', '20', name]);
      expect((await docker(['inspect', '--format', '{{.State.ExitCode}}', name])).stdout.trim()).toBe('3');
    } finally {
      child.kill();
      await control('DELETE', 'faults');
    }
    const again = await docker(ferryRun(state, [`${src}:/data:ro`], ['mirror', '/data', '--project', project, '--json']));
    expect(JSON.parse(again.stdout)).toMatchObject({ status: 'succeeded' });
    expect(await pathsOnce(c, project)).toBe(files);
    await c.close();
  });

  it('carries its OCI annotations (the revision it was built from) and an SBOM of exactly its production dependencies', async (ctx) => {
    if (why) return ctx.skip(why);
    const labels = JSON.parse((await docker(['inspect', '--format', '{{json .Config.Labels}}', FERRY])).stdout) as Record<string, string>;
    const pkg = JSON.parse(await readFile(join(repo, 'package.json'), 'utf8')) as { version: string; license: string; dependencies: Record<string, string>; devDependencies: Record<string, string> };
    expect(labels).toMatchObject({ 'org.opencontainers.image.version': pkg.version, 'org.opencontainers.image.revision': revision, 'org.opencontainers.image.licenses': pkg.license });
    type Component = { group?: string; name: string; components?: Component[] };
    const sbom = JSON.parse((await docker(['run', '--rm', '--network', 'host', '--entrypoint', '/bin/cat', FERRY, '/opt/ferry/sbom.cdx.json'])).stdout) as { bomFormat: string; components: Component[] };
    expect(sbom.bomFormat).toBe('CycloneDX');
    const names = new Set<string>();
    const walk = (cs: Component[] = []): void => {
      for (const c of cs) {
        names.add(c.group ? `${c.group}/${c.name}` : c.name);
        walk(c.components);
      }
    };
    walk(sbom.components);
    for (const dep of Object.keys(pkg.dependencies)) expect(names.has(dep), dep).toBe(true);
    for (const dev of ['vitest', 'typescript']) expect(names.has(dev), dev).toBe(false);
  });

  it('a state volume owned by another user: exit 2, one line naming it', async (ctx) => {
    if (why) return ctx.skip(why);
    const state = volume();
    // As a volume an earlier image running as root left behind: root's, with a file in it (an empty
    // named volume would be given the image's folder, owner and all, at each mount).
    await docker(['run', '--rm', '--network', 'host', '-v', `${state}:/var/lib/ferry`, '--user', '0:0', '--entrypoint', '/bin/sh', FERRY, '-c', 'touch /var/lib/ferry/left-by-root && chown -R 0:0 /var/lib/ferry && chmod 755 /var/lib/ferry']);
    const r = await docker(ferryRun(state, [], ['mirror', '/tmp', '--project', ready.tenants[0]!.assistants[0]!.projectIdentifier])).then(
      () => ({ code: 0, stderr: '' }),
      (err: { code: number; stderr: string }) => ({ code: err.code, stderr: err.stderr }),
    );
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('/var/lib/ferry');
  });
});
