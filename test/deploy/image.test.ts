// The image, built and run (issue 78): both targets of the Dockerfile built with `docker build`
// from this tree on a base made locally (deploy/image/local-base.sh: no image can be pulled here),
// then run, every container on the host network (loopback only; the daemon has no bridge):
//   - the emulator image turns healthy by its HEALTHCHECK and serves its API;
//   - the ferry image, read-only, as user 65532, its state in a named volume, mirrors a bind-mounted
//     tree into it and pulls it back byte for byte;
//   - `docker stop` during a mirror: tini passes SIGTERM, ferry exits 3, and the next run with the
//     same volume finishes with every file once; `docker kill` (SIGKILL) likewise;
//   - the sharded migration of deploy/kubernetes, its command read from the manifest, as three
//     containers with JOB_COMPLETION_INDEX 0..2: every project once, every document once;
//   - a state volume owned by another user: exit 2, one line naming it;
//   - its OCI annotations and its SBOM;
//   - ferry/testcontainers starts the emulator image, and a mirror runs against it.
// Run by `npm run test:image` (vitest.image.config.ts), which .ci/run starts beside `npm test`
// (docs/scale-out.md, *CI's minutes*). Where no Docker engine answers, it fails under CI=true, else
// is skipped saying so.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { chmod, chown, mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';
import { FerryClient } from '../../src/api/index.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';
import { mirror } from '../../jobs/mirror.js';
import { controlRequest, FerryEmulatorContainer } from '../../src/testcontainers/index.js';
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
type Ready = { baseUrl: string; settingsUrl: string; authUrl: string; audience: string; tenants: { clientId: string; clientSecret: string; assistants: { projectIdentifier: string }[] }[]; adminToken: string };
let ready: Ready;
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
  ({ id: emulatorId, ready } = await startEmulator());
}, 1_200_000);

