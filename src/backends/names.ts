// Which entry names ferry carries (how a name is shown is src/text.ts's). One rule for every source:
//  - a name that is not valid UTF-8 is refused: the service's names are JSON strings, and any
//    lossy decoding (U+FFFD) would give two different files the same name and a rerun no way to
//    find its document again;
//  - a name holding a control character (C0, DEL, C1: newline, tab, escape…) is refused: it cannot
//    travel in a multipart header unchanged and would be a trap in every listing and terminal;
//  - every other name (backslashes, `%`, `#`, `?`, NFC and NFD forms, 255 bytes) is carried byte
//    for byte, never normalised.
// A refused entry is a failed item with its reason, shown by the lossless rendering below. Written
// by hand: the rule is ferry's own, and no library draws this line.

import { surrogateEscape, visible } from '../text.js';

// ignoreBOM: a name that starts with U+FEFF keeps it (stripped, a lone BOM would become the empty name,
// and a path the folder it is in).
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** C0 controls, DEL and C1 controls. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

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
