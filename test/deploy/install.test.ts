// ferry as a user installs it, and as the container image holds it: `npm run package` makes the
// tarball, deploy/image/layout.sh (the script the Dockerfile's build stage runs) installs it with
// `npm install --global --omit=dev` into a temp folder laid out as the image's root, and ferry runs
// from there: as a user would after `npm install -g`, and as the image runs it (an unprivileged
// user, the tree read-only, only the state dir writable).
// Not here: the compile of better-sqlite3 on install (a minute and a half, already done once by
// `npm ci`). The install takes its prebuilt binary from a local folder through prebuild-install's
// own `local-prebuilds` setting (a .prebuild-installrc above the install); the compile path is what
// `npm ci` itself runs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmod, chown, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { parseAllDocuments } from 'yaml';
import { numberedTree, pathsOnce } from '../helpers/runs.js';
import { runCommand, type CliResult } from '../helpers/cli.js';
import { startService, type Service } from '../helpers/service.js';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../..', import.meta.url));
const manifest = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { version: string; dependencies: Record<string, string> };
const lock = JSON.parse(readFileSync(join(repo, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string; dev?: boolean }> };

/** The image's user (Dockerfile USER): root reads and writes everything, so the image's runs drop to it. */
const IMAGE_UID = 65532;
const asImageUser = process.getuid?.() === 0 ? { uid: IMAGE_UID, gid: IMAGE_UID } : {};

let dir: string;
let root: string; // the image's root: opt/ferry, var/lib/ferry
let tarball: string;
let installOutput: string;
let service: Service;

const ferryBin = () => join(root, 'opt/ferry/bin/ferry');
const installed = () => join(root, 'opt/ferry/lib/node_modules/ferry');

/** The environment the image sets (Dockerfile ENV), with /tmp as the writable scratch it mounts. */
function imageEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: `${join(root, 'opt/ferry/bin')}:${process.env.PATH ?? ''}`, FERRY_STATE_DIR: join(root, 'var/lib/ferry'), HOME: join(root, 'var/lib/ferry'), TMPDIR: join(dir, 'scratch'), NODE_ENV: 'production', FERRY_LOG_LEVEL: 'silent', ...extra };
}

