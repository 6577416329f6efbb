// The sheet as people keep it, made and saved by LibreOffice itself (Debian's libreoffice-calc-nogui,
// installed by .ci/run): one sheet with a line break in a cell, a comma, a quote, a decimal comma,
// a de-DE date, Japanese and Cyrillic, exported as .xlsx, as a `;` CSV and as a `,` CSV. Each gives
// every document exactly the metadata of its row. Then ferry's own manifest-out, as CSV and as
// xlsx, opened and saved again by LibreOffice, mirrored into another project, gives the same again,
// and plans no change against the first project. Python's csv reads ferry's CSV to the same rows.
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { remoteFiles, useService, writeTree } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';

const useEmulator = useService();

interface Row {
  path: string;
  Kunde: string;
  /** A number, shown with a decimal comma. */
  Betrag: number;
  /** A date, shown as de-DE shows it. */
  Datum: string;
  Notiz: string[];
}

const ROWS: Row[] = [
  { path: 'Müller GmbH/Vertrag.pdf', Kunde: 'Müller, Sohn & Co', Betrag: 1234.5, Datum: '2026-03-14', Notiz: ['取締役会議事録', '第二回 "Ja"'] },
  { path: 'Договоры/Договор №5.docx', Kunde: 'ООО «Ромашка»', Betrag: 0.5, Datum: '2025-12-01', Notiz: ['Кириллица'] },
  { path: 'Preise/Liste; März.txt', Kunde: 'a; b', Betrag: 12, Datum: '2024-02-29', Notiz: ['Preisliste Stand März', 'zweite Zeile'] },
];

/** What each document must carry: the cells as LibreOffice shows them. */
const EXPECTED: Record<string, Record<string, string>> = {
  'Müller GmbH/Vertrag.pdf': { Kunde: 'Müller, Sohn & Co', Betrag: '1.234,50', Datum: '14.03.2026', Notiz: '取締役会議事録\n第二回 "Ja"' },
  'Договоры/Договор №5.docx': { Kunde: 'ООО «Ромашка»', Betrag: '0,50', Datum: '01.12.2025', Notiz: 'Кириллица' },
  'Preise/Liste; März.txt': { Kunde: 'a; b', Betrag: '12,00', Datum: '29.02.2024', Notiz: 'Preisliste Stand März\nzweite Zeile' },
};

const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');
const text = (s: string) => `<table:table-cell office:value-type="string">${s.split('\n').map((p) => `<text:p>${xml(p)}</text:p>`).join('')}</table:table-cell>`;

/** The sheet as a flat OpenDocument file, the way a person's de-DE LibreOffice keeps it. */
function fods(): string {
  const rows = ROWS.map(
    (r) =>
      `<table:table-row>${text(r.path)}${text(r.Kunde)}<table:table-cell table:style-name="ce1" office:value-type="float" office:value="${r.Betrag}"/><table:table-cell table:style-name="ce2" office:value-type="date" office:date-value="${r.Datum}"/>${text(r.Notiz.join('\n'))}</table:table-row>`,
  );
  return `<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" xmlns:number="urn:oasis:names:tc:opendocument:xmlns:datastyle:1.0" office:version="1.2" office:mimetype="application/vnd.oasis.opendocument.spreadsheet">
<office:styles>
 <number:number-style style:name="N_de" number:language="de" number:country="DE"><number:number number:decimal-places="2" number:min-decimal-places="2" number:min-integer-digits="1" number:grouping="true"/></number:number-style>
 <number:date-style style:name="D_de" number:language="de" number:country="DE"><number:day number:style="long"/><number:text>.</number:text><number:month number:style="long"/><number:text>.</number:text><number:year number:style="long"/></number:date-style>
</office:styles>
<office:automatic-styles>
 <style:style style:name="ce1" style:family="table-cell" style:data-style-name="N_de"/>
 <style:style style:name="ce2" style:family="table-cell" style:data-style-name="D_de"/>
</office:automatic-styles>
<office:body><office:spreadsheet><table:table table:name="Akten">
<table:table-row>${['path', 'Kunde', 'Betrag', 'Datum', 'Notiz'].map(text).join('')}</table:table-row>
${rows.join('\n')}
</table:table></office:spreadsheet></office:body></office:document>`;
}

/**
 * LibreOffice converts `file` into `outdir` (its own profile, so that runs do not share one). A
 * CSV is read as UTF-8 with `,`; `filter` is the output filter with its options.
 */
function soffice(profile: string, file: string, outdir: string, filter: string): void {
  const args = [`-env:UserInstallation=file://${profile}`, '--headless', '--norestore'];
  if (file.endsWith('.csv')) args.push('--infilter=Text - txt - csv (StarCalc):44,34,76,1');
  execFileSync('soffice', [...args, '--convert-to', filter, '--outdir', outdir, file], { stdio: 'pipe', timeout: 120_000 });
}

