// `ferry mirror` at its edges, as a user meets them (the findings of issue 9 that never reach
// what the strict emulator answers differently, so run against the default one only): the log
// level, one JSON object on every exit, usage errors found before any request, an unreachable
// host, zips refused before anything is read, and an install that causes no npm warning.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, truncate, writeFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { remoteFiles, startService, writeTree, type Service } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';
import { writeZip, zip64EndClaiming } from '../helpers/archives.js';

let service: Service;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.close());

async function workspace(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'ferry-edges-'));
}

async function newProject(name: string): Promise<string> {
  return (await service.client().projects.create({ name, description: 'issue 9' })).objectIdentifier;
}

function mirror(args: string[], dir: string) {
  return runFerry(['mirror', ...args, '--state', join(dir, 'state.sqlite'), '--json'], service.env());
}

describe('ferry mirror at its edges', () => {
  it('8. FERRY_LOG_LEVEL is read by ferry mirror (and --log-level still wins over it)', async () => {
    const dir = await workspace();
    const src = join(dir, 'T');
    await writeTree(src, { 'a.txt': 'a' });
    const project = await newProject('log-level');
    const debug = await runFerry(['mirror', src, '--project', project, '--state', join(dir, 's1.sqlite')], { ...service.env(), FERRY_LOG_LEVEL: 'debug' });
    expect(debug.code, debug.stderr).toBe(0);
    const levels = debug.stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => (JSON.parse(l) as { level: number }).level);
    expect(levels).toContain(20);
    const flagWins = await runFerry(['--log-level', 'silent', 'mirror', src, '--project', project, '--state', join(dir, 's2.sqlite')], { ...service.env(), FERRY_LOG_LEVEL: 'debug' });
    expect(flagWins.stderr.split('\n').filter((l) => l.startsWith('{'))).toEqual([]);
    const bad = await runFerry(['mirror', src, '--project', project, '--state', join(dir, 's3.sqlite'), '--json'], { ...service.env(), FERRY_LOG_LEVEL: 'loud' });
    expect(bad.code).toBe(2);
    expect(onlyJson(bad).error).toContain('unknown log level "loud"');
  });

  it('9. under --json every exit prints one JSON object: a usage error, a missing option, a missing source', async () => {
    const dir = await workspace();
    const missingOption = await runFerry(['mirror', dir, '--json'], service.env());
    expect(missingOption.code).toBe(2);
    expect(onlyJson(missingOption)).toMatchObject({ status: 'error', exitCode: 2, kind: 'usage' });
    const missingSource = await runFerry(['mirror', join(dir, 'nope'), '--project', service.project, '--json', '--state', join(dir, 's.sqlite')], service.env());
    expect(missingSource.code).toBe(2);
    expect(onlyJson(missingSource).error).toContain('cannot be read: ENOENT');
  });

  it('7b. an error message that quotes a name reaches the terminal with its controls made visible', async () => {
    const dir = await workspace();
    const r = await runFerry(['mirror', join(dir, 'gone\u001b]0;pwned\u0007'), '--project', service.project, '--state', join(dir, 's.sqlite')], service.env());
    expect(r.code).toBe(2);
    expect(r.stderr).not.toContain('\u001b');
    expect(r.stderr).toContain('gone\\x1b]0;pwned\\x07');
  });

  it('10a. a --project that is not a uuid is read as a name; one no project has is exit 2 pointing to ferry ls', async () => {
    const dir = await workspace();
    const r = await runFerry(['mirror', dir, '--project', 'Contracts', '--json'], service.env());
    expect(r.code).toBe(2);
    expect(onlyJson(r).error).toBe('no project this client sees is named "Contracts": `ferry ls` lists them with their ids');
  });

  it('10b. an unreachable host is named as unreachable', async () => {
    const dir = await workspace();
    const port = await closedPort();
    const env = { ...service.env(), FERRY_BASE_URL: `http://127.0.0.1:${port}` };
    const r = await runFerry(['mirror', dir, '--project', service.project, '--json', '--state', join(dir, 's.sqlite')], env);
    expect(r.code).toBe(3);
    const summary = onlyJson(r) as { status: string; errors: { error: string }[] };
    expect(summary.status).toBe('aborted');
    expect(summary.errors[0]!.error).toContain(`the service cannot be reached at http://127.0.0.1:${port}`);
    expect(summary.errors[0]!.error).toContain('ECONNREFUSED');
  });

  it('10d. a truncated zip is refused saying it is truncated; nothing is uploaded', async () => {
    const dir = await workspace();
    const zip = join(dir, 'cut.zip');
    await writeZip(zip, (a) => {
      for (let i = 0; i < 20; i++) a.append(`file ${i} `.repeat(100), { name: `f${i}.txt` });
    });
    await truncate(zip, (await stat(zip)).size - 40);
    const project = await newProject('zip-cut');
    const r = await mirror([zip, '--project', project], dir);
    expect(r.code).toBe(2);
    expect(onlyJson(r).error).toMatch(/is not a zip archive, or it is truncated: its end-of-central-directory record is missing/);
    expect(await remoteFiles(service.client(), project)).toHaveLength(0);
  });

  it('10e. a zip declaring 2,000,000 entries is refused from its end record, before any entry is read', async () => {
    const dir = await workspace();
    const zip = join(dir, 'many.zip');
    await writeFile(zip, zip64EndClaiming(2_000_000));
    const r = await mirror([zip, '--project', service.project], dir);
    expect(r.code).toBe(2);
    expect(onlyJson(r).error).toBe(`${zip} holds 2000000 entries, more than the limit of 1000000 (--max-entries raises it); nothing was read`);
    const raised = await mirror([zip, '--project', service.project, '--max-entries', '3000000'], dir);
    expect(raised.code).toBe(2);
    expect(onlyJson(raised).error).toContain('is not a readable zip archive');
  });

  it('10f. the project causes no npm warning: no unknown .npmrc keys, and install scripts approved', async () => {
    const root = new URL('../../', import.meta.url);
    await expect(stat(new URL('.npmrc', root))).rejects.toThrow(/ENOENT/);
    const pkg = JSON.parse(await readFile(new URL('package.json', root), 'utf8')) as { allowScripts?: Record<string, boolean> };
    // Every package of the lockfile with an install script has its decision (npm 11 warns of one
    // without); the SQLite addon's runs; declined: libxmljs2's (an optional XML validator of the SBOM
    // tool, JSON is what the image's SBOM is written in), and ssh2's, cpu-features' and protobufjs'
    // (testcontainers' optional native SSH crypto and a version check; it reaches the engine by socket).
    const lock = JSON.parse(await readFile(new URL('package-lock.json', root), 'utf8')) as { packages: Record<string, { hasInstallScript?: boolean }> };
    const scripted = Object.entries(lock.packages).filter(([, p]) => p.hasInstallScript).map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
    expect(Object.keys(pkg.allowScripts ?? {}).sort()).toEqual([...new Set(scripted)].sort());
    expect(pkg.allowScripts).toMatchObject({ 'better-sqlite3': true, libxmljs2: false });
  });
});

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
