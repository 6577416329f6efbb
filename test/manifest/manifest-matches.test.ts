// A sheet that matches nothing stops before the first upload: every version the service keeps is
// for good, and documents sent without their metadata would stay so. Paths written with the
// mirrored folder's own name as a prefix are exit 2 naming the fix, nothing sent; with
// --manifest-partial the run goes on knowingly. Paths written with backslashes, as Windows users
// copy them, are read with / and said so.
import { describe, expect, it } from 'vitest';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { remoteFiles, useService, writeTree } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';

const useEmulator = useService();

const FILES = { 'Müller GmbH/Vertrag.pdf': 'vertrag', 'Müller GmbH/Angebot.txt': 'angebot', 'Intern/Notiz.txt': 'notiz' };

async function setUp(label: string, sheet: string) {
  const dir = await mkdtemp(join(tmpdir(), `ferry-matches-${label}-`));
  const src = join(dir, 'tree');
  await writeTree(src, FILES);
  await writeFile(join(dir, 'sheet.csv'), sheet);
  const client = useEmulator().client();
  const project = (await client.projects.create({ name: `matches ${label}`, description: '' })).objectIdentifier;
  return { dir, src, sheet: join(dir, 'sheet.csv'), client, project };
}

const rows = (path: (key: string) => string) => `\ufeffpath,Kunde\r\n${Object.keys(FILES).map((k, i) => `${path(k)},Kunde ${i}`).join('\r\n')}\r\n`;

