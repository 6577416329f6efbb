// The findings of issue 9, one test each, as a user meets them: `ferry` as a child process against
// the emulator over loopback, real trees with hostile names, real zips.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { remoteFiles, startService, writeTree, type Service } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';
import { madeOn, patchName, writeZip, zipOf } from '../helpers/archives.js';

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
      expect(summary.errors).toEqual([{ key: `${badAt ? `${badAt}/` : ''}bad\udcff.txt`, error: expect.stringContaining('not valid UTF-8') }]);
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
    expect(summary.errors[0]).toEqual({ key: 'new\nline.txt', error: expect.stringContaining('control characters') });
  });

  it('3. a zip with a path twice mirrors the last entry once, skips the first with its reason, and a rerun uploads 0', async () => {
    const dir = await workspace();
    const zip = join(dir, 'dup.zip');
    await writeZip(zip, (a) => {
      a.append('first', { name: 'docs/same.txt' });
      a.append('other', { name: 'docs/other.txt' });
      a.append('second and last', { name: 'docs/same.txt' });
    });
    const project = await newProject('zip-dup');
    const first = await mirror([zip, '--project', project], dir);
    expect(first.code, first.stderr).toBe(0);
    const summary = onlyJson(first) as { counts: Record<string, number>; errors: { key: string; error: string }[] };
    expect(summary.counts).toMatchObject({ discovered: 3, uploaded: 2, skipped: 1, failed: 0 });
    expect(summary.errors).toEqual([]);
    expect(summary.problems).toEqual([{ key: 'docs/same.txt', reason: expect.stringMatching(/^skipped: the archive holds this path more than once \(entry 1\); the last entry with it \(entry 3\) is mirrored/) }]);
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
    // In a zip: made on Unix, the backslash is part of the name; made on Windows, it separates
    // folders (as Info-ZIP's unzip reads it). archiver writes `/`, so the names are patched in.
    const zip = await zipOf([{ name: 'back_slash.txt', data: 'b' }, { name: 'win_dir_f.txt', data: 'w' }]);
    const unix = patchName(patchName(zip, 'back_slash.txt', 'back\\slash.txt'), 'win_dir_f.txt', 'win\\dir\\f.txt');
    for (const [host, expected] of [[3, ['/back\\slash.txt', '/win\\dir\\f.txt']], [11, ['/back/slash.txt', '/win/dir/f.txt']]] as const) {
      await writeFile(join(dir, `made-on-${host}.zip`), madeOn(unix, host));
      const zipProject = await newProject(`backslash zip ${host}`);
      const z = await mirror([join(dir, `made-on-${host}.zip`), '--project', zipProject], dir);
      expect(z.code, z.stderr).toBe(0);
      expect((await remoteFiles(service.client(), zipProject)).map((d) => d.path).sort(), `host ${host}`).toEqual(expected);
    }
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

  it('10c. a symlink entry in a zip is skipped and reported, not uploaded as a document of its target text', async () => {
    const dir = await workspace();
    const zip = join(dir, 'links.zip');
    await writeZip(zip, (a) => {
      a.append('real', { name: 'real.txt' });
      a.symlink('link.txt', 'real.txt');
    });
    const project = await newProject('zip-link');
    const r = await mirror([zip, '--project', project], dir);
    expect(r.code, r.stderr).toBe(0);
    const summary = onlyJson(r) as { counts: Record<string, number>; errors: { key: string; error: string }[] };
    expect(summary.counts).toMatchObject({ discovered: 2, uploaded: 1, skipped: 1 });
    expect(summary.errors).toEqual([]);
    expect(summary.problems).toEqual([{ key: 'link.txt', reason: 'skipped: symbolic link entry (links are not uploaded)' }]);
    expect((await remoteFiles(service.client(), project)).map((d) => d.name)).toEqual(['real.txt']);
  });

});
