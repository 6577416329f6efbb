// Archives built to hurt: each refused by the reader with its own message, naming the entry.
import { describe, expect, it } from 'vitest';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { ArchiveRefusedError, openArchive } from '../../src/playbooks/read.js';
import { minimalEntries, patchName, playbookArchive, zip64EndClaiming } from '../helpers/archives.js';

export interface HostileCase {
  name: string;
  build: () => Promise<Buffer>;
  message: RegExp;
}

/** The corpus, shared with the import tests (nothing may be created from any of them). */
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

describe('hostile archives', () => {
  for (const c of HOSTILE) {
    it(`refuses: ${c.name}`, async () => {
      const dir = await mkdtemp(join(tmpdir(), 'ferry-hostile-'));
      const path = join(dir, 'hostile.zip');
      await writeFile(path, await c.build());
      const err = await openArchive(path).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ArchiveRefusedError);
      expect((err as Error).message).toMatch(c.message);
    });
  }

  it('every case has its own message', () => {
    expect(new Set(HOSTILE.map((c) => c.message.source)).size).toBe(HOSTILE.length);
  });

  it('accepts the same archive unbent', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-hostile-'));
    const path = join(dir, 'fine.zip');
    await writeFile(path, await playbookArchive(minimalEntries([{ name: 'assemblies/0001/t.docx', data: 'x'.repeat(5000) }])));
    const archive = await openArchive(path);
    expect(archive.playbook.playbook.name).toBe('Minimal');
  });
});
