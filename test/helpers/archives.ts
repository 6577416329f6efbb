// Archives built by the tests, good and hostile: a valid playbook archive from entries (the
// manifest computed), then bent in one way each (names patched in the bytes, since archiver
// itself refuses to write `../` or absolute names).
import archiver from 'archiver';
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
