// Zips written byte for byte, as the tools users have write them: a zip library would fix the
// names for us (set the UTF-8 flag, drop the Info-ZIP field), which is exactly what these tests
// must not have. Entries are stored (method 0), with a fixed DOS time.
import { crc32 } from 'node:zlib';
import iconv from 'iconv-lite';

/** The host in the high byte of "version made by". */
export const HOST = { msdos: 0, unix: 3, ntfs: 11, osx: 19 } as const;

export interface RawEntry {
  /** The name's bytes as the producer wrote them. */
  name: Buffer;
  data?: Buffer | string;
  /** General purpose flags (0x800: the name is UTF-8). */
  flags?: number;
  /** Extra fields, already encoded (see unicodePathField). */
  extra?: Buffer;
  host?: number;
  /** Unix mode bits for the external attributes (host unix). */
  mode?: number;
  /** The uncompressed size declared, when `data` is not the content itself (an encrypted entry's 12-byte header and cipher text). */
  size?: number;
}

const DOS_TIME = (3 << 11) | (4 << 5) | 3; // 03:04:06
const DOS_DATE = ((2024 - 1980) << 9) | (1 << 5) | 2; // 2024-01-02

export function rawZip(entries: RawEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const data = Buffer.isBuffer(e.data) ? e.data : Buffer.from(e.data ?? '');
    const extra = e.extra ?? Buffer.alloc(0);
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(e.flags ?? 0, 6);
    local.writeUInt16LE(0, 8);
    local.writeUInt16LE(DOS_TIME, 10);
    local.writeUInt16LE(DOS_DATE, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(e.size ?? data.length, 22);
    local.writeUInt16LE(e.name.length, 26);
    local.writeUInt16LE(extra.length, 28);
    locals.push(local, e.name, extra, data);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(((e.host ?? HOST.msdos) << 8) | 20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(e.flags ?? 0, 8);
    central.writeUInt16LE(0, 10);
    central.writeUInt16LE(DOS_TIME, 12);
    central.writeUInt16LE(DOS_DATE, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(e.size ?? data.length, 24);
    central.writeUInt16LE(e.name.length, 28);
    central.writeUInt16LE(extra.length, 30);
    const isDir = e.name[e.name.length - 1] === 0x2f;
    const attributes = e.mode !== undefined ? (e.mode << 16) >>> 0 : isDir ? 0x10 : 0x20;
    central.writeUInt32LE(attributes, 38);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, e.name, extra);
    offset += 30 + e.name.length + extra.length + data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** The Info-ZIP Unicode Path extra field (0x7075): version 1, the CRC-32 of `crcOf` (the header's raw name), the UTF-8 name. */
export function unicodePathField(crcOf: Buffer, name: string): Buffer {
  const utf8 = Buffer.from(name, 'utf8');
  const field = Buffer.alloc(4 + 5 + utf8.length);
  field.writeUInt16LE(0x7075, 0);
  field.writeUInt16LE(5 + utf8.length, 2);
  field.writeUInt8(1, 4);
  field.writeUInt32LE(crc32(crcOf), 5);
  utf8.copy(field, 9);
  return field;
}

/** A name's bytes in a code page, as a Windows tool writes it (`?` where the page has no character, as Explorer and Info-ZIP do). */
export function inCodePage(name: string, codePage: string): Buffer {
  return iconv.encode(name, codePage);
}
