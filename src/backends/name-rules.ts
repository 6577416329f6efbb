// The local-name rules of a pull: how a document's name becomes a file name that the destination's
// file system holds, and back. Written by hand after rclone's lib/encoder (no npm package encodes
// reversibly for Windows' rules, quotes its own substitutes and knows the reserved names):
//  - posix (ext4, APFS, xfs): every name is held as it is, except `.`, `..` and NUL (`%2E`, `%00`);
//  - windows (NTFS, SMB shares, exFAT, FAT): `< > : " \ | ? *` become their FULLWIDTH forms,
//    controls U+0001-U+001F their pictures (U+2401-U+241F), a trailing `.` or space `．` / `␠`,
//    a reserved device name (CON, AUX, COM1, LPT¹ …, with or without an extension) its first
//    letter in FULLWIDTH; a name holding any substitute literally has it quoted with `‛` (U+201B),
//    so that decode(encode(x)) is x for every x;
//  - strict: windows, and `# % & { } $ ! ' @ + \` = ; , [ ]` too, for a share that refuses more
//    than it says (used only where the file system refused a name windows rules allowed).
// The encoding is stateless. Only what no stateless rule can carry (a name over 255 bytes, two
// names that the file system folds to one) gets a hash, and needs the pull's record of names
// (names-file.ts) to be given back.

import { createHash } from 'node:crypto';

export type NameRules = 'posix' | 'windows' | 'strict';
/** What `--local-names` takes: auto probes the destination. */
export const LOCAL_NAMES = ['auto', 'posix', 'windows'] as const;
export type LocalNamesSetting = (typeof LOCAL_NAMES)[number];

/** The quote: the character after it is literal. */
export const QUOTE = '\u201b';

const WINDOWS_CHARS = '<>:"\\|?*';
const STRICT_CHARS = `${WINDOWS_CHARS}#%&{}$!'@+\`=;,[]`;
/** ASCII -> FULLWIDTH is a fixed offset for U+0021-U+007E. */
const FULLWIDTH_OFFSET = 0xfee0;
const DOT_SUB = '\uff0e'; // ．
const SPACE_SUB = '\u2420'; // ␠
const CONTROL_PICTURES = 0x2400;

/** Every character that decodes to something else: quoted wherever a name holds it literally. */
const SUBSTITUTES = new Set<string>([
  QUOTE,
  DOT_SUB,
  SPACE_SUB,
  ...[...STRICT_CHARS].map((c) => String.fromCharCode(c.charCodeAt(0) + FULLWIDTH_OFFSET)),
  ...Array.from({ length: 0x20 }, (_, i) => String.fromCharCode(CONTROL_PICTURES + i)),
]);

/** Device names Windows reserves in every folder, with or without an extension (any case). */
const RESERVED = new Set(['CON', 'PRN', 'AUX', 'NUL', ...[...'0123456789\u00b9\u00b2\u00b3'].flatMap((d) => [`COM${d}`, `LPT${d}`])]);

function stemOf(name: string): string {
  const dot = name.indexOf('.');
  return (dot < 0 ? name : name.slice(0, dot)).toUpperCase();
}

export function isReserved(name: string): boolean {
  return RESERVED.has(stemOf(name));
}

function isFullwidthLetter(c: string): boolean {
  const code = c.charCodeAt(0);
  return (code >= 0xff21 && code <= 0xff3a) || (code >= 0xff41 && code <= 0xff5a);
}

/** A name starting with a FULLWIDTH letter that would be reserved were it ASCII: ferry's form of a device name. */
function looksLikeMappedDevice(name: string): boolean {
  const first = name[0];
  return first !== undefined && isFullwidthLetter(first) && isReserved(String.fromCharCode(first.charCodeAt(0) - FULLWIDTH_OFFSET) + name.slice(1));
}

export interface Encoded {
  name: string;
  /** The rules this name needed, in words, when it changed. */
  why?: string;
}