/** The emulator image on a free loopback port, its health check told where to look; its ready line. */
async function startEmulator(): Promise<{ id: string; ready: Ready }> {
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const id = (await docker(['run', '-d', '--network', 'host', '-e', `FERRY_EMULATOR_HEALTH_URL=http://127.0.0.1:${port}/_emulator/health`, EMULATOR, 'emulator', '--host', '127.0.0.1', '--port', String(port), '--ready-json'])).stdout.trim();
  containers.push(id);
  for (;;) {
    const logs = (await docker(['logs', id])).stdout.trim();
    if (logs) return { id, ready: JSON.parse(logs.split('\n')[0]!) as Ready };
    const state = (await docker(['inspect', '--format', '{{.State.Running}}', id])).stdout.trim();
    if (state === 'false') throw new Error(`the emulator container ended before its ready line: ${(await docker(['logs', id])).stderr}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

afterAll(async () => {
  if (why) return;
  for (const c of containers) await docker(['rm', '-f', c]).catch(() => undefined);
  for (const v of volumes) await docker(['volume', 'rm', '-f', v]).catch(() => undefined);
  await docker(['rmi', '-f', FERRY, EMULATOR]).catch(() => undefined);
});

function client(on: Ready = ready, tenant = 0): FerryClient {
  const t = on.tenants[tenant]!;
  return new FerryClient({ address: on, credentials: { clientId: t.clientId, clientSecret: t.clientSecret, audience: on.audience } });
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
  });

  // As Kubernetes ends a pod: SIGTERM, then SIGKILL after the grace period (`docker stop`), or
  // SIGKILL at once (`docker kill`, a node lost). Either way the next run with the same volume
  // finishes with every file once.
  for (const { how, args, exitCode, says } of [
    { how: 'stop', args: ['stop', '-t', '20'], exitCode: '3', says: 'tini passes SIGTERM, ferry exits 3' },
    { how: 'kill', args: ['kill'], exitCode: '137', says: 'SIGKILL, exit 137' },
  ]) it(`docker ${how} during a mirror: ${says}, and the next run with the same volume finishes, every file once`, async (ctx) => {
    if (why) return ctx.skip(why);
    const src = join(dir, how);
    const files = await numberedTree(src, 4, 25);
    const c = client();
    const project = (await c.projects.create({ name: `docker ${how} ${TAG}`, description: '' })).objectIdentifier;
    const state = volume();
    // Slow answers, so that the signal lands mid-run.
    const control = (method: string, path: string, body?: unknown) => controlRequest(ready, method, path, body);
    expect((await control('PUT', 'faults', { spec: 'latency=150' })).status).toBe(200);
    const name = `ferry-${how}-${TAG}`;
    containers.push(name);
    const child = spawn('docker', ferryRun(state, [`${src}:/data:ro`], ['mirror', '/data', '--project', project, '--concurrency', '2', '--json'], ['--name', name]), { stdio: 'ignore' });
    try {
      for (;;) {
        if ((await remoteFiles(c, project)).length >= 5) break;
        // A container that ended before its fifth upload failed: said with what it printed, not waited on.
        const running = (await docker(['inspect', '--format', '{{.State.Running}} {{.State.ExitCode}}', name]).catch(() => ({ stdout: 'starting' }))).stdout.trim();
        if (running.startsWith('false')) throw new Error(`the mirror ended before the ${how} (${running}): ${(await docker(['logs', name])).stderr}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      await docker([...args, name]);
      await docker(['wait', name]);
      expect((await docker(['inspect', '--format', '{{.State.ExitCode}}', name])).stdout.trim()).toBe(exitCode);
      expect(await remoteFiles(c, project).then((d) => d.length)).toBeLessThan(files);
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

  it("the sharded migration as deploy/kubernetes runs it: three containers, JOB_COMPLETION_INDEX 0..2, the manifest's command, every document once", async (ctx) => {
    if (why) return ctx.skip(why);
    // A service of its own, so that --all-projects means only what this test made.
    const { ready: two } = await startEmulator();
    const source = client(two, 0);
    const target = client(two, 1);
    const projects = new Map<string, string[]>();
    for (let p = 0; p < 5; p++) {
      const name = `Sharded in containers ${p}`;
      const id = (await source.projects.create({ name, description: '' })).objectIdentifier;
      const tree = join(dir, `shard-src-${p}`);
      await numberedTree(tree, 2, 3 + p);
      const store = new SqliteCheckpointStore(join(dir, `shard-src-${p}.sqlite`));
      expect((await mirror({ source: tree, project: id }, { client: source, store })).counts.uploaded).toBe(2 * (3 + p));
      store.close();
      projects.set(name, (await remoteFiles(source, id)).map((d) => d.path ?? '').sort());
    }
    const before = new Set((await source.projects.list().all()).map((p) => p.name));
    // The manifest, read: its command, its arguments, the variables its profiles name.
    const manifest = parse(await readFile(join(repo, 'deploy/kubernetes/sharded-migration-job.yaml'), 'utf8')) as { spec: { completions: number; template: { spec: { containers: { command: string[]; args: string[]; env: { name: string }[] }[] } } } };
    const container = manifest.spec.template.spec.containers[0]!;
    const shards = manifest.spec.completions;
    const secrets = container.env.map((e) => e.name).filter((n) => n.endsWith('_SECRET'));
    expect(secrets).toHaveLength(2);
    // Its ConfigMap's two profiles, pointed at this service: uk-prod the first tenant, us-prod the second.
    const profiles = join(dir, 'profiles');
    await mkdir(profiles);
    await chmod(profiles, 0o755);
    const profile = (tenant: number, secretEnv: string) => ({ baseUrl: two.baseUrl, settingsUrl: two.settingsUrl, authUrl: two.authUrl, audience: two.audience, clientId: two.tenants[tenant]!.clientId, clientSecretEnv: secretEnv });
    await writeFile(join(profiles, 'config.yaml'), stringify({ profiles: { 'uk-prod': profile(0, secrets[0]!), 'us-prod': profile(1, secrets[1]!) } }), { mode: 0o644 });
    const [entrypoint, ...command] = container.command;
    const started = [];
    for (let index = 0; index < shards; index++) {
      const name = `ferry-shard-${index}-${TAG}`;
      containers.push(name);
      const env = { JOB_COMPLETION_INDEX: String(index), FERRY_CONFIG: '/etc/ferry/config.yaml', FERRY_STATE_DIR: '/var/lib/ferry', FERRY_LOG_LEVEL: 'silent', [secrets[0]!]: two.tenants[0]!.clientSecret, [secrets[1]!]: two.tenants[1]!.clientSecret };
      started.push(docker(['run', '-d', '--name', name, '--network', 'host', '--read-only', '--tmpfs', '/tmp', '--user', `${IMAGE_UID}:${IMAGE_UID}`, '-v', `${volume()}:/var/lib/ferry`, '-v', `${profiles}:/etc/ferry:ro`, ...Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]), '--entrypoint', entrypoint!, FERRY, ...command, ...container.args]).then(() => name));
    }
    const names = await Promise.all(started);
    const summaries = [];
    for (const name of names) {
      const code = (await docker(['wait', name])).stdout.trim();
      const out = await docker(['logs', name]);
      expect(code, `${name}: ${out.stdout}${out.stderr}`).toBe('0');
      summaries.push(JSON.parse(out.stdout) as { projects: { name?: string; source?: string }[] });
    }
    // The shards split the projects between them: each once, in one shard.
    expect(summaries.reduce((n, s) => n + s.projects.length, 0)).toBe(before.size);
    expect(summaries.filter((s) => s.projects.length > 0).length).toBeGreaterThan(1);
    const onTarget = await target.projects.list().all();
    for (const [name, paths] of projects) {
      const made = onTarget.filter((p) => p.name === name);
      expect(made, name).toHaveLength(1);
      expect((await remoteFiles(target, made[0]!.objectIdentifier)).map((d) => d.path ?? '').sort(), name).toEqual(paths);
    }
    await Promise.all([source.close(), target.close()]);
  });

  it('ferry/testcontainers: the module starts the emulator image, hands over its clients and control API, and a mirror runs against it', async (ctx) => {
    if (why) return ctx.skip(why);
    // No reaper (an image from a public registry), and no bridge to find the engine's host through:
    // loopback (docs/emulator.md, *As a container*).
    process.env.TESTCONTAINERS_RYUK_DISABLED = 'true';
    process.env.TESTCONTAINERS_HOST_OVERRIDE = '127.0.0.1';
    const emulator = await new FerryEmulatorContainer(EMULATOR).withHostNetwork().withEmulatorArgs('--max-page-size', '7').start();
    containers.push(emulator.getId());
    const c = emulator.client();
    const project = (await c.projects.create({ name: `testcontainers ${TAG}`, description: '' })).objectIdentifier;
    const src = join(dir, 'testcontainers');
    const files = await numberedTree(src, 2, 10);
    const store = new SqliteCheckpointStore(join(dir, 'testcontainers.sqlite'));
    expect((await mirror({ source: src, project }, { client: c, store })).counts.uploaded).toBe(files);
    store.close();
    expect(await pathsOnce(c, project)).toBe(files);
    // Its flags reached the emulator, and its control API answers: a reset takes the project away.
    expect(((await (await emulator.control('GET', 'modes')).json()) as { modes: { maxPageSize: number } }).modes.maxPageSize).toBe(7);
    expect((await emulator.control('POST', 'reset')).status).toBe(200);
    expect((await emulator.client().projects.list().all()).map((p) => p.objectIdentifier)).not.toContain(project);
    const id = emulator.getId();
    await emulator.stop();
    // Stopped is removed: nothing left behind for a reaper.
    expect((await docker(['ps', '-aq', '--filter', `id=${id}`])).stdout.trim()).toBe('');
  });

  it('every container this file ran, of either image, ran on the host network: nothing but loopback', async (ctx) => {
    if (why) return ctx.skip(why);
    // By image, not by what the tests kept: a `docker run` the file did not name is found too.
    const ids = (await docker(['ps', '-aq', '--no-trunc', '--filter', `ancestor=${FERRY}`, '--filter', `ancestor=${EMULATOR}`])).stdout.split('\n').filter(Boolean);
    expect(ids.length).toBeGreaterThan(10);
    const modes = await Promise.all(ids.map(async (c) => (await docker(['inspect', '--format', '{{.HostConfig.NetworkMode}}', c])).stdout.trim()));
    expect(new Set(modes)).toEqual(new Set(['host']));
    expect((await docker(['network', 'ls', '--format', '{{.Name}}'])).stdout.split('\n').filter(Boolean)).not.toContain('bridge');
  });
});
