// Archives built by the tests, good and hostile: a valid playbook archive from entries (the
// manifest computed), then bent in one way each (names patched in the bytes, since archiver
// itself refuses to write `../` or absolute names).
import archiver from 'archiver';
import { createWriteStream } from 'node:fs';
import { createHash } from 'node:crypto';
import { PassThrough } from 'node:stream';

export interface Entry {
  name: string;
  data?: string | Buffer;
  /** A symbolic link entry pointing here. */
  symlinkTo?: string;
}

export const MINIMAL_PLAYBOOK = {
  format: 'ferry-playbook',
  version: 2,
  playbook: { objectIdentifier: '11111111-2222-4333-8444-555555555555', name: 'Minimal', description: null, isPrivate: false, organizationWide: false, dateAdded: null },
  metadata: [],
  referenceMaterials: [],
  assemblies: [],
};

export function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** A zip of `entries` followed by a manifest of them (changed by `bend` first, if given). */
export async function playbookArchive(entries: Entry[], bend: (manifest: Record<string, any>) => void = () => undefined): Promise<Buffer> {
  const manifest: Record<string, any> = {
    format: 'ferry-playbook',
    version: 2,
    source: { baseUrl: 'http://test', tenant: null, region: null },
    playbook: { objectIdentifier: MINIMAL_PLAYBOOK.playbook.objectIdentifier, name: 'Minimal' },
    capturedAt: null,
    entries: entries.filter((e) => !e.symlinkTo).map((e) => ({ path: e.name, size: Buffer.byteLength(e.data ?? ''), sha256: sha256(e.data ?? '') })),
  };
  bend(manifest);
  return zipOf([...entries, { name: 'manifest.json', data: JSON.stringify(manifest) }]);
}

export function minimalEntries(extra: Entry[] = []): Entry[] {
  return [...extra, { name: 'playbook.json', data: JSON.stringify(MINIMAL_PLAYBOOK) }];
}

export async function zipOf(entries: Entry[]): Promise<Buffer> {
  const archive = archiver('zip');
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  const ended = new Promise((resolve) => out.on('end', resolve));
  archive.pipe(out);
  for (const e of entries) {
    if (e.symlinkTo) archive.symlink(e.name, e.symlinkTo);
    else archive.append(e.data ?? '', { name: e.name });
  }
  await archive.finalize();
  await ended;
  return Buffer.concat(chunks);
}

/** Replaces every occurrence of `from` by `to` (same length) in the zip's bytes: local and central names. */
export function patchName(zip: Buffer, from: string, to: string): Buffer {
  if (Buffer.byteLength(from) !== Buffer.byteLength(to)) throw new Error('patched names must keep their length');
  const out = Buffer.from(zip);
  const needle = Buffer.from(from);
  for (let i = out.indexOf(needle); i >= 0; i = out.indexOf(needle, i + 1)) Buffer.from(to).copy(out, i);
  return out;
}

/**
 * The zip with every central directory entry marked as made on `host` (the high byte of "version
 * made by": 0 MS-DOS, 3 Unix, 11 NTFS): archiver writes Unix, and turns `\` into `/` in names.
 */
export function madeOn(zip: Buffer, host: number): Buffer {
  const out = Buffer.from(zip);
  const signature = Buffer.from([0x50, 0x4b, 0x01, 0x02]);
  for (let i = out.indexOf(signature); i >= 0; i = out.indexOf(signature, i + 4)) out[i + 5] = host;
  return out;
}

/** Nothing but end records (zip64 record, locator, classic record) claiming `entries` entries. */
export function zip64EndClaiming(entries: number): Buffer {
  const record = Buffer.alloc(56);
  record.writeUInt32LE(0x06064b50, 0);
  record.writeBigUInt64LE(44n, 4);
  record.writeBigUInt64LE(BigInt(entries), 24);
  record.writeBigUInt64LE(BigInt(entries), 32);
  const locator = Buffer.alloc(20);
  locator.writeUInt32LE(0x07064b50, 0);
  locator.writeUInt32LE(1, 16);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(0xffff, 8);
  end.writeUInt16LE(0xffff, 10);
  end.writeUInt32LE(0xffffffff, 12);
  end.writeUInt32LE(0xffffffff, 16);
  return Buffer.concat([record, locator, end]);
}

