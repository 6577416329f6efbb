// A zip entry's name, decided per entry in the order the format and its producers leave us
// (docs/cli.md, "Zip file names"):
//  1. the UTF-8 flag (general purpose bit 11) set: UTF-8;
//  2. else an Info-ZIP Unicode Path extra field (0x7075, APPNOTE 4.6.9) whose CRC-32 is that of
//     the raw name: its UTF-8 name (WinZip, Info-ZIP on Windows); a stale one is ignored;
//  3. else a name that is valid UTF-8 (macOS Archive Utility, Info-ZIP on Linux);
//  4. else the code page: --archive-encoding, or cp437 (the spec's default) where it plainly gives
//     words (archive-encoding.ts); otherwise refused, with how it reads in the likeliest pages.
import { crc32 } from 'node:zlib';
import { checkName, NOT_UTF8 } from '../names.js';
import { decodeLegacyName, type ArchiveNameVerdict } from '../archive-encoding.js';

const UTF8_FLAG = 0x800;
const UNICODE_PATH = 0x7075;

export interface RawZipName {
  raw: Buffer;
  flags: number;
  extraFields: readonly { id: number; data: Buffer }[];
}

export function zipEntryName({ raw, flags, extraFields }: RawZipName, encoding: string | undefined): ArchiveNameVerdict {
  if (flags & UTF8_FLAG) return { ...checkName(raw), rule: 'utf8-flag' };
  const unicode = unicodePath(raw, extraFields);
  if (unicode) return { ...checkName(unicode), rule: 'unicode-path' };
  const asUtf8 = checkName(raw);
  // Valid UTF-8 (refused or not for its characters): the code page is never asked.
  if (asUtf8.ok || asUtf8.reason !== NOT_UTF8) return { ...asUtf8, rule: 'utf8' };
  return decodeLegacyName(raw, encoding, true, asUtf8);
}

/** The UTF-8 name of a Unicode Path field that belongs to this raw name (version 1, CRC-32 of the raw name). */
export function unicodePath(raw: Buffer, extraFields: RawZipName['extraFields']): Buffer | undefined {
  for (const field of extraFields) {
    if (field.id !== UNICODE_PATH || field.data.length < 5 || field.data[0] !== 1) continue;
    if (field.data.readUInt32LE(1) !== crc32(raw)) continue; // stale: the name was changed after the field was written
    return field.data.subarray(5);
  }
  return undefined;
}
