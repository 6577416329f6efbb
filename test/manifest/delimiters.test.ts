// A wrong separator is said as one: a quoted sheet read with another separator than its own (given
// by mistake, or a header the sniffing cannot tell) names the separator that reads it, whichever of
// , ; | and tab it is. Each of , ; and tab is found by itself when not given; | (rare, and a
// character names hold) is named, not guessed.
import { describe, expect, it } from 'vitest';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { readManifest, type ManifestRow } from '../../src/manifest/read.js';
import { execFileSync } from 'node:child_process';

const SEPARATORS: [string, string][] = [[',', '","'], [';', '";"'], ['|', '"|"'], ['\t', 'tab']];

async function sheet(sep: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-delim-'));
  const file = join(dir, 'sheet.csv');
  const cells = (cs: string[]) => cs.map((c) => `"${c.replace(/"/g, '""')}"`).join(sep);
  await writeFile(file, `\ufeff${cells(['path', 'client', 'notes'])}\r\n${cells(['a.txt', 'ACME, Inc.; Ltd | Co', 'said "yes"'])}\r\n${cells(['b.txt', 'Globex', 'tab\there'])}\r\n`);
  return file;
}

async function rows(file: string, delimiter?: string): Promise<ManifestRow[]> {
  const out: ManifestRow[] = [];
  for await (const row of readManifest(file, delimiter ? { delimiter } : {})) out.push(row);
  return out;
}

describe('manifest separators', () => {
  for (const [sep, said] of SEPARATORS) {
    it(`a quoted sheet split by ${said}: read, and named when another was given`, async () => {
      const file = await sheet(sep);
      if (sep === '|') await expect(rows(file)).rejects.toThrow(/give --manifest-delimiter "\|"/);
      const found = await rows(file, sep === '|' ? '|' : undefined);
      expect(found.map((r) => [r.path, r.metadata.client, r.metadata.notes])).toEqual([
        ['a.txt', 'ACME, Inc.; Ltd | Co', 'said "yes"'],
        ['b.txt', 'Globex', 'tab\there'],
      ]);
      for (const [wrong] of SEPARATORS.filter(([other]) => other !== sep)) {
        await expect(rows(file, wrong)).rejects.toThrow(new RegExp(`give --manifest-delimiter ${said.replace(/[|]/g, '\\|')}`));
      }
    });
  }
});

describe('a workbook or a binary file given as the manifest', () => {
  it('is said as what it is, with how to save one ferry reads, never as a code page', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-workbooks-'));
    // Zips laid out as Excel and LibreOffice lay them out: [Content_Types].xml then xl/…; mimetype first, stored.
    const py = `import zipfile, sys
d = sys.argv[1]
with zipfile.ZipFile(d + '/sheet.xlsx', 'w', zipfile.ZIP_DEFLATED) as z:
    z.writestr('[Content_Types].xml', '<Types/>')
    z.writestr('_rels/.rels', '<Relationships/>')
    z.writestr('xl/workbook.xml', '<workbook/>')
with zipfile.ZipFile(d + '/sheet.ods', 'w') as z:
    z.writestr(zipfile.ZipInfo('mimetype'), 'application/vnd.oasis.opendocument.spreadsheet')
    z.writestr('content.xml', '<office:document-content/>')
`;
    execFileSync('python3', ['-c', py, dir]);
    await writeFile(join(dir, 'sheet.fods'), '<?xml version="1.0" encoding="UTF-8"?>\n<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" office:mimetype="application/vnd.oasis.opendocument.spreadsheet">\n');
    await writeFile(join(dir, 'blob.csv'), Buffer.from([0x00, 0x01, 0x02, 0x70, 0x61, 0x74, 0x68, 0x00]));
    const cases: [string, RegExp][] = [
      // Read as the workbook it is (workbook.test.ts): this one has no sheet, and says so.
      ['sheet.xlsx', /the workbook has no sheet/],
      ['sheet.ods', /it is an OpenDocument spreadsheet \(\.ods\), not a CSV, JSON Lines or xlsx file: .*soffice --headless --convert-to xlsx/],
      ['sheet.fods', /it is a flat OpenDocument spreadsheet \(\.fods\), not a CSV, JSON Lines or xlsx file/],
      ['blob.csv', /it holds NUL bytes \(a binary file\), not a CSV, JSON Lines or xlsx file/],
    ];
    for (const [name, message] of cases) {
      const error = await rows(join(dir, name)).then(() => undefined, (err: Error) => err.message);
      expect(error, name).toMatch(message);
      expect(error, name).not.toMatch(/code page|UTF-8 \(a spreadsheet saved/);
    }
  });
});
