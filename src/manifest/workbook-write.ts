// `--manifest-out FILE.xlsx`: a workbook of one sheet, streamed into the zip (archiver) row by row.
// The parts are the fewest Excel and LibreOffice open without a repair prompt (ECMA-376 part 1,
// §12.2): content types, the package and workbook relationships, the workbook, a style sheet, the
// sheet. Written here because the one library that writes xlsx as a stream, exceljs, brings
// deprecated packages into every install. Every cell is an inline string in a text-formatted
// column (`@`), so a value that looks like a number or a date (`0012`, `1.2.2026`) comes back as it
// was, including after LibreOffice or Excel save the file again.
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { archiver } from '../libraries.js';
import { columnName } from './workbook-read.js';

/** A sheet's limits (Excel's; LibreOffice's are the same or larger). */
export const SHEET_ROWS = 1_048_576;
export const SHEET_COLUMNS = 16_384;
export const CELL_CHARACTERS = 32_767;

/** The workbook could not be written as asked (a sheet's limits): a CSV can say what it cannot. */
export class WorkbookLimitError extends Error {}

const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const RELS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const PKG_RELS = 'http://schemas.openxmlformats.org/package/2006/relationships';

const CONTENT_TYPES = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/></Types>`;
const PACKAGE_RELS = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="${PKG_RELS}"><Relationship Id="rId1" Type="${RELS}/officeDocument" Target="xl/workbook.xml"/></Relationships>`;
const WORKBOOK = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<workbook xmlns="${MAIN}" xmlns:r="${RELS}"><sheets><sheet name="manifest" sheetId="1" r:id="rId1"/></sheets></workbook>`;
const WORKBOOK_RELS = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="${PKG_RELS}"><Relationship Id="rId1" Type="${RELS}/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="${RELS}/styles" Target="styles.xml"/></Relationships>`;
// Style 0 is the default; style 1 formats a cell as text (numFmtId 49, "@").
const STYLES = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<styleSheet xmlns="${MAIN}"><fonts count="2"><font><sz val="11"/><name val="Calibri"/></font><font><b/><sz val="11"/><name val="Calibri"/></font></fonts><fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills><borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders><cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs><cellXfs count="3"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/><xf numFmtId="49" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/><xf numFmtId="49" fontId="1" fillId="0" borderId="0" xfId="0" applyNumberFormat="1" applyFont="1"/></cellXfs><cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles></styleSheet>`;

/**
 * A cell's text as OOXML holds it: XML's five escapes, CR and the characters XML 1.0 cannot hold as
 * `_xHHHH_` (ECMA-376 §22.9.2.19; an XML reader would turn a bare CR into LF), and an underscore that
 * starts such a pattern escaped itself (`_x005F_`), so that reading gives back exactly the text.
 */
export function escapeCell(text: string): string {
  return text
    .replace(/_(?=x[0-9A-Fa-f]{4}_)/g, '_x005F_')
    .replace(/[&<>"]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&quot;'))
    .replace(/[\x00-\x08\x0b\x0c\x0d\x0e-\x1f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, (c) => `_x${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}_`);
}

/** The sheet's XML, a row at a time; the first row (the header) in bold. */
async function* sheetXml(rows: AsyncIterable<string[]>): AsyncIterable<string> {
  yield `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<worksheet xmlns="${MAIN}" xmlns:r="${RELS}"><sheetViews><sheetView workbookViewId="0"><pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/></sheetView></sheetViews><sheetData>`;
  let r = 0;
  for await (const row of rows) {
    r++;
    if (r > SHEET_ROWS) throw new WorkbookLimitError(`an .xlsx sheet holds at most ${SHEET_ROWS.toLocaleString('en-US')} rows (the header and ${(SHEET_ROWS - 1).toLocaleString('en-US')} files): write the manifest as .csv`);
    if (row.length > SHEET_COLUMNS) throw new WorkbookLimitError(`an .xlsx sheet holds at most ${SHEET_COLUMNS.toLocaleString('en-US')} columns, and the documents carry ${row.length - 1} keys: write the manifest as .csv`);
    const style = r === 1 ? 2 : 1;
    let xml = `<row r="${r}">`;
    row.forEach((value, i) => {
      if (value === '') return;
      if (value.length > CELL_CHARACTERS) throw new WorkbookLimitError(`cell ${columnName(i)}${r} would hold ${value.length} characters, and an .xlsx cell holds at most ${CELL_CHARACTERS.toLocaleString('en-US')}: write the manifest as .csv`);
      xml += `<c r="${columnName(i)}${r}" s="${style}" t="inlineStr"><is><t xml:space="preserve">${escapeCell(value)}</t></is></c>`;
    });
    yield `${xml}</row>`;
  }
  yield '</sheetData></worksheet>';
}

/** Writes `rows` (the header first) to `out` as a workbook of one sheet named "manifest". */
export async function writeWorkbook(rows: AsyncIterable<string[]>, out: NodeJS.WritableStream): Promise<void> {
  const zip = archiver()('zip', { zlib: { level: 6 } });
  const sheet = Readable.from(sheetXml(rows));
  // An error in the rows (a limit) ends the archive, and the write, with it.
  sheet.on('error', (err) => zip.destroy(err));
  zip.append(CONTENT_TYPES, { name: '[Content_Types].xml' });
  zip.append(PACKAGE_RELS, { name: '_rels/.rels' });
  zip.append(WORKBOOK, { name: 'xl/workbook.xml' });
  zip.append(WORKBOOK_RELS, { name: 'xl/_rels/workbook.xml.rels' });
  zip.append(STYLES, { name: 'xl/styles.xml' });
  zip.append(sheet, { name: 'xl/worksheets/sheet1.xml' });
  await Promise.all([pipeline(zip, out), zip.finalize()]);
}
