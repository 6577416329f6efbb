// An .xlsx workbook read as a manifest's rows, streamed: the zip's central directory (unzipper),
// then the sheet's XML parsed as it inflates (saxes), a row at a time. Written here because the
// reader made for it, exceljs, brings deprecated packages into every install, and SheetJS is no
// longer published on the npm registry; the format's parts a manifest needs are few (ECMA-376
// part 1, §18): the workbook's sheet list, its relationships, the number formats, the shared strings.
//
// Memory stays flat: a sheet is never held, and shared strings past SPILL_BYTES go to a scratch
// SQLite file rather than an array. Everything wrong is a ManifestError naming the cell.
import { StringDecoder } from 'node:string_decoder';
import type { SaxesParser, SaxesTagPlain } from 'saxes';
import type unzipper from 'unzipper';
import { saxes, unzipper as loadUnzipper } from '../libraries.js';
import { visible } from '../text.js';
import { openScratchDb } from '../store/scratch-db.js';
import { numberTexts, type NumberText } from './cell-text.js';
import { ManifestError } from './flags.js';

/** One row of the sheet: its number, and its cells' texts by column (0 is A); empty cells undefined. */
export interface SheetRow {
  row: number;
  cells: (string | undefined)[];
}

/** Shared strings larger than this (unpacked) are kept in a scratch SQLite file, not in memory. */
const SPILL_BYTES = 16 * 1024 * 1024;
/** The small parts (workbook, relationships, styles) are read whole; no real one is near this. */
const SMALL_PART_BYTES = 64 * 1024 * 1024;
/** More unpacked than this is a zip built to hurt, not a manifest. */
const MAX_UNPACKED = 8 * 1024 ** 3;

type Part = unzipper.File;

/** `A`…`XFD` to 0…16383. */
export function columnIndex(letters: string): number {
  let n = 0;
  for (const ch of letters) n = n * 26 + (ch.charCodeAt(0) - 64);
  return n - 1;
}

/** 0…16383 to `A`…`XFD`. */
export function columnName(index: number): string {
  let name = '';
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) name = String.fromCharCode(65 + ((n - 1) % 26)) + name;
  return name;
}

/** `_xHHHH_` is how OOXML writes a character XML cannot hold (ECMA-376 §22.9.2.19); `_x005F_` an underscore. */
export function unescapeOoxml(text: string): string {
  return text.includes('_x') ? text.replace(/_x([0-9A-Fa-f]{4})_/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))) : text;
}

export interface WorkbookOptions {
  /** `--manifest-sheet`: the sheet by name; else the first. */
  sheet?: string | undefined;
}

/** The rows of one sheet of an .xlsx file, header first, empty rows left out. */
export async function* readWorkbook(file: string, opts: WorkbookOptions = {}): AsyncIterable<SheetRow> {
  const label = `--manifest ${visible(file)}`;
  const parts = await openParts(file, label);
  const need = (name: string): Part => {
    const part = parts.get(name);
    if (!part) throw new ManifestError(`${label}: it is damaged or not a workbook: the part ${name} is missing`);
    return part;
  };
  const book = await readBook(label, need('xl/workbook.xml'), parts.get('xl/_rels/workbook.xml.rels'));
  const chosen = opts.sheet === undefined ? book.sheets[0] : book.sheets.find((s) => s.name === opts.sheet);
  if (!chosen) {
    const names = book.sheets.map((s) => `"${visible(s.name)}"`).join(', ');
    throw new ManifestError(opts.sheet === undefined ? `${label}: the workbook has no sheet` : `--manifest-sheet "${visible(opts.sheet)}": ${visible(file)} has no such sheet; its sheets are ${names}`);
  }
  const styles = parts.has('xl/styles.xml') ? await readStyles(label, parts.get('xl/styles.xml')!) : { formats: [] as (number | undefined)[], codes: new Map<number, string>() };
  const strings = parts.has('xl/sharedStrings.xml') ? await readSharedStrings(label, parts.get('xl/sharedStrings.xml')!) : undefined;
  try {
    yield* readSheet(label, need(chosen.part), { styles, strings, date1904: book.date1904, numberText: await numberTexts() });
  } finally {
    await strings?.close();
  }
}