describe('a manifest whose rows name no file of the folder', () => {
  it("the folder's own name as a prefix: exit 2 naming the fix, nothing sent; --manifest-partial goes on", async () => {
    const w = await setUp('prefix', rows((k) => `tree/${k}`));
    const before = (await remoteFiles(w.client, w.project)).length;
    const r = await runFerry(['mirror', w.src, '--project', w.project, '--manifest', w.sheet, '--state', join(w.dir, 's.sqlite'), '--json'], useEmulator().env());
    expect(r.code, r.stderr).toBe(2);
    const error = (onlyJson(r) as { error: string }).error;
    expect(error).toMatch(/none of its 3 rows names a file/);
    expect(error).toMatch(/Every row starts with "tree\/".*remove that prefix/);
    expect(error).toMatch(/--manifest-partial/);
    expect(await remoteFiles(w.client, w.project)).toHaveLength(before);

    const dry = await runFerry(['mirror', w.src, '--project', w.project, '--manifest', w.sheet, '--dry-run'], useEmulator().env());
    expect(dry.code).toBe(2);

    const partial = await runFerry(['mirror', w.src, '--project', w.project, '--manifest', w.sheet, '--manifest-partial', '--state', join(w.dir, 's.sqlite'), '--json'], useEmulator().env());
    expect(partial.code, partial.stderr).toBe(0);
    expect(onlyJson(partial)).toMatchObject({ counts: expect.objectContaining({ uploaded: 3 }), manifest: { unmatched: { count: 3 } } });
  });

  it('a sheet of which under half the rows name a file (one of three right, two with the prefix): exit 2 naming those that do not, nothing sent', async () => {
    const keys = Object.keys(FILES);
    const w = await setUp('under half', rows((k) => (k === keys[0] ? k : `tree/${k}`)));
    const before = (await remoteFiles(w.client, w.project)).length;
    const r = await runFerry(['mirror', w.src, '--project', w.project, '--manifest', w.sheet, '--state', join(w.dir, 's.sqlite'), '--json'], useEmulator().env());
    expect(r.code, r.stderr).toBe(2);
    const error = (onlyJson(r) as { error: string }).error;
    expect(error).toMatch(/of its 3 rows only 1 \(under half\) name a file of .*\("tree\/Müller GmbH\/Angebot\.txt", "tree\/Intern\/Notiz\.txt" do not\); nothing was sent/);
    expect(error).toMatch(/--manifest-partial/);
    expect(await remoteFiles(w.client, w.project)).toHaveLength(before);
  });

  it('backslashes between folders, as Windows users copy paths: read as /, every document with its row, said', async () => {
    const w = await setUp('backslash', rows((k) => k.replace(/\//g, '\\')));
    const r = await runFerry(['mirror', w.src, '--project', w.project, '--manifest', w.sheet, '--state', join(w.dir, 's.sqlite'), '--json'], useEmulator().env());
    expect(r.code, r.stderr).toBe(0);
    const summary = onlyJson(r) as { manifest: { unmatched: { count: number }; separatorsRead: number }; problems: { key: string; reason: string }[] };
    expect(summary.manifest).toMatchObject({ unmatched: { count: 0 }, separatorsRead: 3 });
    expect(summary.problems).toContainEqual({ key: '(manifest)', reason: expect.stringMatching(/3 rows of the manifest use \\ between folders .*read as \//) });
    const docs = await remoteFiles(w.client, w.project);
    const kunde = Object.fromEntries(docs.map((d) => [d.path!.replace(/^\//, ''), d.metadata?.find((m) => m.key === 'Kunde')?.value]));
    expect(kunde).toEqual({ 'Müller GmbH/Vertrag.pdf': 'Kunde 0', 'Müller GmbH/Angebot.txt': 'Kunde 1', 'Intern/Notiz.txt': 'Kunde 2' });
  });
});

describe('a manifest in a code page (old Excel\'s "CSV (Comma delimited)")', () => {
  const SHEET = '\ufeffpath,Kunde,Notiz\r\nMüller GmbH/Vertrag.pdf,Société Générale,Größe: 3 Seiten\r\nMüller GmbH/Angebot.txt,Café Crème,"Übersicht, März"\r\nIntern/Notiz.txt,Ärzte,naïve\r\n';
  const expected = { 'Müller GmbH/Vertrag.pdf': ['Société Générale', 'Größe: 3 Seiten'], 'Müller GmbH/Angebot.txt': ['Café Crème', 'Übersicht, März'], 'Intern/Notiz.txt': ['Ärzte', 'naïve'] };
  it('--manifest-encoding windows-1252 gives the metadata the UTF-8 sheet gives; without it, exit 2 naming the flag', async () => {
    const w = await setUp('cp1252', SHEET);
    // Written by iconv, as a Windows machine in Western Europe saves it: no byte-order mark, CRLF.
    execFileSync('sh', ['-c', `tail -c +4 "${w.sheet}" | iconv -f UTF-8 -t WINDOWS-1252 > "${w.sheet}.cp1252.csv"`]);
    const legacy = `${w.sheet}.cp1252.csv`;
    expect((await readFile(legacy)).includes(Buffer.from('Société'))).toBe(false);

    const refused = await runFerry(['mirror', w.src, '--project', w.project, '--manifest', legacy, '--state', join(w.dir, 's.sqlite'), '--json'], useEmulator().env());
    expect(refused.code).toBe(2);
    expect((onlyJson(refused) as { error: string }).error).toMatch(/line 2: not UTF-8 .*plain words in windows-1252 \("Müller GmbH\/Vertrag\.pdf"\): give --manifest-encoding windows-1252/);
    expect(await remoteFiles(w.client, w.project)).toEqual([]);

    const bad = await runFerry(['mirror', w.src, '--project', w.project, '--manifest', legacy, '--manifest-encoding', 'latin-9000'], useEmulator().env());
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--manifest-encoding "latin-9000" is not a code page ferry knows; it takes cp437, .*windows-1252/);

    const r = await runFerry(['mirror', w.src, '--project', w.project, '--manifest', legacy, '--manifest-encoding', 'windows-1252', '--state', join(w.dir, 's.sqlite'), '--json'], useEmulator().env());
    expect(r.code, r.stderr).toBe(0);
    const other = await setUp('utf8', SHEET);
    expect((await runFerry(['mirror', other.src, '--project', other.project, '--manifest', other.sheet, '--state', join(other.dir, 's.sqlite')], useEmulator().env())).code).toBe(0);
    for (const [client, project] of [[w.client, w.project], [other.client, other.project]] as const) {
      const docs = await remoteFiles(client, project);
      const got = Object.fromEntries(docs.map((d) => [d.path!.replace(/^\//, ''), ['Kunde', 'Notiz'].map((k) => d.metadata?.find((m) => m.key === k)?.value)]));
      expect(got).toEqual(expected);
    }
  });
});

describe('the manifest in the text of a dry run and a run', () => {
  it('rows read, rows matched, rows naming no file, and the files with no row', async () => {
    const w = await setUp('said', '\ufeffpath,Kunde\r\nMüller GmbH/Vertrag.pdf,A\r\nIntern/Notiz.txt,B\r\nGeist/fehlt.pdf,C\r\n');
    const line = /manifest .*sheet\.csv: 3 rows read, 2 matched a file, 1 named none; 1 file with no row \("Müller GmbH\/Angebot\.txt"\)/;
    const dry = await runFerry(['mirror', w.src, '--project', w.project, '--manifest', w.sheet, '--dry-run'], useEmulator().env());
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(line);
    const run = await runFerry(['mirror', w.src, '--project', w.project, '--manifest', w.sheet, '--state', join(w.dir, 's.sqlite')], useEmulator().env());
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(line);
    const json = await runFerry(['mirror', w.src, '--project', w.project, '--manifest', w.sheet, '--dry-run', '--json'], useEmulator().env());
    expect(onlyJson(json)).toMatchObject({ manifest: { rows: 3, matched: 2, withoutRow: { count: 1, paths: ['Müller GmbH/Angebot.txt'] } } });
  });
});