/** One path segment under `rules` (length is not this function's: see LocalNamer). */
export function encodeSegment(segment: string, rules: NameRules): Encoded {
  if (rules === 'posix') return encodePosix(segment);
  const chars = rules === 'strict' ? STRICT_CHARS : WINDOWS_CHARS;
  const reasons = new Set<string>();
  let out = '';
  const units = [...segment];
  for (const [i, c] of units.entries()) {
    const last = i === units.length - 1;
    if (SUBSTITUTES.has(c)) {
      out += QUOTE + c;
      reasons.add(`"${c}" is one of the substitutes: quoted with ${QUOTE}`);
    } else if (chars.includes(c)) {
      out += String.fromCharCode(c.charCodeAt(0) + FULLWIDTH_OFFSET);
      reasons.add(rules === 'strict' ? 'characters the file system refused, written in FULLWIDTH' : 'characters Windows refuses (< > : " \\ | ? *), written in FULLWIDTH');
    } else if (c < ' ') {
      out += String.fromCharCode(CONTROL_PICTURES + c.charCodeAt(0));
      reasons.add('control characters, written as their pictures (U+2400-U+241F)');
    } else if (last && (c === '.' || c === ' ')) {
      out += c === '.' ? DOT_SUB : SPACE_SUB;
      reasons.add(`a trailing ${c === '.' ? 'dot' : 'space'}, which Windows drops, written as ${c === '.' ? DOT_SUB : SPACE_SUB}`);
    } else out += c;
  }
  if (isReserved(segment)) {
    const first = out[0] as string;
    out = String.fromCharCode(first.charCodeAt(0) + FULLWIDTH_OFFSET) + out.slice(1);
    reasons.add(`"${stemOf(segment)}" is a device name Windows reserves: its first letter in FULLWIDTH`);
  } else if (looksLikeMappedDevice(segment)) {
    out = QUOTE + out;
    reasons.add(`it reads as ferry's form of a reserved device name: quoted with ${QUOTE}`);
  }
  return reasons.size ? { name: out, why: [...reasons].join('; ') } : { name: out };
}

function encodePosix(segment: string): Encoded {
  if (segment === '.' || segment === '..') return { name: segment.replace(/\./g, '%2E'), why: `"${segment}" is not a name a file can have` };
  if (segment.includes('\u0000')) return { name: segment.replace(/\u0000/g, '%00'), why: 'NUL written as %00' };
  return { name: segment };
}

/**
 * The name a segment encoded under windows or strict rules came from. Stateless: names from posix
 * rules and names with a hash are given back by the pull's record of names, not here.
 */
export function decodeSegment(local: string): string {
  const units = [...local];
  const first = units[0];
  // A device name's first letter was written in FULLWIDTH: the rest decoded tells whether it was one.
  if (first !== undefined && isFullwidthLetter(first)) {
    const rest = decodeUnits(units, 1);
    const ascii = String.fromCharCode(first.charCodeAt(0) - FULLWIDTH_OFFSET);
    return isReserved(ascii + rest) ? ascii + rest : first + rest;
  }
  return decodeUnits(units, 0);
}

function decodeUnits(units: string[], from: number): string {
  let out = '';
  for (let i = from; i < units.length; i++) {
    const c = units[i] as string;
    if (c === QUOTE && i + 1 < units.length) {
      out += units[++i];
      continue;
    }
    out += substituted(c) ?? c;
  }
  return out;
}

function substituted(c: string): string | undefined {
  if (c === DOT_SUB) return '.';
  if (c === SPACE_SUB) return ' ';
  const code = c.charCodeAt(0);
  if (code >= CONTROL_PICTURES && code < CONTROL_PICTURES + 0x20) return String.fromCharCode(code - CONTROL_PICTURES);
  const ascii = String.fromCharCode(code - FULLWIDTH_OFFSET);
  return code > FULLWIDTH_OFFSET && STRICT_CHARS.includes(ascii) ? ascii : undefined;
}

/** Whether a local name holds something decodeSegment would change: in a pulled folder, an encoded name. */
export function looksEncoded(local: string): boolean {
  return decodeSegment(local) !== local;
}

/** Whether a name is one Windows takes as it is (no refused character, no trailing dot or space, not reserved). */
export function windowsAllows(name: string): boolean {
  if (name === '' || name === '.' || name === '..') return false;
  for (const c of name) if (c < ' ' || WINDOWS_CHARS.includes(c)) return false;
  return !/[. ]$/.test(name) && !isReserved(name);
}

/** The longest name, in bytes, ferry writes (ext4's limit; NTFS and exFAT take 255 UTF-16 units, so more, but the copy stays movable). */
export const MAX_NAME_BYTES = 255;

/** `~hash` before the extension (kept when short), the stem cut so that the name fits 255 bytes. */
export function shorten(name: string, tag: string): string {
  const dot = name.lastIndexOf('.');
  const ext = dot > 0 && Buffer.byteLength(name.slice(dot)) <= 16 ? name.slice(dot) : '';
  let stem = ext ? name.slice(0, dot) : name;
  const room = MAX_NAME_BYTES - Buffer.byteLength(`~${tag}${ext}`);
  while (Buffer.byteLength(stem) > room) stem = [...stem].slice(0, -1).join('');
  return `${stem}~${tag}${ext}`;
}

export function hash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 8);
}

/** Whether a local segment carries ferry's hash tag (`~` and 8 hex digits, before an extension or at the end). */
export function hasHashTag(segment: string): boolean {
  return /~[0-9a-f]{8}(\.[^.]*)?$/.test(segment);
}