async function openParts(file: string, label: string): Promise<Map<string, Part>> {
  let directory: unzipper.CentralDirectory;
  try {
    directory = await loadUnzipper().Open.file(file);
  } catch (err) {
    throw new ManifestError(`${label}: it is a damaged workbook: not a readable zip (${(err as Error).message}); open it in Excel or LibreOffice and save it again, or export CSV`);
  }
  const parts = new Map<string, Part>();
  let unpacked = 0;
  for (const part of directory.files) {
    unpacked += part.uncompressedSize;
    parts.set(part.path.replace(/^\/+/, ''), part);
  }
  if (unpacked > MAX_UNPACKED) throw new ManifestError(`${label}: it unpacks to ${unpacked} bytes, more than the ${MAX_UNPACKED} a manifest may`);
  return parts;
}

/**
 * Feeds a part's XML to the parser as it inflates, yielding after each chunk (so that what the
 * handlers finished can be handed on before the next). A part that does not inflate or parse is a
 * damaged workbook; a ManifestError a handler threw passes as it is.
 */
async function* feed(label: string, part: Part, parser: SaxesParser): AsyncIterable<void> {
  const decoder = new StringDecoder('utf8');
  try {
    for await (const chunk of part.stream() as AsyncIterable<Buffer>) {
      parser.write(decoder.write(chunk));
      yield;
    }
    parser.write(decoder.end());
    parser.close();
  } catch (err) {
    if (err instanceof ManifestError) throw err;
    const message = (err as Error).message;
    throw new ManifestError(`${label}: it is a damaged workbook: ${part.path} cannot be read (${message === 'FILE_ENDED' ? 'the file ends inside it: truncated' : visible(message)}); open it in Excel or LibreOffice and save it again`);
  }
}

/** Parses a whole part; `on` attaches the handlers, `onChunk` runs between chunks. */
async function parseXml(label: string, part: Part, on: (parser: SaxesParser) => void, onChunk?: () => void): Promise<void> {
  const parser = new (saxes().SaxesParser)({ xmlns: false, position: true });
  on(parser);
  for await (const _ of feed(label, part, parser)) onChunk?.();
}

/** The same, for parts small enough to be read before the sheet; refuses one that is not. */
function parseSmall(label: string, part: Part, on: (parser: SaxesParser) => void): Promise<void> {
  if (part.uncompressedSize > SMALL_PART_BYTES) throw new ManifestError(`${label}: its part ${part.path} is ${part.uncompressedSize} bytes, more than a workbook's ${SMALL_PART_BYTES}`);
  return parseXml(label, part, on);
}

/** The element's name without its namespace prefix (`x:row` is `row`: some writers prefix the main namespace). */
function local(name: string): string {
  const colon = name.indexOf(':');
  return colon === -1 ? name : name.slice(colon + 1);
}

/** An attribute by its local name: unprefixed first (the cells' r, t and s, read a million times), then any prefix. */
function attribute(tag: SaxesTagPlain, name: string): string | undefined {
  const direct = tag.attributes[name];
  if (direct !== undefined) return direct;
  for (const key in tag.attributes) if (key.endsWith(`:${name}`)) return tag.attributes[key];
  return undefined;
}

interface Book {
  sheets: { name: string; part: string }[];
  date1904: boolean;
}

async function readBook(label: string, workbook: Part, relations: Part | undefined): Promise<Book> {
  const sheets: { name: string; rid: string }[] = [];
  let date1904 = false;
  await parseSmall(label, workbook, (p) =>
    p.on('opentag', (tag) => {
      const name = local(tag.name);
      if (name === 'workbookPr') date1904 = /^(1|true)$/.test(attribute(tag, 'date1904') ?? '');
      if (name === 'sheet') sheets.push({ name: attribute(tag, 'name') ?? '', rid: (tag.attributes['r:id'] as string | undefined) ?? attribute(tag, 'id') ?? '' });
    }),
  );
  const targets = new Map<string, string>();
  if (relations) {
    await parseSmall(label, relations, (p) =>
      p.on('opentag', (tag) => {
        if (local(tag.name) === 'Relationship') targets.set(attribute(tag, 'Id') ?? '', attribute(tag, 'Target') ?? '');
      }),
    );
  }
  return {
    date1904,
    sheets: sheets.map((s, i) => {
      const target = targets.get(s.rid);
      // Targets are relative to xl/, or absolute from the package's root.
      const part = target === undefined ? `xl/worksheets/sheet${i + 1}.xml` : target.startsWith('/') ? target.slice(1) : `xl/${target.replace(/^\.\//, '')}`;
      return { name: s.name, part };
    }),
  };
}

