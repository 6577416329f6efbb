// The .xlsx manifest, read and written, on real files: ferry's own writer read back by its reader
// over names and values people really have (property-based), numbers shown as their formats say,
// and each way a workbook can be wrong said with its cell. LibreOffice's files: libreoffice.test.ts.
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import fc from 'fast-check';
import { numberTexts } from '../../src/manifest/cell-text.js';

const numberText = await numberTexts();
import { readManifest } from '../../src/manifest/read.js';
import { columnIndex, columnName, readWorkbook } from '../../src/manifest/workbook-read.js';
import { escapeCell, writeWorkbook } from '../../src/manifest/workbook-write.js';

async function folder(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'ferry-workbook-'));
}

async function* from<T>(items: T[]): AsyncIterable<T> {
  yield* items;
}

async function sheetOf(file: string, sheet?: string): Promise<(string | undefined)[][]> {
  const out: (string | undefined)[][] = [];
  for await (const row of readWorkbook(file, { sheet })) out.push(row.cells);
  return out;
}

async function manifestRows(file: string, sheet?: string) {
  const out = [];
  for await (const row of readManifest(file, sheet ? { sheet } : {})) out.push(row);
  return out;
}

/** A workbook from parts given as text, zipped by Python's zipfile (another writer than ferry's). */
async function workbook(dir: string, name: string, parts: Record<string, string>): Promise<string> {
  const path = join(dir, name);
  const py = `import zipfile, sys, json
parts = json.loads(sys.stdin.read())
with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:
    for name, text in parts.items():
        z.writestr(name, text)
`;
  execFileSync('python3', ['-c', py, path], { input: JSON.stringify(parts) });
  return path;
}

const NS = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"';

/** The parts of a workbook of the given sheets (name to sheetData XML), styles and shared strings. */
function parts(sheets: Record<string, string>, extra: { styles?: string; strings?: string[]; date1904?: boolean } = {}): Record<string, string> {
  const names = Object.keys(sheets);
  const out: Record<string, string> = {
    '[Content_Types].xml': '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>',
    'xl/workbook.xml': `<workbook ${NS}>${extra.date1904 ? '<workbookPr date1904="1"/>' : ''}<sheets>${names.map((n, i) => `<sheet name="${n}" sheetId="${i + 1}" r:id="rId${i + 1}"/>`).join('')}</sheets></workbook>`,
    'xl/_rels/workbook.xml.rels': `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${names.map((_, i) => `<Relationship Id="rId${i + 1}" Target="worksheets/s${i + 1}.xml"/>`).join('')}</Relationships>`,
  };
  names.forEach((n, i) => (out[`xl/worksheets/s${i + 1}.xml`] = `<worksheet ${NS}><sheetData>${sheets[n]}</sheetData></worksheet>`));
  if (extra.styles) out['xl/styles.xml'] = `<styleSheet ${NS}>${extra.styles}</styleSheet>`;
  if (extra.strings) out['xl/sharedStrings.xml'] = `<sst ${NS}>${extra.strings.map((s) => `<si>${s}</si>`).join('')}</sst>`;
  return out;
}

describe('columns', () => {
  it('names and numbers them as a sheet does', () => {
    for (const [name, index] of [['A', 0], ['Z', 25], ['AA', 26], ['AZ', 51], ['XFD', 16383]] as const) {
      expect(columnIndex(name)).toBe(index);
      expect(columnName(index)).toBe(name);
    }
  });
});

describe('a number cell', () => {
  it('is shown as its format shows it, separators and date separator by the format’s locale', () => {
    expect(numberText('1234.5', 165, '[$-407]#,##0.00', false)).toBe('1.234,50');
    expect(numberText('46095', 166, '[$-407]dd/mm/yyyy', false)).toBe('14.03.2026');
    expect(numberText('46095', 166, '[$-419]dd/mm/yyyy', false)).toBe('14.03.2026');
    expect(numberText('46095', 166, 'dd/mm/yyyy', false)).toBe('14/03/2026');
    expect(numberText('0.25', 9, undefined, false)).toBe('25%');
    expect(numberText('1234.5', 4, undefined, false)).toBe('1,234.50');
  });

  it('is written as ISO 8601 under the machine’s own short date, in either date system', () => {
    expect(numberText('46095', 14, undefined, false)).toBe('2026-03-14');
    expect(numberText('44633', 14, undefined, true)).toBe('2026-03-14');
    expect(numberText('46095.5', 22, undefined, false)).toBe('2026-03-14 12:00');
  });

  it('keeps every digit under General', () => {
    expect(numberText('1234567890123', 0, undefined, false)).toBe('1234567890123');
    expect(numberText('0.1', 0, undefined, false)).toBe('0.1');
    expect(numberText('1E-7', 0, undefined, false)).toBe('0.0000001');
    expect(numberText('007', 0, 'General', false)).toBe('007');
  });
});