function ferry(args: string[], env: Record<string, string>, as: { uid?: number; gid?: number } = {}, onSpawn?: (c: ChildProcess) => void): Promise<CliResult> {
  return runCommand(ferryBin(), args, env, onSpawn, { ...as, cwd: dir });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-install-'));
  await chmod(dir, 0o755); // the image's user walks through it
  root = join(dir, 'image');
  await mkdir(join(dir, 'scratch'), { mode: 0o1777 });
  await chmod(join(dir, 'scratch'), 0o1777);
  // The native addon's binary, as prebuild-install names a release asset, from the one `npm ci` built.
  const prebuilds = join(dir, 'prebuilds');
  await mkdir(join(prebuilds, 'build/Release'), { recursive: true });
  await run('cp', [join(repo, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node'), join(prebuilds, 'build/Release/')]);
  const sqliteVersion = (lock.packages['node_modules/better-sqlite3'] as { version: string }).version;
  await run('tar', ['czf', `better-sqlite3-v${sqliteVersion}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`, 'build'], { cwd: prebuilds });
  await writeFile(join(dir, '.prebuild-installrc'), `local-prebuilds=${prebuilds}\n`);

  const packed = await run(process.execPath, [join(repo, 'deploy/package/pack.mjs'), '--out', dir, '--no-build'], { cwd: repo, maxBuffer: 64 << 20 });
  tarball = packed.stdout.trim().split('\n').at(-1) as string;
  const env = { ...process.env, npm_config_update_notifier: 'false' };
  const laid = await run('sh', [join(repo, 'deploy/image/layout.sh'), tarball, root], { cwd: dir, env, maxBuffer: 64 << 20 });
  installOutput = `${laid.stdout}${laid.stderr}`;
  // The image: the tree read-only, the state dir the image user's.
  await run('chmod', ['-R', 'a-w', join(root, 'opt')]);
  await writeFile(join(dir, 'laid-out'), ''); // anything in the tree newer than this was written by a run
  if (asImageUser.uid !== undefined) await chown(join(root, 'var/lib/ferry'), IMAGE_UID, IMAGE_UID);
  service = await startService();
}, 300_000);

afterAll(async () => {
  await service?.close();
  if (root) await run('chmod', ['-R', 'u+w', root]).catch(() => undefined);
  await rm(dir, { recursive: true, force: true });
});

describe('the package (npm run package, then npm install --global --omit=dev)', () => {
  it('installs without a warning, and the installed tree is the lockfile\'s, version for version', async () => {
    expect(installOutput).toMatch(/added \d+ packages? in/);
    expect(installOutput).not.toMatch(/npm warn|EBADENGINE|deprecated/i);
    // Every installed package at the version package-lock.json holds for the same place (the tree CI tested).
    const base = join(installed(), 'node_modules');
    let checked = 0;
    const walk = async (folder: string, key: string): Promise<void> => {
      for (const name of await readdir(folder).catch(() => [] as string[])) {
        if (name.startsWith('.')) continue;
        if (name.startsWith('@')) {
          for (const sub of await readdir(join(folder, name))) await visit(join(folder, name, sub), `${key}${name}/${sub}`);
        } else await visit(join(folder, name), `${key}${name}`);
      }
    };
    const visit = async (path: string, key: string): Promise<void> => {
      const version = (JSON.parse(await readFile(join(path, 'package.json'), 'utf8')) as { version: string }).version;
      expect({ key, version }).toEqual({ key, version: lock.packages[key]?.version });
      expect(lock.packages[key]?.dev, `${key} is a dev dependency`).not.toBe(true);
      checked++;
      await walk(join(path, 'node_modules'), `${key}/node_modules/`);
    };
    await walk(base, 'node_modules/');
    const production = Object.entries(lock.packages).filter(([k, p]) => k.startsWith('node_modules/') && !p.dev).length;
    expect(checked).toBe(production);
    // The overridden light-my-request (package.json's overrides), and its cookie, which supports Node 20.
    const lmr = join(base, 'fastify/node_modules/light-my-request/package.json');
    expect((JSON.parse(await readFile(lmr, 'utf8')) as { version: string }).version).toBe('6.6.0');
    const cookie = JSON.parse(await readFile(join(base, 'fastify/node_modules/cookie/package.json'), 'utf8')) as { engines?: { node?: string } };
    expect(cookie.engines?.node).toBe('>=18');
  });

  it('carries the docs the README links to, the licence, and no test or source tree', async () => {
    for (const file of ['README.md', 'LICENSE', 'docs/cli.md', 'docs/scale-out.md', 'docs/emulator.md', 'bench/NOTES.md']) expect(existsSync(join(installed(), file)), file).toBe(true);
    // Every relative link of the README and the docs leads to a file of the installed copy.
    for (const doc of ['README.md', ...(await readdir(join(installed(), 'docs'))).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)]) {
      const text = await readFile(join(installed(), doc), 'utf8');
      for (const [, link] of text.matchAll(/\]\((?!https?:|#|mailto:)([^)#\s]+)/g)) {
        const target = join(installed(), doc.includes('/') ? 'docs' : '', link as string);
        expect(existsSync(target), `${doc} links to ${link}`).toBe(true);
      }
    }
    expect(existsSync(join(installed(), 'test'))).toBe(false);
    expect(existsSync(join(installed(), 'src/cli'))).toBe(false);
  });

  it('runs: --version, the demo, and a mirror against an emulator started from the installed copy', async () => {
    const env = { PATH: process.env.PATH ?? '', HOME: join(dir, 'home'), FERRY_STATE_DIR: join(dir, 'user-state'), FERRY_LOG_LEVEL: 'silent' };
    expect((await ferry(['--version'], env)).stdout.trim()).toBe(manifest.version);
    const demo = await ferry(['demo'], env);
    expect(demo.code, demo.stderr).toBe(0);
    expect(demo.stdout).toMatch(/uploaded 9\b/);

    const profiles = join(dir, 'installed-profiles.yaml');
    const emulator = spawn(ferryBin(), ['emulator', '--port', '0', '--write-profiles', profiles], { env });
    try {
      const [line] = (await Promise.race([once(createInterface({ input: emulator.stdout }), 'line'), once(emulator, 'exit').then(() => [undefined])])) as [string | undefined];
      expect(line).toBeDefined();
      const src = join(dir, 'installed-src');
      const files = await numberedTree(src, 3, 4);
      const project = '2ea32fa3-a2be-4b9c-8eb3-559d8a004598'; // the emulator's seeded project
      const r = await ferry(['mirror', src, '--project', project, '--to', 'installed', '--json'], { ...env, FERRY_CONFIG: profiles });
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ status: 'succeeded', counts: { uploaded: files } });
    } finally {
      emulator.kill('SIGTERM');
      await once(emulator, 'exit').catch(() => undefined);
    }
  });
});

describe('the image (the tree deploy/image/layout.sh lays out, run as the Dockerfile runs it)', () => {
  it('as its unprivileged user, with the tree read-only: a mirror stopped by SIGTERM exits 3 with a resumable store, and the next run finishes it, every file once', async () => {
    const src = join(dir, 'image-src');
    const files = await numberedTree(src, 4, 30);
    await run('chmod', ['-R', 'a+rX', src]);
    const project = (await service.client().projects.create({ name: 'image run', description: '' })).objectIdentifier;
    const env = imageEnv(service.env());
    service.emulator.setFaults('latency=40');
    let first;
    try {
      first = await ferry(['mirror', src, '--project', project, '--to', 'image', '--json', '--concurrency', '1'], env, asImageUser, (child) => {
        void (async () => {
          while (child.exitCode === null && ((await service.client().projects.analytics(project)).documentCount ?? 0) < 5) await new Promise((r) => setTimeout(r, 20));
          child.kill('SIGTERM');
        })();
      });
    } finally {
      service.emulator.setFaults('');
    }
    expect(first.code, first.stderr).toBe(3);
    expect(JSON.parse(first.stdout)).toMatchObject({ status: 'interrupted' });
    const stores = (await readdir(join(root, 'var/lib/ferry'))).filter((f) => f.endsWith('.sqlite'));
    expect(stores.length).toBe(1);
    const db = new Database(join(root, 'var/lib/ferry', stores[0] as string), { readonly: true });
    const uploaded = (db.prepare("SELECT count(*) AS n FROM items WHERE state = 'uploaded'").get() as { n: number }).n;
    db.close();
    expect(uploaded).toBeGreaterThan(0);
    const second = await ferry(['mirror', src, '--project', project, '--to', 'image', '--json'], env, asImageUser);
    expect(second.code, second.stderr).toBe(0);
    expect(await pathsOnce(service.client(), project)).toBe(files);
    // Nothing written in the tree.
    expect((await run('find', [join(root, 'opt'), '-newer', join(dir, 'laid-out')])).stdout.trim()).toBe('');
  });

  it('a state dir the image user cannot write is one line naming it and what to do, exit 2, nothing written', async () => {
    const locked = join(dir, 'locked-state');
    await mkdir(locked, { mode: 0o555 });
    await chmod(locked, 0o555);
    const project = (await service.client().projects.create({ name: 'image locked', description: '' })).objectIdentifier;
    const r = await ferry(['mirror', join(dir, 'image-src'), '--project', project, '--to', 'locked'], imageEnv({ ...service.env(), FERRY_STATE_DIR: locked }), asImageUser.uid !== undefined ? asImageUser : {});
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(locked);
    expect(r.stderr).toMatch(/FERRY_STATE_DIR/);
    expect(await readdir(locked)).toEqual([]);
    expect((await service.client().projects.analytics(project)).documentCount ?? 0).toBe(0);
  });
});

describe('the Dockerfile and the Kubernetes manifests agree with the tree', () => {
  const dockerfile = readFileSync(join(repo, 'Dockerfile'), 'utf8');
  /** The instructions, continuation lines joined; the run stage's (`AS run`, up to the next FROM) and those before it. */
  const lines = dockerfile.replace(/\\\n\s*/g, ' ').split('\n').filter((l) => l.trim() && !l.trim().startsWith('#'));
  const runAt = lines.findIndex((l) => /^FROM \S+ AS run$/.test(l));
  const runEnd = lines.findIndex((l, i) => i > runAt && l.startsWith('FROM '));
  const stage = lines.slice(runAt, runEnd === -1 ? undefined : runEnd);
  const build = lines.slice(0, runAt);
  const env = Object.fromEntries(stage.filter((l) => l.startsWith('ENV ')).flatMap((l) => [...l.slice(4).matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1], m[2]])));
  const user = /^USER (\d+):(\d+)$/m.exec(stage.join('\n'));

  it('builds the tree with the script this test ran, and copies what it laid out', () => {
    expect(build.some((l) => /sh deploy\/image\/layout\.sh \S+ \/image/.test(l))).toBe(true);
    expect(build.some((l) => /node deploy\/package\/pack\.mjs --out \/tmp/.test(l))).toBe(true);
    const copies = stage.filter((l) => l.startsWith('COPY --from=build')).map((l) => l.split(/\s+/).slice(-2) as [string, string]);
    expect(copies).toEqual([['/image/opt/ferry', '/opt/ferry'], ['/image/var/lib/ferry', '/var/lib/ferry'], ['/src/deploy/image/emulator-health.mjs', '/opt/ferry/emulator-health.mjs']]);
    for (const [from] of copies.slice(0, 2)) expect(existsSync(join(root, from.replace('/image/', ''))), from).toBe(true);
    expect(existsSync(join(repo, 'deploy/image/emulator-health.mjs'))).toBe(true);
    // The default target (the last stage) is the run stage itself: `docker build .` is ferry, not the emulator.
    expect(lines[lines.length - 1]).toBe('FROM run');
    expect(existsSync(join(root, 'opt/ferry/bin/ferry'))).toBe(true);
  });

  it('runs ferry under tini as user 65532, state in the volume FERRY_STATE_DIR names', () => {
    expect(user?.[1]).toBe(String(IMAGE_UID));
    expect(env.FERRY_STATE_DIR).toBe('/var/lib/ferry');
    expect(stage).toContain('VOLUME ["/var/lib/ferry"]');
    expect(env.PATH).toMatch(/^\/opt\/ferry\/bin:/);
    expect(stage).toContain('ENTRYPOINT ["/usr/bin/tini", "--", "ferry"]');
    expect(stage.some((l) => /--chown=65532:65532 \/image\/var\/lib\/ferry/.test(l))).toBe(true);
  });

  it('says what it is: the OCI annotations, its version package.json\'s and its licence the package\'s; an SBOM made in the build', () => {
    const args = Object.fromEntries(stage.filter((l) => l.startsWith('ARG ')).map((l) => l.slice(4).split('=') as [string, string]));
    expect(args.VERSION).toBe(manifest.version);
    const labels = Object.fromEntries([...stage.filter((l) => l.startsWith('LABEL ')).join(' ').matchAll(/(org\.opencontainers\.image\.\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    expect(labels).toMatchObject({ 'org.opencontainers.image.version': '${VERSION}', 'org.opencontainers.image.revision': '${REVISION}', 'org.opencontainers.image.source': '${SOURCE}', 'org.opencontainers.image.licenses': (JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { license: string }).license });
    expect(build.some((l) => /npx cyclonedx-npm --omit dev --output-format JSON --output-file \/image\/opt\/ferry\/sbom\.cdx\.json/.test(l))).toBe(true);
  });

  it('the manifests run this image, as its user, read-only, with the state dir and /tmp mounted', async () => {
    for (const file of ['nightly-mirror-cronjob.yaml', 'sharded-migration-job.yaml']) {
      const [doc] = parseAllDocuments(await readFile(join(repo, 'deploy/kubernetes', file), 'utf8')).map((d) => d.toJS());
      const pod = (doc.kind === 'CronJob' ? doc.spec.jobTemplate.spec.template.spec : doc.spec.template.spec) as {
        securityContext?: Record<string, unknown>;
        containers: { image: string; command?: string[]; args?: string[]; env?: { name: string; value?: string }[]; securityContext?: Record<string, unknown>; volumeMounts: { mountPath: string; name: string }[] }[];
        volumes: { name: string; emptyDir?: unknown }[];
      };
      const [c] = pod.containers;
      expect(c!.image, file).toBe(`registry.example.com/ferry:${manifest.version}`);
      expect(pod.securityContext, file).toMatchObject({ runAsUser: IMAGE_UID, runAsGroup: IMAGE_UID, runAsNonRoot: true });
      expect(c!.securityContext, file).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
      const stateDir = c!.env?.find((e) => e.name === 'FERRY_STATE_DIR')?.value ?? env.FERRY_STATE_DIR;
      expect(stateDir, file).toBe(env.FERRY_STATE_DIR);
      for (const path of [stateDir, '/tmp']) {
        const mount = c!.volumeMounts.find((m) => m.mountPath === path);
        expect(mount, `${file}: nothing mounted at ${path}`).toBeDefined();
        expect(pod.volumes.find((v) => v.name === mount!.name)?.emptyDir, file).toBeDefined();
      }
      // Either the image's own entrypoint, or a shell that execs `ferry` under tini.
      if (c!.command) expect(c!.command.slice(0, 2), file).toEqual(['/usr/bin/tini', '--']);
      const script = [...(c!.command ?? []), ...(c!.args ?? [])].join(' ');
      expect(script, file).not.toMatch(/\/app\/|node \S+ferry\.js/);
    }
  });
});