export interface HostileCase {
  name: string;
  build: () => Promise<Buffer>;
  message: RegExp;
}

/** The corpus of hostile archives: the reader's tests and the import tests (nothing may be created from any). */
export const HOSTILE: HostileCase[] = [
  {
    name: 'path traversal',
    build: async () => patchName(await playbookArchive(minimalEntries([{ name: 'xx/evil.txt', data: 'x' }])), 'xx/evil.txt', '../evil.txt'),
    message: /entry "\.\.\/evil\.txt" climbs out of the archive with "\.\."; nothing was created/,
  },
  {
    name: 'absolute path',
    build: async () => patchName(await playbookArchive(minimalEntries([{ name: 'xetc/evil.txt', data: 'x' }])), 'xetc/evil.txt', '/etc/evil.txt'),
    message: /entry "\/etc\/evil\.txt" is an absolute path; nothing was created/,
  },
  {
    name: 'symlink entry',
    build: () => playbookArchive(minimalEntries([{ name: 'link', symlinkTo: '/etc/passwd' }])),
    message: /entry "link" is a symbolic link; nothing was created/,
  },
  {
    name: 'zip bomb',
    build: () => playbookArchive(minimalEntries([{ name: 'assemblies/0001/bomb.docx', data: Buffer.alloc(8 * 1024 * 1024) }])),
    message: /entry "assemblies\/0001\/bomb\.docx" expands \d+-fold \(limit 200\), which looks like a zip bomb/,
  },
  {
    name: 'truncated',
    build: async () => {
      const zip = await playbookArchive(minimalEntries());
      return zip.subarray(0, zip.length - 30);
    },
    message: /is not a zip archive, or it is truncated: its end-of-central-directory record is missing/,
  },
  {
    name: 'wrong checksum',
    build: () => playbookArchive(minimalEntries(), (m) => (m.entries[0].sha256 = '0'.repeat(64))),
    message: /entry "playbook\.json" fails its checksum \(sha256 [0-9a-f]{64}, the manifest says 0{64}\)/,
  },
  {
    name: 'unknown version',
    build: () => playbookArchive(minimalEntries(), (m) => (m.version = 99)),
    message: /manifest\.json says archive format version 99, which this ferry does not read \(it reads version 2\)/,
  },
  {
    name: 'entry larger than declared',
    build: () => playbookArchive(minimalEntries([{ name: 'assemblies/0001/t.docx', data: 'x'.repeat(5000) }]), (m) => (m.entries[0].size = 100)),
    message: /entry "assemblies\/0001\/t\.docx" is larger than declared \(5000 bytes, the manifest says 100\)/,
  },
  {
    name: 'entry the manifest does not list',
    build: () => playbookArchive(minimalEntries([{ name: 'stowaway.exe', data: 'MZ' }]), (m) => m.entries.shift()),
    message: /entry "stowaway\.exe" is not listed in the manifest/,
  },
  {
    name: 'too many entries',
    build: async () => zip64EndClaiming(50_000),
    message: /holds 50000 entries, more than the limit of 10000/,
  },
];

/** A zip written to `path` by archiver, built by `build` (entries, links). */
export async function writeZip(path: string, build: (a: archiver.Archiver) => void): Promise<void> {
  const archive = archiver('zip');
  const done = new Promise<void>((resolve, reject) => {
    const out = createWriteStream(path);
    out.on('close', () => resolve());
    archive.on('error', reject);
    archive.pipe(out);
  });
  build(archive);
  await archive.finalize();
  await done;
}