interface Styles {
  /** Each cell style's number format id, by the style's index (a cell's `s`). */
  formats: (number | undefined)[];
  /** The workbook's own format codes, by id. */
  codes: Map<number, string>;
}

async function readStyles(label: string, part: Part): Promise<Styles> {
  const styles: Styles = { formats: [], codes: new Map() };
  let inCellXfs = false;
  await parseSmall(label, part, (p) => {
    p.on('opentag', (tag) => {
      const name = local(tag.name);
      if (name === 'numFmt') styles.codes.set(Number(attribute(tag, 'numFmtId')), attribute(tag, 'formatCode') ?? 'General');
      else if (name === 'cellXfs') inCellXfs = true;
      else if (name === 'xf' && inCellXfs) styles.formats.push(Number(attribute(tag, 'numFmtId') ?? 0));
    });
    p.on('closetag', (tag) => {
      if (local(tag.name) === 'cellXfs') inCellXfs = false;
    });
  });
  return styles;
}

/** The shared string table, in memory or, past SPILL_BYTES, in a scratch SQLite file. */
interface Strings {
  /** The texts of these ids, in their order; undefined for an id the table does not have. */
  lookup(ids: readonly number[]): (string | undefined)[];
  close(): Promise<void>;
}

/** Each `<si>`'s text: its `<t>`, or its runs' `<t>`s joined; phonetic guides (`<rPh>`, furigana) left out. */
async function readSharedStrings(label: string, part: Part): Promise<Strings> {
  const spill = part.uncompressedSize > SPILL_BYTES ? await spillTable() : undefined;
  const kept: string[] = [];
  let text = '';
  let inText = false;
  let phonetic = 0;
  let pending: string[] = [];
  const add = (value: string) => {
    if (!spill) return void kept.push(value);
    pending.push(value);
  };
  await parseXml(
    label,
    part,
    (p) => {
      p.on('opentag', (tag) => {
        const name = local(tag.name);
        if (name === 'si') text = '';
        else if (name === 'rPh') phonetic++;
        else if (name === 't' && phonetic === 0) inText = true;
      });
      p.on('text', (t) => {
        if (inText) text += t;
      });
      p.on('closetag', (tag) => {
        const name = local(tag.name);
        if (name === 't') inText = false;
        else if (name === 'rPh') phonetic--;
        else if (name === 'si') add(unescapeOoxml(text));
      });
    },
    () => {
      if (spill && pending.length >= 5_000) {
        spill.append(pending);
        pending = [];
      }
    },
  );
  if (!spill) return { lookup: (ids) => ids.map((i) => kept[i]), close: async () => undefined };
  spill.append(pending);
  return spill;
}

async function spillTable(): Promise<Strings & { append(values: string[]): void }> {
  const scratch = await openScratchDb('workbook');
  const { db } = scratch;
  db.exec('CREATE TABLE strings (id INTEGER PRIMARY KEY, text TEXT NOT NULL)');
  const insert = db.prepare('INSERT INTO strings (id, text) VALUES (?, ?)');
  // Looked up a chunk's cells at a time: one statement a cell cost more than the rest of the read.
  const select = db.prepare('SELECT id, text FROM strings WHERE id IN (SELECT value FROM json_each(?))');
  let next = 0;
  const append = db.transaction((values: string[]) => {
    for (const value of values) insert.run(next++, value);
  });
  return {
    append,
    lookup: (ids) => {
      const found = new Map((select.all(JSON.stringify(ids)) as { id: number; text: string }[]).map((r) => [r.id, r.text]));
      return ids.map((i) => found.get(i));
    },
    close: () => scratch.close(),
  };
}

interface SheetContext {
  styles: Styles;
  strings: Strings | undefined;
  date1904: boolean;
  numberText: NumberText;
}

/**
 * The sheet's rows as the parser finishes them, handed out between chunks so the sheet is never
 * held. Shared strings are looked up a chunk's cells at a time, as the rows are handed out.
 */
