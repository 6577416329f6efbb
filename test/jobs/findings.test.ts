// The findings of issue 9, one test each, as a user meets them: `ferry` as a child process against
// the emulator over loopback, real trees with hostile names, real zips.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import archiver from 'archiver';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, truncate, writeFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { remoteFiles, startService, writeTree, type Service } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';
import { zip64EndClaiming } from '../helpers/archives.js';

let service: Service;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.close());

async function workspace(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'ferry-findings-'));
}

async function newProject(name: string): Promise<string> {
  return (await service.client().projects.create({ name, description: 'issue 9' })).objectIdentifier;
}

async function zipOf(path: string, build: (a: archiver.Archiver) => void): Promise<void> {
  const archive = archiver('zip');
  const done = new Promise<void>((resolve, reject) => {
    const out = createWriteStream(path);
    out.on('close', () => resolve());
    archive.on('error', reject);
    archive.pipe(out);
  });
  build(archive);
  await archive.finalize();
  await done;
}

function mirror(args: string[], dir: string) {
  return runFerry(['mirror', ...args, '--state', join(dir, 'state.sqlite'), '--json'], service.env());
}

describe('issue 9 findings', () => {
  it('1. a name that is not valid UTF-8 is one failed item; its folder and the root are still mirrored', async () => {
    for (const badAt of ['b', '']) {
      const dir = await workspace();
      const src = join(dir, 'T');
      await writeTree(src, { 'a/x': '1', 'b/y': '1' });
      await writeFile(Buffer.from(`${src}/${badAt ? `${badAt}/` : ''}bad\xff.txt`, 'latin1'), 'x');
      const project = await newProject(`utf8-${badAt || 'root'}`);
      const r = await mirror([src, '--project', project], dir);
      expect(r.code, r.stderr).toBe(1);
      const summary = onlyJson(r) as { counts: Record<string, number>; errors: { key: string; error: string }[] };
      expect(summary.counts).toMatchObject({ discovered: 3, uploaded: 2, failed: 1 });
      expect(summary.errors).toEqual([{ key: `${badAt ? `${badAt}/` : ''}bad\\xff.txt`, error: expect.stringContaining('not valid UTF-8') }]);
      expect((await remoteFiles(service.client(), project)).map((d) => d.path).sort()).toEqual(['/a/x', '/b/y']);
    }
  });

  it('2. a name holding a newline is a failed item, counted and named, and the run exits 1', async () => {
    const dir = await workspace();
    const src = join(dir, 'T');
    await writeTree(src, { 'ok.txt': 'fine', 'new\nline.txt': 'x' });
    const r = await mirror([src, '--project', await newProject('newline')], dir);
    expect(r.code, r.stderr).toBe(1);
    const summary = onlyJson(r) as { counts: Record<string, number>; errors: { key: string; error: string }[] };
    expect(summary.counts).toMatchObject({ discovered: 2, uploaded: 1, failed: 1 });
    expect(summary.errors[0]).toEqual({ key: 'new\\nline.txt', error: expect.stringContaining('control characters') });
  });

  it('3. a zip with a path twice mirrors the last entry once, skips the first with its reason, and a rerun uploads 0', async () => {
    const dir = await workspace();
    const zip = join(dir, 'dup.zip');
    await zipOf(zip, (a) => {
      a.append('first', { name: 'docs/same.txt' });
      a.append('other', { name: 'docs/other.txt' });
      a.append('second and last', { name: 'docs/same.txt' });
    });
    const project = await newProject('zip-dup');
    const first = await mirror([zip, '--project', project], dir);
    expect(first.code, first.stderr).toBe(0);
    const summary = onlyJson(first) as { counts: Record<string, number>; errors: { key: string; error: string }[] };
    expect(summary.counts).toMatchObject({ discovered: 3, uploaded: 2, skipped: 1, failed: 0 });
    expect(summary.errors).toEqual([{ key: 'docs/same.txt', error: expect.stringMatching(/^skipped: the archive holds this path more than once \(entry 1\); the last entry with it \(entry 3\) is mirrored/) }]);
    const docs = await remoteFiles(service.client(), project);
    expect(docs.map((d) => d.path).sort()).toEqual(['/docs/other.txt', '/docs/same.txt']);
    expect(docs.find((d) => d.path === '/docs/same.txt')?.size).toBe('second and last'.length);

    for (let i = 0; i < 2; i++) {
      const again = onlyJson(await mirror([zip, '--project', project], dir)) as { counts: Record<string, number> };
      expect(again.counts).toMatchObject({ uploaded: 0, reconciled: 0 });
    }
    expect(await remoteFiles(service.client(), project)).toHaveLength(2);
  });

  it('6. a name with a backslash arrives whole', async () => {
    const dir = await workspace();
    const src = join(dir, 'T');
    await writeTree(src, { 'back\\slash.txt': 'b', 'pct%20#hash?.txt': 'p' });
    const project = await newProject('backslash');
    const r = await mirror([src, '--project', project], dir);
    expect(r.code, r.stderr).toBe(0);
    expect((await remoteFiles(service.client(), project)).map((d) => d.name).sort()).toEqual(['back\\slash.txt', 'pct%20#hash?.txt']);
  });

  it('7. names from files and from the service reach the terminal with controls made visible, and Markdown/HTML escaped', async () => {
    const dir = await workspace();
    const src = join(dir, 'T');
    const hostile = '<img src=x onerror=alert(1)>__fail_badFile__.txt';
    await writeTree(src, { [hostile]: 'x', 'fine.txt': 'ok' });
    const client = service.client();
    const project = await newProject('hostile');
    const playbook = (await client.playbooks.create({ name: 'pb', isPrivate: false, organizationWide: true })).objectIdentifier;
    const state = join(dir, 'state.sqlite');
    // The batch name carries an escape sequence that would set the terminal's title.
    const up = await runFerry(['upload', src, '--project', project, '--playbook', playbook, '--name', 'nightly\u001b]0;pwned\u0007', '--state', state], service.env());
    expect(up.code, up.stderr).toBe(1);
    expect(up.stdout + up.stderr).not.toContain('\u001b');
    expect(up.stdout).toContain('nightly\\x1b]0;pwned\\x07');
    const batch = (await client.documentUploads.list(playbook).page(1)).items[0]!.objectIdentifier;

    const md = await runFerry(['report', '--playbook', playbook, '--upload', batch, '--format', 'markdown', '--state', state], service.env());
    expect(md.code, md.stderr).toBe(0);
    expect(md.stdout).not.toContain('<img');
    expect(md.stdout).toContain('&lt;img src=x onerror=alert(1)&gt;\\_\\_fail\\_badFile\\_\\_.txt');
    expect(md.stdout).not.toContain('\u001b');

    const html = await runFerry(['report', '--playbook', playbook, '--upload', batch, '--format', 'html', '--state', state], service.env());
    expect(html.stdout).not.toContain('<img src=x');
    expect(html.stdout).toContain('&lt;img src=x onerror=alert(1)&gt;');
  });

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

  it('10a. a --project that is not a uuid is a usage error found before any request', async () => {
    const dir = await workspace();
    // No service at all: a request would end in exit 3, not 2.
    const env = { ...service.env(), FERRY_BASE_URL: 'http://127.0.0.1:9', FERRY_AUTH_URL: 'http://127.0.0.1:9' };
    const r = await runFerry(['mirror', dir, '--project', 'Contracts', '--json'], env);
    expect(r.code).toBe(2);
    expect(onlyJson(r).error).toBe('--project "Contracts" is not an id: expected a uuid like 0f3c2a9e-5b1d-4c8e-9a7f-2d6e8b1c4a50');
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

  it('10c. a symlink entry in a zip is skipped and reported, not uploaded as a document of its target text', async () => {
    const dir = await workspace();
    const zip = join(dir, 'links.zip');
    await zipOf(zip, (a) => {
      a.append('real', { name: 'real.txt' });
      a.symlink('link.txt', 'real.txt');
    });
    const project = await newProject('zip-link');
    const r = await mirror([zip, '--project', project], dir);
    expect(r.code, r.stderr).toBe(0);
    const summary = onlyJson(r) as { counts: Record<string, number>; errors: { key: string; error: string }[] };
    expect(summary.counts).toMatchObject({ discovered: 2, uploaded: 1, skipped: 1 });
    expect(summary.errors).toEqual([{ key: 'link.txt', error: 'skipped: symbolic link entry (links are not uploaded)' }]);
    expect((await remoteFiles(service.client(), project)).map((d) => d.name)).toEqual(['real.txt']);
  });

  it('10d. a truncated zip is refused saying it is truncated; nothing is uploaded', async () => {
    const dir = await workspace();
    const zip = join(dir, 'cut.zip');
    await zipOf(zip, (a) => {
      for (let i = 0; i < 20; i++) a.append(`file ${i} `.repeat(100), { name: `f${i}.txt` });
    });
    await truncate(zip, (await stat(zip)).size - 40);
    const project = await newProject('zip-cut');
    const r = await mirror([zip, '--project', project], dir);
    expect(r.code).toBe(2);
    expect(onlyJson(r).error).toMatch(/is not a zip archive, or it is truncated: its end-of-central-directory record is missing/);
    expect(await remoteFiles(service.client(), project)).toHaveLength(0);
  });

  it('10e. a zip declaring 200,000 entries is refused from its end record, before any entry is read', async () => {
    const dir = await workspace();
    const zip = join(dir, 'many.zip');
    await writeFile(zip, zip64EndClaiming(200_000));
    const r = await mirror([zip, '--project', service.project], dir);
    expect(r.code).toBe(2);
    expect(onlyJson(r).error).toBe(`${zip} holds 200000 entries, more than the limit of 100000; nothing was read`);
  });

  it('10f. the project causes no npm warning: no unknown .npmrc keys, and install scripts approved', async () => {
    const root = new URL('../../', import.meta.url);
    await expect(stat(new URL('.npmrc', root))).rejects.toThrow(/ENOENT/);
    const pkg = JSON.parse(await readFile(new URL('package.json', root), 'utf8')) as { allowScripts?: Record<string, boolean> };
    expect(pkg.allowScripts).toEqual({ 'better-sqlite3': true });
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
