// Which entry names ferry carries, and how any name is shown. One rule for every source:
//  - a name that is not valid UTF-8 is refused: the service's names are JSON strings, and any
//    lossy decoding (U+FFFD) would give two different files the same name and a rerun no way to
//    find its document again;
//  - a name holding a control character (C0, DEL, C1: newline, tab, escape…) is refused: it cannot
//    travel in a multipart header unchanged and would be a trap in every listing and terminal;
//  - every other name (backslashes, `%`, `#`, `?`, NFC and NFD forms, 255 bytes) is carried byte
//    for byte, never normalised.
// A refused entry is a failed item with its reason, shown by the lossless rendering below. Written
// by hand: the rule is ferry's own, and no library draws this line.

// ignoreBOM: a name that starts with U+FEFF keeps it (stripped, a lone BOM would become the empty name,
// and a path the folder it is in).
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** C0 controls, DEL and C1 controls. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * What is escaped when a name is shown: controls, line and paragraph separators, the bidirectional
 * marks and overrides, a byte-order mark, lone surrogates (bytes that were not UTF-8), and the
 * backslash itself, so that a name holding `\n` and one holding a newline never look alike.
 */
const INVISIBLE = /[\\\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff]/gu;

/**
 * A refused name keeps a key that is still the name itself, so that it is escaped once, where it is
 * shown: control characters as they are, bytes that are not UTF-8 as lone surrogates U+DC80-U+DCFF
 * (Python's "surrogateescape", PEP 383), which `visible` shows as \xNN.
 */
export type NameVerdict = { ok: true; name: string } | { ok: false; key: string; shown: string; reason: string };

export const NOT_UTF8 = 'the name is not valid UTF-8 (bytes that are not are shown as \\xNN); the service takes UTF-8 names only: rename it';
export const HAS_CONTROL = 'the name holds control characters (shown escaped, e.g. \\n); they cannot be carried in an upload: rename it';

/** The verdict on one raw name (a path segment, or a zip entry path); `carryControl`: only UTF-8 is asked (a comparison, not an upload). */
export function checkName(raw: Buffer, carryControl = false): NameVerdict {
  let name: string;
  try {
    name = strictUtf8.decode(raw);
  } catch {
    const key = surrogateEscape(raw);
    return { ok: false, key, shown: visible(key), reason: NOT_UTF8 };
  }
  return carryControl ? { ok: true, name } : checkDecodedName(name);
}

/** Whether text breaks the rule of names anywhere (a whole path at once: `/` is no control). */
export function hasControl(text: string): boolean {
  return CONTROL.test(text);
}

/** The same rule for a name already decoded (zip entries flagged UTF-8, service names). */
export function checkDecodedName(name: string): NameVerdict {
  if (CONTROL.test(name)) return { ok: false, key: name, shown: visible(name), reason: HAS_CONTROL };
  return { ok: true, name };
}

/** A name safe to write to a terminal or a log line, losslessly: what would hide or mislead is escaped. */
export function visible(text: string): string {
  return text.replace(INVISIBLE, (c) => {
    const code = c.charCodeAt(0);
    if (c === '\\') return '\\\\';
    if (c === '\n') return '\\n';
    if (c === '\r') return '\\r';
    if (c === '\t') return '\\t';
    // A byte that was not UTF-8, carried as a lone surrogate (see NameVerdict).
    if (code >= 0xdc80 && code <= 0xdcff) return `\\x${(code - 0xdc00).toString(16)}`;
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/**
 * Free text (a message that may quote names) safe for a terminal: the same escapes as `visible` but
 * the backslash, which messages use for their own notation (\xNN, \n).
 */
export function safeText(text: string): string {
  return text.replace(INVISIBLE, (c) => (c === '\\' ? c : visible(c)));
}

/** Raw bytes shown losslessly: valid UTF-8 runs as text (escaped as `visible` does), every other byte as \xNN. */
export function showBytes(raw: Buffer): string {
  return visible(surrogateEscape(raw));
}

/** Raw bytes as a string: well-formed UTF-8 decoded, every other byte b as the lone surrogate U+DC00+b. */
export function surrogateEscape(raw: Buffer): string {
  let out = '';
  let i = 0;
  while (i < raw.length) {
    const len = sequenceLength(raw, i);
    if (len === 0) {
      out += String.fromCharCode(0xdc00 + (raw[i] as number));
      i++;
    } else {
      out += raw.subarray(i, i + len).toString('utf8');
      i += len;
    }
  }
  return out;
}

/** Length of the well-formed UTF-8 sequence starting at `i`, or 0 if there is none. */
function sequenceLength(b: Buffer, i: number): number {
  const c = b[i] as number;
  if (c < 0x80) return 1;
  const cont = (k: number) => i + k < b.length && ((b[i + k] as number) & 0xc0) === 0x80;
  const second = b[i + 1] ?? 0;
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    if (c === 0xe0 && second < 0xa0) return 0;
    if (c === 0xed && second > 0x9f) return 0; // surrogates
    return cont(1) && cont(2) ? 3 : 0;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    if (c === 0xf0 && second < 0x90) return 0;
    if (c === 0xf4 && second > 0x8f) return 0;
    return cont(1) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}