async function* readSheet(label: string, part: Part, context: SheetContext): AsyncIterable<SheetRow> {
  let done: SheetRow[] = [];
  // The shared-string cells of the rows in `done`, filled in when they are handed out.
  let shared: { row: SheetRow; column: number; index: number; ref: string }[] = [];
  let row: SheetRow | undefined;
  let lastRow = 0;
  // The cell being read.
  let cell: { ref: string; column: number; type: string; style: number; value: string; formula: boolean; hasValue: boolean } | undefined;
  let lastColumn = -1;
  let collecting: 'v' | 't' | undefined;
  let phonetic = 0;

  const finishCell = () => {
    if (!cell || !row) return;
    if (cell.type === 's' && cell.hasValue) {
      shared.push({ row, column: cell.column, index: Number(cell.value), ref: cell.ref });
      return;
    }
    const text = cellText(label, cell, context);
    if (text !== undefined && text !== '') row.cells[cell.column] = text;
  };

  const handOut = function* (): Iterable<SheetRow> {
    if (shared.length > 0) {
      const texts = context.strings?.lookup(shared.map((s) => s.index)) ?? [];
      shared.forEach((s, k) => {
        const text = texts[k];
        if (text === undefined) throw new ManifestError(`${label}: cell ${s.ref}: it is a damaged workbook: the cell names shared string ${s.index}, which the workbook does not have`);
        if (text !== '') s.row.cells[s.column] = text;
      });
      shared = [];
    }
    const rows = done;
    done = [];
    for (const r of rows) if (r.cells.some((c) => c !== undefined)) yield r;
  };

  const parser = new (saxes().SaxesParser)({ xmlns: false, position: true });
  parser.on('opentag', (tag) => {
    const name = local(tag.name);
    if (name === 'row') {
      const r = Number(attribute(tag, 'r') ?? lastRow + 1);
      row = { row: r, cells: [] };
      lastRow = r;
      lastColumn = -1;
    } else if (name === 'c' && row) {
      const ref = attribute(tag, 'r');
      const letters = ref ? /^([A-Z]+)/.exec(ref)?.[1] : undefined;
      const column = letters ? columnIndex(letters) : lastColumn + 1;
      lastColumn = column;
      cell = { ref: ref ?? `${columnName(column)}${row.row}`, column, type: attribute(tag, 't') ?? 'n', style: Number(attribute(tag, 's') ?? 0), value: '', formula: false, hasValue: false };
    } else if (cell) {
      if (name === 'v') {
        collecting = 'v';
        cell.hasValue = true;
      } else if (name === 'f') cell.formula = true;
      else if (name === 'rPh') phonetic++;
      else if (name === 't' && phonetic === 0) {
        collecting = 't';
        cell.hasValue = true;
      }
    }
  });
  parser.on('text', (t) => {
    if (cell && collecting) cell.value += t;
  });
  parser.on('closetag', (tag) => {
    const name = local(tag.name);
    if (name === 'v' || name === 't') collecting = undefined;
    else if (name === 'rPh') phonetic--;
    else if (name === 'c') {
      finishCell();
      cell = undefined;
    } else if (name === 'row' && row) {
      done.push(row);
      row = undefined;
    }
  });
  for await (const _ of feed(label, part, parser)) yield* handOut();
  yield* handOut();
}

/** A finished cell's text as the sheet shows it. */
function cellText(label: string, cell: { ref: string; type: string; style: number; value: string; formula: boolean; hasValue: boolean }, context: SheetContext): string | undefined {
  const at = `${label}: cell ${cell.ref}`;
  if (!cell.hasValue) {
    if (cell.formula) throw new ManifestError(`${at} holds a formula with no saved value (the program that wrote the file did not calculate it): open it in Excel or LibreOffice and save it again`);
    return undefined;
  }
  switch (cell.type) {
    case 'inlineStr':
    case 'str':
      return unescapeOoxml(cell.value);
    case 'b':
      return cell.value === '1' ? 'TRUE' : 'FALSE';
    case 'e':
      throw new ManifestError(`${at} holds the error ${visible(cell.value)}: a manifest's cells are values; correct it, or clear the cell`);
    case 'd':
      // An ISO 8601 date, as strict OOXML writes it.
      return cell.value;
    default: {
      const id = context.styles.formats[cell.style] ?? 0;
      try {
        return context.numberText(cell.value.trim(), id, context.styles.codes.get(id), context.date1904);
      } catch (err) {
        throw new ManifestError(`${at}: its number format "${visible(context.styles.codes.get(id) ?? String(id))}" cannot be read (${visible((err as Error).message)}); format the column as text`);
      }
    }
  }
}
