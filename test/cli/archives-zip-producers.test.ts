// Zips as the tools users have write them, built byte for byte (test/helpers/zip-bytes.ts), each
// mirrored by `ferry` as a child process into the emulator over loopback: the names on the
// service are the names intended, a rerun uploads 0, and a name ferry is not sure of never goes up.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { remoteFiles, remoteFolders, startService, type Service } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';
import { HOST, inCodePage, rawZip, unicodePathField, type RawEntry } from '../helpers/zip-bytes.js';

let service: Service;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.close());

type Summary = { counts: Record<string, number>; errors?: { key: string; error: string }[]; problems?: { key: string; reason: string }[] };

/** Mirrors the zip into a new project (twice: the second run must upload 0); the paths the project then holds. */
async function mirrorTwice(label: string, entries: RawEntry[], flags: string[] = []) {
  const dir = await mkdtemp(join(tmpdir(), `ferry-producer-${label}-`));
  const zip = join(dir, `${label}.zip`);
  await writeFile(zip, rawZip(entries));
  const project = (await service.client().projects.create({ name: `producer ${label}`, description: 'archives issue' })).objectIdentifier;
  const run = () => runFerry(['mirror', zip, '--project', project, '--state', join(dir, 'state.sqlite'), '--json', ...flags], service.env());
  const first = await run();
  const summary = onlyJson(first) as Summary;
  const second = onlyJson(await run()) as Summary;
  const paths = (await remoteFiles(service.client(), project)).map((d) => d.path).sort();
  return { first, summary, second, paths, project, zip, dir };
}