const CSV_COMMA = 'csv:Text - txt - csv (StarCalc):44,34,76';
const CSV_SEMICOLON = 'csv:Text - txt - csv (StarCalc):59,34,76';

describe('sheets LibreOffice made and saved', () => {
  it('its xlsx, its ; CSV and its , CSV give every document its row; manifest-out as CSV and xlsx, saved again by LibreOffice, gives the same and plans no change', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-libreoffice-'));
    const profile = join(dir, 'profile');
    await writeTree(join(dir, 'src'), Object.fromEntries(ROWS.map((r) => [r.path, `content of ${r.path}`])));
    await writeFile(join(dir, 'sheet.fods'), fods());
    for (const [outdir, filter] of [['xlsx', 'xlsx'], ['semicolon', CSV_SEMICOLON], ['comma', CSV_COMMA]] as const) {
      await mkdir(join(dir, outdir));
      soffice(profile, join(dir, 'sheet.fods'), join(dir, outdir), filter);
    }
    const client = useEmulator().client();
    const env = useEmulator().env();

    /** Mirrors `tree` with `manifest` into a new project and returns each document's metadata by path (ferry's own keys left out). */
    const mirrored = async (name: string, tree: string, manifest: string): Promise<{ project: string; metadata: Record<string, Record<string, string>> }> => {
      const project = (await client.projects.create({ name, description: '' })).objectIdentifier;
      const run = await runFerry(['mirror', tree, '--project', project, '--manifest', manifest, '--state', join(dir, `${name}.sqlite`), '--json'], env);
      expect(run.code, `${name}: ${run.stderr}`).toBe(0);
      const docs = await remoteFiles(client, project);
      const metadata = Object.fromEntries(docs.map((d) => [d.path!.replace(/^\//, ''), Object.fromEntries((d.metadata ?? []).filter((m) => !m.key.startsWith('ferry.')).map((m) => [m.key, m.value]))]));
      return { project, metadata };
    };

    const fromXlsx = await mirrored('from-xlsx', join(dir, 'src'), join(dir, 'xlsx', 'sheet.xlsx'));
    expect(fromXlsx.metadata).toEqual(EXPECTED);
    expect((await mirrored('from-semicolon', join(dir, 'src'), join(dir, 'semicolon', 'sheet.csv'))).metadata).toEqual(EXPECTED);
    expect((await mirrored('from-comma', join(dir, 'src'), join(dir, 'comma', 'sheet.csv'))).metadata).toEqual(EXPECTED);

    // ferry's manifest-out, as CSV and as xlsx, from the project the workbook filled.
    const pulled = join(dir, 'pulled');
    for (const out of ['back.csv', 'back.xlsx']) {
      const pull = await runFerry(['pull', fromXlsx.project, pulled, '--manifest-out', join(dir, out), '--state', join(dir, 'pull.sqlite'), '--json'], env);
      expect(pull.code, pull.stderr).toBe(0);
    }
    // A second reader of ferry's CSV: Python's csv module gives exactly the rows ferry wrote.
    const script = 'import csv, json, sys\nwith open(sys.argv[1], newline="", encoding="utf-8-sig") as f:\n    print(json.dumps(list(csv.reader(f))))\n';
    const [header, ...body] = JSON.parse(execFileSync('python3', ['-c', script, join(dir, 'back.csv')], { encoding: 'utf8' })) as string[][];
    expect(header).toEqual(['path', 'Betrag', 'Datum', 'Kunde', 'Notiz']);
    expect(Object.fromEntries(body.map(([path, ...cells]) => [path, Object.fromEntries(header!.slice(1).map((k, i) => [k, cells[i]]))]))).toEqual(EXPECTED);

    // Each opened and saved again by LibreOffice, then mirrored into another project, and planned against the first.
    await mkdir(join(dir, 'resaved'));
    soffice(profile, join(dir, 'back.csv'), join(dir, 'resaved'), CSV_COMMA);
    soffice(profile, join(dir, 'back.xlsx'), join(dir, 'resaved'), 'xlsx');
    for (const again of ['back.csv', 'back.xlsx']) {
      const manifest = join(dir, 'resaved', again);
      expect((await mirrored(`resaved-${again}`, pulled, manifest)).metadata, again).toEqual(EXPECTED);
      const plan = await runFerry(['mirror', pulled, '--project', fromXlsx.project, '--manifest', manifest, '--dry-run', '--json'], env);
      expect(plan.code, plan.stderr).toBe(0);
      expect(onlyJson(plan), again).toMatchObject({ counts: { new: 0, changed: 0, unchanged: ROWS.length }, manifest: { unmatched: { count: 0 } } });
    }
  });
});