describe('ferry’s own workbook', () => {
  it('reads back exactly what it wrote, for any text (control characters, CR, lone surrogates, _x0041_, U+2028)', async () => {
    const dir = await folder();
    let n = 0;
    const cell = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc.constantFrom('_x0041_', '_x005F_x0041_', 'a\r\nb', '\r', 'line\u2028sep', '\ud800', '\udc00x', '0012', '1.2.2026', '=SUM(A1)', ' lead', 'trail '),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(cell, { minLength: 3, maxLength: 3 }), { minLength: 1, maxLength: 8 }), async (body) => {
        const file = join(dir, `w${n++}.xlsx`);
        const header = ['path', 'a', 'b'];
        await writeWorkbook(from([header, ...body]), createWriteStream(file));
        const back = await sheetOf(file);
        // Empty rows are left out by the reader; an empty cell comes back as undefined.
        const expected = [header, ...body].filter((r) => r.some((c) => c !== '')).map((r) => r.map((c) => (c === '' ? undefined : c)));
        expect(back.map((r) => Array.from({ length: 3 }, (_, i) => r[i]))).toEqual(expected);
      }),
      { numRuns: 60 },
    );
  });

  it('escapes what XML cannot hold and nothing else', () => {
    expect(escapeCell('a<b & "c"')).toBe('a&lt;b &amp; &quot;c&quot;');
    expect(escapeCell('a\rb\x01')).toBe('a_x000D_b_x0001_');
    expect(escapeCell('_x0041_')).toBe('_x005F_x0041_');
    expect(escapeCell('取締役\n第二回')).toBe('取締役\n第二回');
  });

  it('is refused when a cell would be longer than a sheet cell holds, naming the cell', async () => {
    const dir = await folder();
    await expect(writeWorkbook(from([['path', 'note'], ['a.pdf', 'x'.repeat(32_768)]]), createWriteStream(join(dir, 'long.xlsx')))).rejects.toThrow(/cell B2 would hold 32768 characters.*write the manifest as \.csv/);
  });
});

