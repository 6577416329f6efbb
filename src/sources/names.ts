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

/** Characters that change what a terminal shows: controls, line and paragraph separators, the bidirectional overrides, a byte-order mark. */
const INVISIBLE = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]/g;

export type NameVerdict = { ok: true; name: string } | { ok: false; shown: string; reason: string };

export const NOT_UTF8 = 'the name is not valid UTF-8 (bytes that are not are shown as \\xNN); the service takes UTF-8 names only: rename it';
export const HAS_CONTROL = 'the name holds control characters (shown escaped, e.g. \\n); they cannot be carried in an upload: rename it';

/** The verdict on one raw name (a path segment, or a zip entry path). */
export function checkName(raw: Buffer): NameVerdict {
  let name: string;
  try {
    name = strictUtf8.decode(raw);
  } catch {
    return { ok: false, shown: showBytes(raw), reason: NOT_UTF8 };
  }
  return checkDecodedName(name);
}

/** The same rule for a name already decoded (zip entries flagged UTF-8, service names). */
export function checkDecodedName(name: string): NameVerdict {
  if (CONTROL.test(name)) return { ok: false, shown: visible(name), reason: HAS_CONTROL };
  return { ok: true, name };
}

/** A name safe to write to a terminal or a log line: controls and bidi overrides made visible. */
export function visible(text: string): string {
  return text.replace(INVISIBLE, (c) => {
    const code = c.charCodeAt(0);
    if (c === '\n') return '\\n';
    if (c === '\r') return '\\r';
    if (c === '\t') return '\\t';
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** Raw bytes shown losslessly: valid UTF-8 runs as text (controls escaped), every other byte as \xNN. */
export function showBytes(raw: Buffer): string {
  let out = '';
  let i = 0;
  while (i < raw.length) {
    const len = sequenceLength(raw, i);
    if (len === 0) {
      out += `\\x${(raw[i] as number).toString(16).padStart(2, '0')}`;
      i++;
    } else {
      out += visible(raw.subarray(i, i + len).toString('utf8'));
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
