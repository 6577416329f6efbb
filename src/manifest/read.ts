// A manifest file read row by row, streamed: CSV as spreadsheets save it (csv-parse: RFC 4180
// quoting, a byte-order mark, CRLF or LF; `,` or `;` or a tab found from the header) or JSON
// Lines. Every mistake is a ManifestError naming the file and the line, raised before the run
// sends anything. What a row means (docs/cli.md, "Manifests"): `path`, relative to the source;
// the three processing settings; every other column a metadata key.
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { Transform, type TransformCallback } from 'node:stream';
import { createInterface } from 'node:readline';
import type { CsvError } from 'csv-parse';
import { csvParse, csvParseSync } from '../libraries.js';
import { visible } from '../text.js';
import { codePage, decodeIn, decodingStream, plainlyWords } from '../backends/archive-encoding.js';
import { columnName, readWorkbook } from './workbook-read.js';

export const OCR_STRATEGIES = ['never', 'detect', 'always'] as const;
export const OCR_ENGINES = ['cloudDocumentIntelligence', 'engineA'] as const;
export const COORDINATE_STRATEGIES = ['never', 'engineB', 'cloudDocumentIntelligence', 'spreadsheet'] as const;

/** The columns (CSV) and fields (JSON Lines) that are a document's processing settings, with their values. */
export const SETTINGS = {
  ocrStrategy: OCR_STRATEGIES,
  ocrEngine: OCR_ENGINES,
  coordinateExtractionStrategy: COORDINATE_STRATEGIES,
} as const;
export type SettingName = keyof typeof SETTINGS;
const SETTING_NAMES = Object.keys(SETTINGS) as SettingName[];

/** One row: the file it is for and what that file's document carries. */
export interface ManifestRow {
  /** The line the row starts on (1 is a CSV's header). */
  line: number;
  /** Relative to the source, `/`-separated, as given (no leading `/` or `./`). */
  path: string;
  metadata: Record<string, string>;
  settings: Partial<Record<SettingName, string>>;
}

export { ManifestError, delimiterFlag } from './flags.js';
import { ManifestError } from './flags.js';

export interface ReadOptions {
  /** `--manifest-delimiter`: `,`, `;`, `tab` or `|`; else found from the header. */
  delimiter?: string | undefined;
  /** `--manifest-encoding`: the code page of a CSV that is not UTF-8 (checked already: codePage). */
  encoding?: string | undefined;
  /** `--manifest-sheet`: an .xlsx workbook's sheet by name; else the first. */
  sheet?: string | undefined;
}

/** The kind of a manifest, by its name: JSON Lines for .jsonl and .ndjson, a workbook for .xlsx, CSV otherwise. */
export function manifestFormat(file: string): 'csv' | 'jsonl' | 'xlsx' {
  return /\.(jsonl|ndjson)$/i.test(file) ? 'jsonl' : /\.xlsx$/i.test(file) ? 'xlsx' : 'csv';
}

/** How to turn a workbook ferry does not read into one it does. */
const SAVE_AS = 'ferry reads .xlsx workbooks, CSV and JSON Lines: save it as "Excel 2007-365 (.xlsx)" or "CSV UTF-8 (Comma delimited)", or convert it with `soffice --headless --convert-to xlsx FILE`';

/** Where a row is, in the words of its file: a workbook's `row 5`, a text file's `line 5`. */
export function placeOf(file: string, line: number): string {
  return `${manifestFormat(file) === 'xlsx' ? 'row' : 'line'} ${line}`;
}