describe('a workbook another program wrote', () => {
  it('gives shared strings without their phonetic guides, rich text joined, booleans, formulas’ saved values, and skips empty rows', async () => {
    const dir = await folder();
    const file = await workbook(
      dir,
      'book.xlsx',
      parts(
        {
          Akten: `<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c><c r="C1" t="inlineStr"><is><t>flag</t></is></c><c r="D1" t="str"><v>total</v></c></row>
<row r="3"><c r="A3" t="s"><v>2</v></c><c r="B3" t="s"><v>3</v></c><c r="C3" t="b"><v>1</v></c><c r="D3"><f>1+1</f><v>2</v></c></row>
<row r="4"><c r="A4" t="s"><v>4</v></c><c r="C4" t="b"><v>0</v></c><c r="D4" t="str"><f>"a"&amp;"b"</f><v>ab</v></c></row>`,
        },
        { strings: ['<t>path</t>', '<t>名前</t>', '<t>議事録.pdf</t>', '<r><t>東京</t></r><r><t xml:space="preserve"> 本社</t></r><rPh sb="0" eb="2"><t>トウキョウ</t></rPh>', '<t>b.pdf</t>'] },
      ),
    );
    expect(await sheetOf(file)).toEqual([
      ['path', '名前', 'flag', 'total'],
      ['議事録.pdf', '東京 本社', 'TRUE', '2'],
      ['b.pdf', undefined, 'FALSE', 'ab'],
    ]);
    const rows = await manifestRows(file);
    expect(rows.map((r) => [r.line, r.path, r.metadata])).toEqual([
      [3, '議事録.pdf', { 名前: '東京 本社', flag: 'TRUE', total: '2' }],
      [4, 'b.pdf', { flag: 'FALSE', total: 'ab' }],
    ]);
  });

  it('reads the sheet named by --manifest-sheet, and lists the sheets when there is none so named', async () => {
    const dir = await folder();
    const file = await workbook(dir, 'two.xlsx', parts({ Intro: '<row r="1"><c r="A1" t="inlineStr"><is><t>read me</t></is></c></row>', Files: '<row r="1"><c r="A1" t="inlineStr"><is><t>path</t></is></c></row><row r="2"><c r="A2" t="inlineStr"><is><t>x.pdf</t></is></c></row>' }));
    expect((await manifestRows(file, 'Files')).map((r) => r.path)).toEqual(['x.pdf']);
    await expect(manifestRows(file, 'Dateien')).rejects.toThrow(/--manifest-sheet "Dateien": .*two\.xlsx has no such sheet; its sheets are "Intro", "Files"/);
    await expect(manifestRows(file)).rejects.toThrow(/row 1 \(the header\) has no "path" column/);
  });

  it('formats numbers by the workbook’s styles, in the 1904 date system too', async () => {
    const dir = await folder();
    const styles = '<numFmts><numFmt numFmtId="164" formatCode="[$-407]#,##0.00"/><numFmt numFmtId="165" formatCode="[$-407]dd/mm/yyyy"/></numFmts><cellXfs><xf numFmtId="0"/><xf numFmtId="164"/><xf numFmtId="165"/><xf numFmtId="14"/></cellXfs>';
    const sheet = '<row r="1"><c r="A1" t="inlineStr"><is><t>path</t></is></c><c r="B1" t="inlineStr"><is><t>Betrag</t></is></c><c r="C1" t="inlineStr"><is><t>Datum</t></is></c><c r="D1" t="inlineStr"><is><t>iso</t></is></c><c r="E1" t="inlineStr"><is><t>n</t></is></c></row><row r="2"><c r="A2" t="inlineStr"><is><t>a.pdf</t></is></c><c r="B2" s="1"><v>1234.5</v></c><c r="C2" s="2"><v>44633</v></c><c r="D2" s="3"><v>44633</v></c><c r="E2"><v>4711</v></c></row>';
    const file = await workbook(dir, 'n.xlsx', parts({ S: sheet }, { styles, date1904: true }));
    expect((await manifestRows(file))[0]?.metadata).toEqual({ Betrag: '1.234,50', Datum: '14.03.2026', iso: '2026-03-14', n: '4711' });
  });

  it('is refused, naming the cells, for a header not in row 1, a column named twice, a formula with no saved value, an error value, a value under no header', async () => {
    const dir = await folder();
    const cases: [string, RegExp][] = [
      ['<row r="2"><c r="A2" t="inlineStr"><is><t>path</t></is></c></row>', /row 1 \(the header\) is empty: the header .* goes in the first row, from cell A1/],
      ['<row r="1"><c r="A1" t="inlineStr"><is><t>path</t></is></c><c r="B1" t="inlineStr"><is><t>k</t></is></c><c r="D1" t="inlineStr"><is><t>k</t></is></c></row>', /cell C1 has no name/],
      ['<row r="1"><c r="A1" t="inlineStr"><is><t>path</t></is></c><c r="B1" t="inlineStr"><is><t>k</t></is></c><c r="C1" t="inlineStr"><is><t>k</t></is></c></row>', /the column "k" is named twice \(cell B1 and cell C1\)/],
      ['<row r="1"><c r="A1" t="inlineStr"><is><t>path</t></is></c><c r="B1" t="inlineStr"><is><t>k</t></is></c></row><row r="2"><c r="A2" t="inlineStr"><is><t>a</t></is></c><c r="B2"><f>SUM(X1:X9)</f></c></row>', /cell B2 holds a formula with no saved value/],
      ['<row r="1"><c r="A1" t="inlineStr"><is><t>path</t></is></c><c r="B1" t="inlineStr"><is><t>k</t></is></c></row><row r="2"><c r="A2" t="inlineStr"><is><t>a</t></is></c><c r="B2" t="e"><v>#N/A</v></c></row>', /cell B2 holds the error #N\/A/],
      ['<row r="1"><c r="A1" t="inlineStr"><is><t>path</t></is></c></row><row r="2"><c r="A2" t="inlineStr"><is><t>a</t></is></c><c r="C2" t="inlineStr"><is><t>x</t></is></c></row>', /cell C2 holds a value, but its column has no name in row 1/],
    ];
    for (const [i, [sheet, message]] of cases.entries()) {
      const file = await workbook(dir, `bad${i}.xlsx`, parts({ S: sheet }));
      await expect(manifestRows(file), sheet).rejects.toThrow(message);
    }
  });

  it('is refused as damaged when truncated or not XML, and as password-protected when encrypted, saying so', async () => {
    const dir = await folder();
    const good = await workbook(dir, 'good.xlsx', parts({ S: '<row r="1"><c r="A1" t="inlineStr"><is><t>path</t></is></c></row>' }));
    const bytes = execFileSync('head', ['-c', '200', good]);
    await writeFile(join(dir, 'cut.xlsx'), bytes);
    await expect(manifestRows(join(dir, 'cut.xlsx'))).rejects.toThrow(/it is a damaged workbook: not a readable zip/);
    const broken = await workbook(dir, 'broken.xlsx', { ...parts({ S: '' }), 'xl/worksheets/s1.xml': `<worksheet ${NS}><sheetData><row><c>` });
    await expect(manifestRows(broken)).rejects.toThrow(/it is a damaged workbook: xl\/worksheets\/s1\.xml cannot be read/);
    const missing = await workbook(dir, 'nosheet.xlsx', { '[Content_Types].xml': '<Types/>', 'xl/styles.xml': '<styleSheet/>' });
    await expect(manifestRows(missing)).rejects.toThrow(/the part xl\/workbook\.xml is missing/);
    // An encrypted workbook is an OLE file holding an EncryptedPackage stream (as Excel saves one with a password).
    const ole = Buffer.alloc(4096);
    Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]).copy(ole);
    Buffer.from('EncryptedPackage', 'utf16le').copy(ole, 1024);
    await writeFile(join(dir, 'locked.xlsx'), ole);
    await expect(manifestRows(join(dir, 'locked.xlsx'))).rejects.toThrow(/it is a password-protected workbook.*without the password/);
  });
});
