// `ferry scan` as an onboarding team runs it: a tree with copies, same-size strangers, empty files,
// a name ferry refuses, a deep path and a .7z the service refused in an earlier mirror into the
// same project. The scan runs as a child process with the tenant's read-only client, and writes
// nothing; its page is opened in headless Chromium (Debian's package) and read back.
import { describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { remoteFiles, useService, writeTree } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';
import { Census } from '../../src/scan/census.js';
import { findDuplicates } from '../../src/scan/duplicates.js';
import { openSource } from '../../src/backends/index.js';
import { zipOf } from '../helpers/archives.js';

const CHROMIUM = process.env.FERRY_CHROMIUM ?? '/usr/bin/chromium';
const useEmulator = useService();

type Scan = {
  status: string;
  exitCode: number;
  census: { files: number; folders: number; bytes: number; emptyFiles: number; refusedCount: number; refused: { path: string; reason: string }[]; deepest: { path: string; value: number }[]; byExtension: { extension: string; files: number }[] };
  duplicates: { groups: number; extraCopies: number; wastedBytes: number; hashedFiles: number; largestGroups: { size: number; copies: number; wastedBytes: number; paths: string[] }[] };
  plan: { new: number; changed: number; unchanged: number };
  outlook: { documentsRead: number; refusals: { reason: string; files: number }[]; taken: number; credits: number; pages: number; byExtension: { extension: string; refused: Record<string, number>; taken: number | null; pages: number | null; credits: number | null; basis: string }[]; unknown: { files: number; extensions: string[] } };
  time: { requests: number; requestsPerSecond: number | null; leastSeconds: number | null };
  vanished: number;
  html?: string;
};

const DEEP = 'd1/d2/d3/d4/d5/d6/d7/d8/deep.txt';
const HOSTILE = 'x<script>alert(1)<b>.txt';

async function onboarding(): Promise<{ dir: string; src: string; project: string; env: Record<string, string> }> {
  const service = useEmulator();
  const dir = await mkdtemp(join(tmpdir(), 'ferry-scan-'));
  const project = (await service.client().projects.create({ name: 'scan onboarding', description: 'issue 55' })).objectIdentifier;
  // The earlier onboarding: a .7z the service refused, and text it took (pages and credits to go by).
  const earlier = join(dir, 'earlier');
  await writeTree(earlier, { 'old/archive.7z': '7z-bytes', 'old/notes.txt': 'a'.repeat(6_000), 'old/more.txt': 'b'.repeat(3_000) });
  const seeded = await runFerry(['mirror', earlier, '--project', project, '--to', 'old-run', '--state', join(dir, 'earlier.sqlite'), '--wait', '--timeout', '60s', '--json'], service.env());
  expect(seeded.code, seeded.stderr).toBe(1); // the .7z refused: unsupportedFileType
  const src = join(dir, 'share');
  await writeTree(src, {
    'a/same.txt': 'identical content',
    'b/same copy.txt': 'identical content',
    'c/again.txt': 'identical content',
    'one.dat': 'AAAA',
    'two.dat': 'BBBB',
    'empty-1.txt': '',
    'sub/empty-2.txt': '',
    'bad\u0007name.txt': 'bell',
    [DEEP]: 'deep down',
    'new/archive.7z': '7z-more-bytes',
    [HOSTILE]: 'hostile name',
  });
  const t = service.emulator.tenants[0]!;
  return { dir, src, project, env: { ...service.env(), FERRY_CLIENT_ID: t.readOnlyClientId, FERRY_CLIENT_SECRET: t.readOnlyClientSecret } };
}

describe('ferry scan', () => {
  it('counts the tree, groups the three copies (not the same-size strangers), predicts badFile and unsupportedFileType from the history, with the read-only client, writing nothing', async () => {
    const { dir, src, project, env } = await onboarding();
    const before = (await remoteFiles(useEmulator().client(), project)).length;
    const page = join(dir, 'scan.html');
    const r = await runFerry(['scan', src, '--project', project, '--json', '--html', page, '--rps', '4'], env);
    expect(r.code, r.stderr).toBe(0);
    const s = onlyJson(r) as Scan;
    expect(s.status).toBe('succeeded');
    expect(s.census).toMatchObject({ files: 10, emptyFiles: 2, refusedCount: 1 });
    expect(s.census.refused[0]!.path).toBe('bad\u0007name.txt');
    expect(s.census.deepest[0]).toEqual({ path: DEEP, value: 8 });
    // One group: the three copies; the two .dat files share a size, were read, and are not grouped.
    expect(s.duplicates).toMatchObject({ groups: 1, extraCopies: 2, wastedBytes: 2 * 17 });
    expect(s.duplicates.largestGroups).toEqual([expect.objectContaining({ size: 17, copies: 3, wastedBytes: 34, paths: ['a/same.txt', 'b/same copy.txt', 'c/again.txt'] })]);
    expect(s.duplicates.hashedFiles).toBe(5);
    // The project's history: 3 documents, the .7z refused; the new .7z predicted refused the same way.
    expect(s.plan).toMatchObject({ new: 10, changed: 0, unchanged: 0 });
    expect(s.outlook.documentsRead).toBe(3);
    expect(Object.fromEntries(s.outlook.refusals.map((x) => [x.reason, x.files]))).toEqual({ badFile: 2, unsupportedFileType: 1 });
    const sevenZ = s.outlook.byExtension.find((x) => x.extension === '7z')!;
    expect(sevenZ).toMatchObject({ refused: { unsupportedFileType: 1 }, taken: 0 });
    expect(sevenZ.basis).toMatch(/1 7z document processed in this project: 0 taken, refused 1 unsupportedFileType/);
    const txt = s.outlook.byExtension.find((x) => x.extension === 'txt')!;
    expect(txt.refused).toEqual({ badFile: 2 });
    expect(txt.taken).toBe(5);
    // Pages: no fewer than a page a file (the history's fewest); credits at the history's rate per page.
    expect(txt.pages).toBeGreaterThanOrEqual(5);
    const taken = (await remoteFiles(useEmulator().client(), project)).filter((d) => d.name?.endsWith('.txt'));
    const rate = taken.reduce((n, d) => n + (d.ocrCreditsCost ?? 0) + (d.layoutCreditsCost ?? 0), 0) / taken.reduce((n, d) => n + (d.pageCount ?? 0), 0);
    expect(txt.credits).toBeCloseTo(txt.pages! * rate, 0);
    expect(s.outlook.pages).toBe(txt.pages);
    // .dat: no history in this project, so unknown (not guessed).
    expect(s.outlook.unknown).toMatchObject({ files: 2, extensions: ['dat'] });
    // 10 uploads, 7 folders to create, one batch; at 4 requests a second.
    expect(s.time).toMatchObject({ requestsPerSecond: 4 });
    expect(s.time.leastSeconds).toBe(Math.round((s.time.requests / 4) * 10) / 10);
    expect(s.html).toBe(page);
    // Nothing written: the same documents, and no lease record left (none was made: read-only).
    expect((await remoteFiles(useEmulator().client(), project)).length).toBe(before);
    const text = await runFerry(['scan', src, '--project', project], env);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('bad\\x07name.txt');
    expect(text.stdout).toMatch(/likely refused: 2 badFile, 1 unsupportedFileType/);
    await rm(dir, { recursive: true, force: true });
  });

  it.skipIf(!existsSync(CHROMIUM))('the page in Chromium: the figures of the JSON, charts, sorted tables, a hostile name as text, no console error, nothing fetched', async () => {
    const { dir, src, project, env } = await onboarding();
    const page = join(dir, 'scan.html');
    const r = await runFerry(['scan', src, '--project', project, '--json', '--html', page], env);
    expect(r.code, r.stderr).toBe(0);
    const s = onlyJson(r) as Scan;
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'] });
    try {
      const tab = await browser.newPage({ viewport: { width: 1100, height: 900 } });
      const requested: string[] = [];
      const errors: string[] = [];
      tab.on('request', (q) => requested.push(q.url()));
      tab.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
      tab.on('pageerror', (e) => errors.push(e.message));
      await tab.goto(pathToFileURL(page).href);
      const figure = async (id: string) => (await tab.locator(`#${id}`).textContent())?.trim();
      expect(await figure('files')).toBe(String(s.census.files));
      expect(await figure('folders')).toBe(String(s.census.folders));
      expect(await figure('empty')).toBe(String(s.census.emptyFiles));
      expect(await figure('duplicate-groups')).toBe(String(s.duplicates.groups));
      expect(await figure('new')).toBe(String(s.plan.new));
      expect(await figure('likely-taken')).toBe(String(s.outlook.taken));
      expect(await figure('likely-refused')).toBe(String(s.outlook.refusals.reduce((n, x) => n + x.files, 0)));
      expect(await figure('credits')).toBe(String(s.outlook.credits));
      expect(await figure('requests')).toBe(String(s.time.requests));
      // Charts: a bar per type, per predicted outcome, per duplicate group.
      expect(await tab.locator('#bytes-chart g.bar').count()).toBe(s.census.byExtension.length);
      expect(await tab.locator('#outcomes-chart g.bar[data-label="unsupportedFileType"]').getAttribute('data-value')).toBe('1');
      expect(await tab.locator('#duplicates-chart g.bar').count()).toBe(1);
      // The hostile name is text: in the table as written, and no script but the page's own.
      const paths = await tab.locator('#largest tbody td:first-child').allTextContents();
      expect(paths).toContain(HOSTILE);
      expect(await tab.evaluate(() => document.scripts.length)).toBe(1);
      // Sorting by a column of sizes is numeric, both ways.
      const sizes = () => tab.locator('#by-type tbody td:nth-child(3)').evaluateAll((cells) => cells.map((c) => Number((c as HTMLElement).dataset.v)));
      await tab.click('#by-type th button[data-col="2"]');
      const up = await sizes();
      expect(up).toEqual([...up].sort((a, b) => a - b));
      await tab.click('#by-type th button[data-col="2"]');
      expect(await sizes()).toEqual([...up].reverse());
      const shot = process.env.FERRY_SCAN_SCREENSHOT ?? join(dir, 'scan.png');
      await tab.screenshot({ path: shot, fullPage: true });
      expect((await stat(shot)).size).toBeGreaterThan(5_000);
      expect(errors).toEqual([]);
      expect(requested).toEqual([pathToFileURL(page).href]);
    } finally {
      await browser.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('into a new project: a type another project of the tenant saw refused is predicted refused, one it took is taken, one nobody sent stays unknown', async () => {
    const { src, env } = await onboarding();
    const fresh = (await useEmulator().client().projects.create({ name: 'scan into a new project', description: 'issue 77' })).objectIdentifier;
    const r = await runFerry(['scan', src, '--project', fresh, '--json'], env);
    expect(r.code, r.stderr).toBe(0);
    const s = onlyJson(r) as Scan;
    expect(s.outlook.documentsRead).toBe(0);
    const sevenZ = s.outlook.byExtension.find((x) => x.extension === '7z')!;
    expect(sevenZ).toMatchObject({ refused: { unsupportedFileType: 1 }, taken: 0 });
    expect(sevenZ.basis).toMatch(/no 7z document processed in this project; 1 refused as unsupportedFileType in project "scan onboarding" of this tenant: the type is not supported/);
    const txt = s.outlook.byExtension.find((x) => x.extension === 'txt')!;
    expect(txt).toMatchObject({ refused: { badFile: 2 }, taken: 5, pages: null });
    expect(txt.basis).toMatch(/2 taken in project "scan onboarding" of this tenant: the type is supported/);
    expect(s.outlook.unknown).toMatchObject({ files: 2, extensions: ['dat'] });
    const text = await runFerry(['scan', src, '--project', fresh], env);
    expect(text.stdout).toMatch(/likely refused: [^\n]*1 unsupportedFileType/);
  });

  it('bad input: a source missing (exit 2), a project this client cannot read (exit 3, plainly), an --html folder missing (exit 2, before the walk), --to without --project', async () => {
    const service = useEmulator();
    const dir = await mkdtemp(join(tmpdir(), 'ferry-scan-bad-'));
    await writeTree(join(dir, 'src'), { 'a.txt': 'a' });
    const missing = await runFerry(['scan', join(dir, 'nope')], {});
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/nope/);
    const unknown = await runFerry(['scan', join(dir, 'src'), '--project', '00000000-0000-4000-8000-000000000000', '--json'], service.env());
    expect(unknown.code, unknown.stderr).toBe(3);
    expect(unknown.stderr).toMatch(/project 00000000-0000-4000-8000-000000000000 cannot be read by this client .*ferry ls/);
    expect(onlyJson(unknown)).toMatchObject({ command: 'scan', status: 'error', exitCode: 3 });
    const html = await runFerry(['scan', join(dir, 'src'), '--html', join(dir, 'no-such-folder', 'page.html')], {});
    expect(html.code).toBe(2);
    expect(html.stderr).toMatch(/--html .*the folder .*no-such-folder does not exist/);
    const to = await runFerry(['scan', join(dir, 'src'), '--to', 'x'], {});
    expect(to.code).toBe(2);
    expect(to.stderr).toMatch(/--to names a folder of the project: give --project too/);
    await rm(dir, { recursive: true, force: true });
  });
});

describe('an archive', () => {
  it('a zip: no service needed; its candidates are read by walking it once more, the copies grouped, the strangers not', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-scan-zip-'));
    const zip = join(dir, 'export.zip');
    await writeFile(zip, await zipOf([{ name: 'a/one.txt', data: 'copy' }, { name: 'b/two.txt', data: 'copy' }, { name: 'c/three.txt', data: 'copy' }, { name: 'x.dat', data: 'AAAA' }, { name: 'y.dat', data: 'BBBB' }, { name: 'lone.pdf', data: 'unique size' }]));
    const r = await runFerry(['scan', zip, '--json'], {});
    expect(r.code, r.stderr).toBe(0);
    const s = onlyJson(r) as Scan;
    expect(s.census).toMatchObject({ files: 6, bytes: 4 * 5 + 11 });
    expect(s.duplicates).toMatchObject({ groups: 1, extraCopies: 2, wastedBytes: 8, hashedFiles: 5 });
    expect(s.duplicates.largestGroups[0]!.paths).toEqual(['a/one.txt', 'b/two.txt', 'c/three.txt']);
    expect(s).not.toHaveProperty('outlook');
    await rm(dir, { recursive: true, force: true });
  });
});

describe('a manifest beside the files', () => {
  it('as Excel saves it (BOM, CRLF, semicolons, a quoted line break): a row naming no file is said, with or without a project; a path twice is exit 2', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-scan-manifest-'));
    await writeTree(join(dir, 'src'), { 'real/a.txt': 'a', 'real/b.txt': 'b' });
    await writeFile(join(dir, 'm.csv'), '\ufeffpath;client;note\r\nreal/a.txt;Contoso;"two\r\nlines"\r\nreal/gone.txt;X;y\r\n');
    const r = await runFerry(['scan', join(dir, 'src'), '--manifest', join(dir, 'm.csv'), '--json'], {});
    expect(r.code, r.stderr).toBe(0);
    expect((onlyJson(r) as { notes: string[] }).notes).toEqual([expect.stringMatching(/1 row of the manifest names no file of the source: "real\/gone.txt"/)]);
    const project = (await useEmulator().client().projects.create({ name: 'scan manifest', description: 'issue 55' })).objectIdentifier;
    const p = await runFerry(['scan', join(dir, 'src'), '--manifest', join(dir, 'm.csv'), '--project', project, '--json'], useEmulator().env());
    expect(p.code, p.stderr).toBe(0);
    expect((onlyJson(p) as { notes: string[] }).notes).toEqual([expect.stringMatching(/names no file of the source: "real\/gone.txt"/)]);
    await writeFile(join(dir, 'twice.csv'), 'path;client\r\nreal/a.txt;A\r\nreal/a.txt;B\r\n');
    const twice = await runFerry(['scan', join(dir, 'src'), '--manifest', join(dir, 'twice.csv'), '--json'], {});
    expect(twice.code).toBe(2);
    expect(twice.stderr).toMatch(/line 3: "real\/a.txt" has a row already, on line 2/);
    await rm(dir, { recursive: true, force: true });
  });
});

describe('a tree that changes during the scan', () => {
  it('files gone before their read are counted as vanished, never a crash', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-scan-vanish-'));
    await writeTree(dir, { 'a.txt': 'same', 'b.txt': 'same', 'c.txt': 'same', 'd.txt': 'other!' });
    const census = await Census.open();
    try {
      const source = await openSource(dir, { followSymlinks: false });
      for await (const entry of source.entries()) census.add(entry);
      await source.close();
      await rm(join(dir, 'c.txt'));
      const found = await findDuplicates(census, () => openSource(dir, { followSymlinks: false }));
      expect(found.vanished).toEqual([{ path: 'c.txt', reason: 'ENOENT' }]);
      expect(found).toMatchObject({ groups: 1, extraCopies: 1, wastedBytes: 4, hashedFiles: 2 });
    } finally {
      await census.close();
    }
    expect(await readFile(join(dir, 'd.txt'), 'utf8')).toBe('other!');
    await rm(dir, { recursive: true, force: true });
  });
});
