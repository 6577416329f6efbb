// Writes an .xlsx manifest of N rows (path, client, matter, ocrStrategy: the bench's CSV, cell for
// cell) as Excel and LibreOffice write one: every text a shared string, so the reader's hardest
// case, a shared string table of two million entries, is the one measured. Streamed into the zip
// (archiver takes each part as a stream, one after another), so this process stays small.
import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import archiver from 'archiver';

const [path, countText] = process.argv.slice(2);
const count = Number(countText);
const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const CLIENTS = 97;
// Shared string ids: the header's 4, the 97 clients, "always", then each row's path and matter.
const HEADER = ['path', 'client', 'matter', 'ocrStrategy'];
const ALWAYS = HEADER.length + CLIENTS;
const rowString = (i) => ALWAYS + 1 + 2 * i;

async function* strings() {
  yield `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<sst xmlns="${MAIN}" count="${ALWAYS + 1 + 2 * count}" uniqueCount="${ALWAYS + 1 + 2 * count}">`;
  const si = (t) => `<si><t>${t}</t></si>`;
  yield HEADER.map(si).join('');
  yield Array.from({ length: CLIENTS }, (_, k) => si(`Client ${k}`)).join('');
  yield si('always');
  let chunk = '';
  for (let i = 0; i < count; i++) {
    chunk += si(`d${Math.floor(i / 100_000)}/f${Math.floor(i / 1000)}/e${i}`) + si(`M-${i}`);
    if (chunk.length > 65_536) {
      yield chunk;
      chunk = '';
    }
  }
  yield `${chunk}</sst>`;
}

async function* sheet() {
  yield `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<worksheet xmlns="${MAIN}" xmlns:r="${REL}"><sheetData>`;
  yield `<row r="1">${HEADER.map((_, c) => `<c r="${'ABCD'[c]}1" t="s"><v>${c}</v></c>`).join('')}</row>`;
  let chunk = '';
  for (let i = 0; i < count; i++) {
    const r = i + 2;
    chunk += `<row r="${r}"><c r="A${r}" t="s"><v>${rowString(i)}</v></c><c r="B${r}" t="s"><v>${HEADER.length + (i % CLIENTS)}</v></c><c r="C${r}" t="s"><v>${rowString(i) + 1}</v></c>${i % 3 === 0 ? `<c r="D${r}" t="s"><v>${ALWAYS}</v></c>` : ''}</row>`;
    if (chunk.length > 65_536) {
      yield chunk;
      chunk = '';
    }
  }
  yield `${chunk}</sheetData></worksheet>`;
}

const zip = archiver('zip', { zlib: { level: 1 } });
zip.append(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>`, { name: '[Content_Types].xml' });
zip.append(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>`, { name: '_rels/.rels' });
zip.append(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<workbook xmlns="${MAIN}" xmlns:r="${REL}"><sheets><sheet name="manifest" sheetId="1" r:id="rId1"/></sheets></workbook>`, { name: 'xl/workbook.xml' });
zip.append(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${REL}/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="${REL}/sharedStrings" Target="sharedStrings.xml"/></Relationships>`, { name: 'xl/_rels/workbook.xml.rels' });
zip.append(Readable.from(strings()), { name: 'xl/sharedStrings.xml' });
zip.append(Readable.from(sheet()), { name: 'xl/worksheets/sheet1.xml' });
await Promise.all([pipeline(zip, createWriteStream(path)), zip.finalize()]);