/** The rows of a manifest, one at a time. */
export async function* readManifest(file: string, opts: ReadOptions = {}): AsyncIterable<ManifestRow> {
  const head = await firstBytes(file);
  if ((head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff)) {
    throw new ManifestError(`--manifest ${visible(file)}: it is UTF-16 (Excel's "Unicode Text"); save it as "CSV UTF-8 (Comma delimited)" or as UTF-8 text`);
  }
  const kind = whatItIs(head);
  if (kind === 'xlsx') {
    yield* readXlsx(file, opts.sheet);
    return;
  }
  if (opts.sheet !== undefined) throw new ManifestError(`--manifest-sheet is for an .xlsx workbook; ${visible(file)} is a text file`);
  if (kind) throw new ManifestError(`--manifest ${visible(file)}: ${kind}, not a CSV, JSON Lines or xlsx file: ${SAVE_AS}`);
  const text = () => textOf(file, opts.encoding);
  if (manifestFormat(file) === 'jsonl') yield* readJsonLines(file, text());
  else yield* readCsv(file, text(), opts.delimiter ?? sniffDelimiter(head), opts.delimiter !== undefined, head);
}

/** The file as text: decoded from its code page when one is named, else checked to be UTF-8 line by line. */
function textOf(file: string, encoding: string | undefined): NodeJS.ReadableStream {
  if (encoding === undefined) return createReadStream(file).pipe(new Utf8Check(file));
  return createReadStream(file).pipe(decodingStream(codePage('--manifest-encoding', encoding)));
}

/**
 * What a file is by its first bytes: `xlsx` for a workbook ferry reads, a phrase for one it does not
 * (ods and fods, an encrypted workbook, anything with NUL bytes: said as what they are, never as a
 * code page), undefined for text.
 */
function whatItIs(head: Buffer): 'xlsx' | string | undefined {
  if (head[0] === 0x50 && head[1] === 0x4b && head[2] === 0x03 && head[3] === 0x04) {
    const names = head.toString('latin1');
    if (names.includes('application/vnd.oasis.opendocument.spreadsheet')) return 'it is an OpenDocument spreadsheet (.ods)';
    if (names.includes('xl/') || names.includes('[Content_Types].xml')) return 'xlsx';
    return 'it is a zip archive';
  }
  if (head[0] === 0xd0 && head[1] === 0xcf && head[2] === 0x11 && head[3] === 0xe0) {
    // Excel keeps a workbook with a password in an OLE file holding an EncryptedPackage stream.
    if (head.includes(Buffer.from('EncryptedPackage', 'utf16le'))) return 'it is a password-protected workbook: ferry cannot read it; save a copy without the password (File > Info > Protect Workbook)';
    return 'it is an old Excel workbook (.xls) or another OLE file';
  }
  const start = head.subarray(0, 4096).toString('utf8');
  if (/^\s*<\?xml/.test(start) && /office:document|urn:oasis:names:tc:opendocument/.test(start)) return 'it is a flat OpenDocument spreadsheet (.fods)';
  if (head.subarray(0, 4096).includes(0)) return 'it holds NUL bytes (a binary file)';
  return undefined;
}

/**
 * An .xlsx sheet's rows as a manifest's: the first row is the header, each cell named where it is
 * at fault (`cell C1`), and `line` is the sheet's row number.
 */
async function* readXlsx(file: string, sheet: string | undefined): AsyncIterable<ManifestRow> {
  let header: Header | undefined;
  const where = `--manifest ${visible(file)}: row 1 (the header)`;
  for await (const { row, cells } of readWorkbook(file, { sheet })) {
    if (!header) {
      if (row !== 1) throw new ManifestError(`${where} is empty: the header (a "path" column, then one column per key) goes in the first row, from cell A1`);
      const columns = Array.from(cells, (c) => (c ?? '').trim());
      header = headerOf(columns, where, (i) => `cell ${columnName(i)}1`, '');
      continue;
    }
    const beyond = cells.findIndex((c, i) => i >= header!.columns.length && c !== undefined);
    if (beyond !== -1) throw new ManifestError(`--manifest ${visible(file)}: cell ${columnName(beyond)}${row} holds a value, but its column has no name in row 1`);
    yield rowOf(file, row, header, cells);
  }
  if (!header) throw new ManifestError(`--manifest ${visible(file)}: the sheet is empty: it needs a header row naming a "path" column`);
}