describe('zips as their producers write them', () => {
  it('Windows Explorer: the OEM code page (cp437), no flag: plain words taken, said in the summary', async () => {
    const r = await mirrorTwice('explorer', [
      { name: inCodePage('Résumé.pdf', 'cp437'), data: 'cv' },
      { name: inCodePage('Größe/', 'cp437') },
      { name: inCodePage('Größe/Übersicht.docx', 'cp437'), data: 'overview' },
      { name: Buffer.from('plain.txt'), data: 'ascii' },
    ]);
    expect(r.first.code, r.first.stderr).toBe(0);
    expect(r.paths).toEqual(['/Größe/Übersicht.docx', '/Résumé.pdf', '/plain.txt']);
    expect(r.summary.counts).toMatchObject({ uploaded: 3, failed: 0 });
    expect(r.summary.problems).toContainEqual({ key: '(source)', reason: expect.stringContaining('3 names read as cp437, the zip default') });
    expect(r.second.counts).toMatchObject({ uploaded: 0, unchanged: 3 });
  });

  it('WinZip and Info-ZIP on Windows: "?" in the OEM name, the real one in a fresh Unicode Path field; a stale field ignored', async () => {
    const questions = inCodePage('日本語.txt', 'cp437');
    const renamed = inCodePage('Übersicht.docx', 'cp437');
    const r = await mirrorTwice('winzip', [
      { name: questions, extra: unicodePathField(questions, '日本語.txt'), data: 'nihongo', host: HOST.ntfs },
      // Renamed after the field was written: the field's CRC is of the old name.
      { name: renamed, extra: unicodePathField(inCodePage('Old name.docx', 'cp437'), 'Old name.docx'), data: 'renamed', host: HOST.ntfs },
    ]);
    expect(r.first.code, r.first.stderr).toBe(0);
    expect(r.paths).toEqual(['/Übersicht.docx', '/日本語.txt']);
    expect(r.second.counts).toMatchObject({ uploaded: 0 });
  });

  it('7-Zip: the OEM code page where the name fits it, UTF-8 with the flag where it does not', async () => {
    const r = await mirrorTwice('7zip', [
      { name: inCodePage('Café/Menü.txt', 'cp437'), data: 'menu' },
      { name: Buffer.from('Café/日本語.txt'), flags: 0x800, data: 'jp' },
    ]);
    expect(r.first.code, r.first.stderr).toBe(0);
    expect(r.paths).toEqual(['/Café/Menü.txt', '/Café/日本語.txt']);
    expect(r.second.counts).toMatchObject({ uploaded: 0 });
  });

  it('macOS Archive Utility: UTF-8 without the flag, decomposed names carried as they are', async () => {
    const nfd = 'Résumé.pdf'.normalize('NFD');
    const r = await mirrorTwice('macos', [{ name: Buffer.from(`Dossier/${nfd}`), host: HOST.unix, mode: 0o100644, data: 'cv' }]);
    expect(r.first.code, r.first.stderr).toBe(0);
    expect(r.paths).toEqual([`/Dossier/${nfd}`]);
    expect(r.summary.problems ?? []).toEqual([]);
    expect(r.second.counts).toMatchObject({ uploaded: 0 });
  });

  it('Python and Java: the flag set, UTF-8', async () => {
    const r = await mirrorTwice('python', [{ name: Buffer.from('données/Отчет 2024.txt'), flags: 0x800, host: HOST.unix, data: 'report' }]);
    expect(r.paths).toEqual(['/données/Отчет 2024.txt']);
    expect(r.second.counts).toMatchObject({ uploaded: 0 });
  });

  it('Explorer in Japan (cp932): without --archive-encoding nothing goes up and the option is named with the likely reading; with it, exact names', async () => {
    const entries: RawEntry[] = [
      { name: inCodePage('日本語の資料.txt', 'cp932'), data: 'shiryou' },
      { name: inCodePage('契約書/表計算.xlsx', 'cp932'), data: 'sheet' }, // 表 is 0x95 0x5C: a backslash byte inside a character
    ];
    const without = await mirrorTwice('sjis-unsaid', entries);
    expect(without.first.code).toBe(1);
    expect(without.paths).toEqual([]);
    expect(without.summary.counts).toMatchObject({ discovered: 2, uploaded: 0, failed: 2 });
    for (const e of without.summary.errors ?? []) expect(e.error).toContain('--archive-encoding');
    expect(without.summary.errors?.map((e) => e.error).join('\n')).toContain('cp932: 日本語の資料.txt');
    // The text a person reads names the option too, escaped.
    const text = await runFerry(['mirror', without.zip, '--project', without.project, '--state', join(without.dir, 'text.sqlite')], service.env());
    expect(text.stderr + text.stdout).toContain('--archive-encoding');

    const said = await mirrorTwice('sjis-said', entries, ['--archive-encoding', 'cp932']);
    expect(said.first.code, said.first.stderr).toBe(0);
    expect(said.paths).toEqual(['/契約書/表計算.xlsx', '/日本語の資料.txt']);
    expect(said.second.counts).toMatchObject({ uploaded: 0, unchanged: 2 });
  });

  it('Western Europe (cp850) with --archive-encoding cp850; without it, the letters cp437 reads as box drawing are refused, not guessed', async () => {
    const entries: RawEntry[] = [
      { name: inCodePage('Ação/Año.txt', 'cp850'), data: 'a' },
      { name: inCodePage('Résumé.pdf', 'cp850'), data: 'b' },
    ];
    const said = await mirrorTwice('cp850', entries, ['--archive-encoding', 'cp850']);
    expect(said.first.code, said.first.stderr).toBe(0);
    expect(said.paths).toEqual(['/Ação/Año.txt', '/Résumé.pdf']);
    expect(said.second.counts).toMatchObject({ uploaded: 0 });
    const unsaid = await mirrorTwice('cp850-unsaid', entries);
    expect(unsaid.paths).toEqual(['/Résumé.pdf']); // the same bytes in cp437 and cp850
    expect(unsaid.summary.errors).toEqual([{ key: expect.any(String), error: expect.stringContaining('cp850: Ação/Año.txt') }]);
  });

  it('Cyrillic capitals in cp866 are not taken for accented Latin (ПАПКА is not ÅÇÅèÇ)', async () => {
    const r = await mirrorTwice('cp866', [{ name: inCodePage('ПАПКА/ОТЧЕТ.TXT', 'cp866'), data: 'x' }]);
    expect(r.paths).toEqual([]);
    expect(r.summary.errors?.[0]?.error).toContain('cp866: ПАПКА/ОТЧЕТ.TXT');
    const said = await mirrorTwice('cp866-said', [{ name: inCodePage('ПАПКА/ОТЧЕТ.TXT', 'cp866'), data: 'x' }], ['--archive-encoding', 'cp866']);
    expect(said.paths).toEqual(['/ПАПКА/ОТЧЕТ.TXT']);
  });

  it('the dry run shows the decoded names and says which were read as cp437 unasked', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-producer-dry-'));
    const zip = join(dir, 'explorer.zip');
    await writeFile(zip, rawZip([{ name: inCodePage('Résumé.pdf', 'cp437'), data: 'cv' }, { name: inCodePage('日本語.txt', 'cp932'), data: 'jp' }]));
    const project = (await service.client().projects.create({ name: 'producer dry', description: 'archives issue' })).objectIdentifier;
    const r = await runFerry(['mirror', zip, '--project', project, '--state', join(dir, 'state.sqlite'), '--dry-run'], service.env());
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('upload, new: Résumé.pdf');
    expect(r.stdout).toContain('note: 1 name read as cp437, the zip default');
    expect(r.stdout).toMatch(/problem: .*\\x93\\xfa.*--archive-encoding/);
    const json = onlyJson(await runFerry(['mirror', zip, '--project', project, '--state', join(dir, 'state.sqlite'), '--dry-run', '--json'], service.env())) as Summary & { items: { key: string }[] };
    expect(json.items.map((i) => i.key)).toEqual(['Résumé.pdf']);
    expect(json.problems).toEqual([{ key: '(source)', reason: expect.stringContaining('1 name read as cp437') }]);
    expect(json.errors).toEqual([{ key: expect.any(String), error: expect.stringContaining('cp932: 日本語.txt') }]);
    expect(await remoteFiles(service.client(), project)).toEqual([]);
    expect(await remoteFolders(service.client(), project)).toEqual([]);
  });

  it('bad input: an unknown --archive-encoding is exit 2 naming those it takes; on a folder it is said to do nothing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-producer-bad-'));
    await writeFile(join(dir, 'a.zip'), rawZip([{ name: Buffer.from('a.txt'), data: 'a' }]));
    const project = (await service.client().projects.create({ name: 'producer bad', description: 'archives issue' })).objectIdentifier;
    const unknown = await runFerry(['mirror', join(dir, 'a.zip'), '--project', project, '--state', join(dir, 's.sqlite'), '--archive-encoding', 'klingon'], service.env());
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('--archive-encoding "klingon" is not a code page ferry knows; it takes cp437, cp850');
    expect(await remoteFiles(service.client(), project)).toEqual([]);
    const missing = await runFerry(['mirror', join(dir, 'gone.zip'), '--project', project, '--state', join(dir, 's.sqlite')], service.env());
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`source file ${join(dir, 'gone.zip')} cannot be read: ENOENT`);
    const folder = join(dir, 'tree');
    await (await import('node:fs/promises')).mkdir(folder);
    await writeFile(join(folder, 'f.txt'), 'f');
    const onFolder = await runFerry(['mirror', folder, '--project', project, '--state', join(dir, 's.sqlite'), '--archive-encoding', 'cp850', '--json'], service.env());
    expect(onFolder.code, onFolder.stderr).toBe(0);
    expect((onlyJson(onFolder) as Summary).problems).toContainEqual({ key: '(source)', reason: expect.stringContaining('--archive-encoding cp850 does nothing for a folder') });
  });
});
