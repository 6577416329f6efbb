// fingerprintEntry reads a small file in one call and streams the rest: both must give the
// sha256 of what the file holds when it is read, even when it grew or shrank since it was listed.
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { fingerprintEntry, READ_WHOLE_UNDER } from '../../src/backends/fingerprint.js';
import type { FileEntry } from '../../src/sync/types.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const dir = mkdtempSync(join(tmpdir(), 'ferry-fp-'));

function entryOf(path: string, size: number): FileEntry {
  return { kind: 'file', key: path, path, size, mtimeMs: 0, open: () => Readable.from([]) };
}

describe('fingerprintEntry', () => {
  it('hashes a small file, a large file, one that grew and one that shrank since listed', async () => {
    const small = Buffer.from('a small file\n');
    const large = Buffer.alloc(READ_WHOLE_UNDER * 3 + 17, 7);
    writeFileSync(join(dir, 'small'), small);
    writeFileSync(join(dir, 'large'), large);
    expect(await fingerprintEntry(entryOf(join(dir, 'small'), small.length))).toBe(sha(small));
    expect(await fingerprintEntry(entryOf(join(dir, 'large'), large.length))).toBe(sha(large));
    // Listed at 4 bytes, holds 13 now: the whole of it, not the first 5.
    expect(await fingerprintEntry(entryOf(join(dir, 'small'), 4))).toBe(sha(small));
    // Listed at 100 bytes, holds 13: what is there.
    expect(await fingerprintEntry(entryOf(join(dir, 'small'), 100))).toBe(sha(small));
  });

  it('hashes a file larger than its read block, the block\'s size exactly, and one of 0 bytes', async () => {
    const MiB = 1024 * 1024;
    for (const size of [0, MiB, 3 * MiB + 12_345]) {
      const content = Buffer.alloc(size);
      for (let i = 0; i < size; i += 4096) content[i] = (i / 4096) % 251;
      const path = join(dir, `block-${size}`);
      writeFileSync(path, content);
      expect(await fingerprintEntry(entryOf(path, size)), String(size)).toBe(sha(content));
    }
  });

  it('streams content that is not a file on disk', async () => {
    const content = Buffer.from('from a zip entry');
    const entry: FileEntry = { kind: 'file', key: 'z', size: content.length, mtimeMs: 0, open: () => Readable.from([content]) };
    expect(await fingerprintEntry(entry)).toBe(sha(content));
  });
});