async function firstBytes(file: string): Promise<Buffer> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (err) {
    throw new ManifestError(`--manifest ${visible(file)} cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  try {
    const buffer = Buffer.alloc(64 * 1024);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/**
 * The separator of a CSV, from its header line: the one of `,` `;` and tab that occurs most outside
 * quotes (Excel writes `;` where the decimal separator is a comma: German, French). A comma when none does.
 */
export function sniffDelimiter(head: Buffer): string {
  const text = head.toString('utf8').replace(/^\ufeff/, '');
  const counts = new Map<string, number>([[',', 0], [';', 0], ['\t', 0]]);
  let quoted = false;
  for (const ch of text) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && (ch === '\n' || ch === '\r')) break;
    else if (!quoted && counts.has(ch)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  }
  let best = ',';
  for (const [ch, n] of counts) if (n > (counts.get(best) ?? 0)) best = ch;
  return best;
}

/**
 * Bytes that are not UTF-8 are refused with the line they are on: a spreadsheet saved in the
 * machine's code page (Excel's plain "CSV") would otherwise put mojibake in every document.
 */
class Utf8Check extends Transform {
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });
  private line = 1;

  constructor(private readonly file: string) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    try {
      this.decoder.decode(chunk, { stream: true });
    } catch {
      return done(this.rejection(chunk));
    }
    for (let i = chunk.indexOf(0x0a); i !== -1; i = chunk.indexOf(0x0a, i + 1)) this.line++;
    done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    try {
      this.decoder.decode();
    } catch {
      return done(new ManifestError(`--manifest ${visible(this.file)}: it ends in the middle of a UTF-8 character`));
    }
    done();
  }

  /** The line of the first byte that is not UTF-8 within this chunk. */
  private rejection(chunk: Buffer): ManifestError {
    let line = this.line;
    const strict = new TextDecoder('utf-8', { fatal: true });
    let start = 0;
    for (let i = 0; i <= chunk.length; i++) {
      if (i < chunk.length && chunk[i] !== 0x0a) continue;
      try {
        strict.decode(chunk.subarray(start, i));
      } catch {
        break;
      }
      line++;
      start = i + 1;
    }
    let end = chunk.indexOf(0x0a, start);
    if (end === -1) end = chunk.length;
    const western = decodeIn(chunk.subarray(start, end), 'windows-1252');
    const words = western !== undefined && plainlyWords(western.replace(/[^\p{L}\s]+/gu, ' ').trim()) ? western.split(/[,;\t]/).find((cell) => /[^\x00-\x7f]/.test(cell)) : undefined;
    const advice = words !== undefined ? `it reads as plain words in windows-1252 ("${visible(words.trim())}"): give --manifest-encoding windows-1252` : 'give --manifest-encoding with its code page (windows-1252, cp850, …)';
    return new ManifestError(`--manifest ${visible(this.file)}: line ${line}: not UTF-8 (a spreadsheet saved in a code page, e.g. Excel's plain "CSV"?); ${advice}, or save it as "CSV UTF-8 (Comma delimited)"`);
  }
}

async function* readCsv(file: string, input: NodeJS.ReadableStream, delimiter: string, delimiterGiven: boolean, head: Buffer): AsyncIterable<ManifestRow> {
  const parser = csvParse().parse({ bom: true, delimiter, info: true, skip_empty_lines: true, relax_column_count: false });
  input.on('error', (err: Error) => parser.destroy(err));
  input.pipe(parser);
  let header: Header | undefined;
  let lastLine = 0;
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      const line = lastLine + 1;
      lastLine = info.lines;
      if (!header) {
        header = readHeader(file, record, delimiter, delimiterGiven, head);
        continue;
      }
      yield rowOf(file, line, header, record);
    }
  } catch (err) {
    if (err instanceof ManifestError) throw err;
    if (err instanceof csvParse().CsvError) {
      // Early in the file, a parse error is most often the wrong separator: say the one that reads.
      const other = lastLine < 2 ? workingDelimiter(head, delimiter) : undefined;
      throw new ManifestError(`--manifest ${visible(file)}: ${csvProblem(err, lastLine)}${other ? `; read with ${other} as the separator it parses: give --manifest-delimiter ${other}` : ''}`);
    }
    throw err;
  }
  if (!header) throw new ManifestError(`--manifest ${visible(file)} is empty: it needs a header row naming a "path" column`);
}

