// A workbook cell's number as the person who keeps the sheet sees it: its number format applied
// (numfmt, Excel's format language, separators by the format's own locale tag: `[$-407]#,##0.00` is
// `1.234,50`). Three choices numfmt does not make, each for a reason:
// - a date format's `/` is the date separator of the format's locale, as Excel and LibreOffice show
//   it (`[$-407]dd/mm/yyyy` is `14.03.2026`), where numfmt keeps `/`;
// - the built-in short date (14, 22) has no code of its own: each machine shows its locale's. ferry
//   writes it as ISO 8601, one text that means the same on every machine;
// - General is the number as the file stores it, every digit kept: a customer number of 13 digits is
//   not `1.23457E+12`.
import { numfmt } from '../libraries.js';

/** The built-in formats whose look is the machine's locale's: written as ISO 8601 instead. */
const MACHINE_DATES: Record<number, string> = { 14: 'yyyy-mm-dd', 22: 'yyyy-mm-dd hh:mm' };

/** Days between the 1900 and the 1904 date systems' day zero. */
const DAYS_1904 = 1462;

/**
 * The text of a number cell: `raw` is the number as stored (`<v>`), `id` and `code` its format
 * (`code` for custom formats, 164 and up). Throws on a format numfmt cannot read (the caller names the cell).
 */
export type NumberText = (raw: string, id: number, code: string | undefined, date1904: boolean) => string;

/** numberText, once numfmt is loaded (at the first workbook read: ../libraries.ts). */
export async function numberTexts(): Promise<NumberText> {
  const nf = await numfmt();
  return (raw, id, code, date1904) => numberText(nf, raw, id, code, date1904);
}

function numberText(nf: typeof import('numfmt'), raw: string, id: number, code: string | undefined, date1904: boolean): string {
  const { format, getFormatFromId, isDateFormat } = nf;
  const pattern = MACHINE_DATES[id] ?? code ?? getFormatFromId(id) ?? 'General';
  if (/^general$/i.test(pattern.trim())) return plainNumber(raw);
  const value = Number(raw);
  if (!Number.isFinite(value)) return raw;
  if (!isDateFormat(pattern)) return format(pattern, value, { throws: true, nbsp: false });
  const serial = date1904 ? value + DAYS_1904 : value;
  return format(localDateSeparator(nf, pattern), serial, { throws: true, nbsp: false });
}

/** A stored number, written without an exponent where it has one (`1E-7` is `0.0000001`). */
function plainNumber(raw: string): string {
  if (!/[eE]/.test(raw)) return raw;
  const value = Number(raw);
  if (!Number.isFinite(value)) return raw;
  return value.toLocaleString('en-US', { useGrouping: false, maximumFractionDigits: 20, maximumSignificantDigits: 17 });
}

/** Patterns already rewritten: a sheet has few formats and may have a million date cells. */
const rewritten = new Map<string, string>();

/** The pattern with each `/` between date parts written as its locale's date separator. */
function localDateSeparator(nf: typeof import('numfmt'), pattern: string): string {
  let done = rewritten.get(pattern);
  if (done === undefined) rewritten.set(pattern, (done = rewrite(nf, pattern)));
  return done;
}

function rewrite(nf: typeof import('numfmt'), pattern: string): string {
  const { tokenize, getLocale } = nf;
  const tokens = tokenize(pattern) as { type: string; value: string; raw: string }[];
  const tag = tokens.find((t) => t.type === 'LOCALE');
  const lcid = tag ? Number.parseInt(tag.value.replace(/^.*-/, ''), 16) & 0xffff : NaN;
  const separator = Number.isFinite(lcid) && lcid > 0 ? getLocale(lcid)?.format?.dateSep : undefined;
  if (!separator || separator === '/') return pattern;
  return tokens.map((t) => (t.type === 'SLASH' ? `"${separator}"` : t.raw)).join('');
}