function csvProblem(err: CsvError, lastLine: number): string {
  const line = (err as CsvError & { lines?: number }).lines ?? lastLine + 1;
  switch (err.code) {
    case 'CSV_QUOTE_NOT_CLOSED':
      return `line ${lastLine + 1}: a quote opened on this line is never closed (the file ends inside it)`;
    case 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH':
      return `line ${line}: ${err.message.replace(/^Invalid Record Length: /, '').replace(/ on line \d+$/, '')} (every row has as many cells as the header)`;
    case 'CSV_INVALID_CLOSING_QUOTE':
      return `line ${line}: a quote inside a cell that is not doubled ("" in a quoted cell)`;
    default:
      return `line ${line}: ${err.message}`;
  }
}

/** The column a pull's manifest names each file's local path in, where it is not the document's: read as information only. */
export const LOCAL_PATH_COLUMN = 'ferry.localPath';

/**
 * Another separator that reads the head of the file cleanly, with a `path` column, as the flag's
 * value (`";"`, `tab`), or undefined when none does.
 */
function workingDelimiter(head: Buffer, tried: string): string | undefined {
  const text = head.toString('utf8').replace(/^\ufeff/, '');
  // The lines wholly inside the head: a cut last line is no parse error of the file's.
  const whole = text.slice(0, Math.max(text.lastIndexOf('\n'), 0) + 1) || text;
  for (const candidate of [',', ';', '\t', '|']) {
    if (candidate === tried) continue;
    try {
      const rows = csvParseSync().parse(whole, { delimiter: candidate, relax_column_count: false, skip_empty_lines: true, to_line: 50 }) as string[][];
      const header = rows[0]?.map((c) => c.trim()) ?? [];
      if (header.length >= 2 && header.includes('path')) return candidate === '\t' ? 'tab' : `"${candidate}"`;
    } catch {
      // Not this one either.
    }
  }
  return undefined;
}

interface Header {
  columns: string[];
  pathAt: number;
}

function readHeader(file: string, record: string[], delimiter: string, delimiterGiven: boolean, head: Buffer): Header {
  const columns = record.map((c) => c.trim());
  let noPath = '';
  if (!columns.includes('path') && columns.length === 1) {
    const works = workingDelimiter(head, delimiter);
    const split = `; it reads as one column split by "${delimiter === '\t' ? 'tab' : delimiter}"`;
    noPath = works ? `${split}: give --manifest-delimiter ${works} (it reads the header with a path column)` : !delimiterGiven ? `${split}: give --manifest-delimiter` : '';
  }
  return headerOf(columns, `--manifest ${visible(file)}: line 1 (the header)`, (i) => `column ${i + 1}`, noPath);
}

/**
 * The header's columns checked: a `path` column, every column named once, no `ferry.` key. `place`
 * says where a column is (`column 3`, `cell C1`); `noPath` is said after a missing path column.
 */
function headerOf(columns: string[], where: string, place: (i: number) => string, noPath: string): Header {
  const pathAt = columns.indexOf('path');
  if (pathAt === -1) {
    const near = columns.find((c) => c.toLowerCase() === 'path');
    throw new ManifestError(`${where} has no "path" column${near ? ` ("${visible(near)}" is not it: the name is path, in lower case)` : ''}${noPath}`);
  }
  const seen = new Map<string, number>();
  columns.forEach((c, i) => {
    if (c === '') throw new ManifestError(`${where}: ${place(i)} has no name`);
    const first = seen.get(c);
    if (first !== undefined) throw new ManifestError(`${where}: the column "${visible(c)}" is named twice (${place(first)} and ${place(i)})`);
    seen.set(c, i);
    if (/^ferry\./.test(c) && c !== LOCAL_PATH_COLUMN) throw new ManifestError(`${where}: the column "${visible(c)}": keys starting with "ferry." are ferry's own (docs/cli.md, "Identity on the service")`);
  });
  return { columns, pathAt };
}

function rowOf(file: string, line: number, header: Header, record: readonly (string | undefined)[]): ManifestRow {
  const row: ManifestRow = { line, path: pathOf(file, line, record[header.pathAt] ?? ''), metadata: {}, settings: {} };
  header.columns.forEach((column, i) => {
    // Where a pull wrote the file (information for a person; the path is the document's).
    if (i === header.pathAt || column === LOCAL_PATH_COLUMN) return;
    const value = record[i] ?? '';
    // An empty cell: this document has no such key (or setting).
    if (value === '') return;
    if (isSetting(column)) row.settings[column] = settingValue(file, line, column, value);
    else row.metadata[column] = value;
  });
  return row;
}

async function* readJsonLines(file: string, input: NodeJS.ReadableStream): AsyncIterable<ManifestRow> {
  const lines = createInterface({ input, crlfDelay: Infinity });
  let line = 0;
  for await (const raw of lines) {
    line++;
    const text = line === 1 ? raw.replace(/^\ufeff/, '') : raw;
    if (text.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw new ManifestError(`--manifest ${visible(file)}: line ${line}: not JSON (${(err as Error).message})`);
    }
    yield jsonRow(file, line, value);
  }
}

function jsonRow(file: string, line: number, value: unknown): ManifestRow {
  const at = `--manifest ${visible(file)}: line ${line}`;
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new ManifestError(`${at}: each line is one JSON object ({"path": …, "metadata": {…}})`);
  const o = value as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (key !== 'path' && key !== 'metadata' && !isSetting(key)) throw new ManifestError(`${at}: "${visible(key)}" is not a field of a manifest line (path, metadata, ${SETTING_NAMES.join(', ')})`);
  }
  if (typeof o.path !== 'string') throw new ManifestError(`${at}: "path" is required, a string`);
  const row: ManifestRow = { line, path: pathOf(file, line, o.path), metadata: {}, settings: {} };
  if (o.metadata !== undefined) {
    if (!o.metadata || typeof o.metadata !== 'object' || Array.isArray(o.metadata)) throw new ManifestError(`${at}: "metadata" is an object of keys and string values`);
    for (const [key, v] of Object.entries(o.metadata as Record<string, unknown>)) {
      if (/^ferry\./.test(key)) throw new ManifestError(`${at}: the metadata key "${visible(key)}": keys starting with "ferry." are ferry's own`);
      if (key === '') throw new ManifestError(`${at}: a metadata key is empty`);
      if (typeof v !== 'string') throw new ManifestError(`${at}: the metadata "${visible(key)}" is not a string (the service keeps strings: write "${visible(String(v))}")`);
      row.metadata[key] = v;
    }
  }
  for (const name of SETTING_NAMES) {
    const v = o[name];
    if (v === undefined || v === null || v === '') continue;
    if (typeof v !== 'string') throw new ManifestError(`${at}: "${name}" is a string, one of ${SETTINGS[name].join(', ')}`);
    row.settings[name] = settingValue(file, line, name, v);
  }
  return row;
}

function isSetting(name: string): name is SettingName {
  return (SETTING_NAMES as string[]).includes(name);
}

function settingValue(file: string, line: number, name: SettingName, value: string): string {
  if (!(SETTINGS[name] as readonly string[]).includes(value)) {
    throw new ManifestError(`--manifest ${visible(file)}: line ${line}: ${name} "${visible(value)}" is not one the service has (${SETTINGS[name].join(', ')})`);
  }
  return value;
}

/** A row's path as ferry keys entries: `/`-separated, relative; no folder, no `..`, not empty. */
function pathOf(file: string, line: number, raw: string): string {
  const at = `--manifest ${visible(file)}: line ${line}`;
  const path = raw.replace(/^(\.\/)+/, '').replace(/^\/+/, '');
  if (path === '') throw new ManifestError(`${at}: the path is empty`);
  if (path.endsWith('/')) throw new ManifestError(`${at}: the path "${visible(raw)}" names a folder; a row is for one file`);
  if (path.split('/').some((s) => s === '..' || s === '.' || s === '')) throw new ManifestError(`${at}: the path "${visible(raw)}" is not a plain relative path (no "..", ".", or "//")`);
  return path;
}
