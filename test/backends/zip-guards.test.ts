import { describe, expect, it } from 'vitest';
import { checkArchive, DEFAULT_ZIP_LIMITS, ZipRejectedError } from '../../src/backends/zip/source.js';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { openSource } from '../../src/backends/index.js';
import { rawZip } from '../helpers/zip-bytes.js';

const entry = (path: string, uncompressedSize = 10, compressedSize = 10) => ({ path, uncompressedSize, compressedSize });

describe('zip guards', () => {
  it('refuses entries that climb out or are absolute', () => {
    for (const bad of ['../x', 'a/../../x', '/etc/passwd', 'C:/Windows/x', 'a\\..\\..\\x', 'nul\0byte']) {
      expect(() => checkArchive('t.zip', [entry('ok.txt'), entry(bad)], DEFAULT_ZIP_LIMITS)).toThrow(ZipRejectedError);
    }
    expect(() => checkArchive('t.zip', [entry('a/b/c.txt'), entry('a/..b/c.txt')], DEFAULT_ZIP_LIMITS)).not.toThrow();
  });

  it('refuses absurd compression ratios, too many entries and too many bytes', () => {
    expect(() => checkArchive('t.zip', [entry('bomb.bin', 1024 ** 3, 1024 * 1024)], DEFAULT_ZIP_LIMITS)).toThrow(/expands 1024-fold \(limit 200\), which looks like a zip bomb/);
    expect(() => checkArchive('t.zip', [entry('small-but-dense.txt', 1000, 1)], DEFAULT_ZIP_LIMITS)).not.toThrow();
    expect(() => checkArchive('t.zip', [entry('a'), entry('b'), entry('c')], { ...DEFAULT_ZIP_LIMITS, maxEntries: 2 })).toThrow('holds 3 entries, more than the limit of 2');
    expect(() => checkArchive('t.zip', [entry('a', 600, 600), entry('b', 600, 600)], { ...DEFAULT_ZIP_LIMITS, maxTotalBytes: 1000 })).toThrow('would expand to at least 1200 bytes, more than the limit of 1000');
  });
});

describe('zips built to hurt, read through the zip source', () => {
  async function zipFile(bytes: Buffer): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-zip-hurt-'));
    await writeFile(join(dir, 'a.zip'), bytes);
    return join(dir, 'a.zip');
  }

  it('entries whose bytes overlap (every entry pointing at one kernel, the "better zip bomb") refuse the archive', async () => {
    const zip = rawZip([{ name: Buffer.from('a.txt'), data: 'kernel' }, { name: Buffer.from('b.txt'), data: 'kernel' }]);
    // The second directory entry now points at the first entry's local header.
    const second = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
    zip.writeUInt32LE(0, second + 42);
    await expect(openSource(await zipFile(zip))).rejects.toThrow(/was refused: two entries share the same bytes of the file \(at offset 0\)/);
    // The same zip unbent is read.
    const fine = await openSource(await zipFile(rawZip([{ name: Buffer.from('a.txt'), data: 'kernel' }, { name: Buffer.from('b.txt'), data: 'kernel' }])));
    await fine.close();
  });

  it('an encrypted entry and one compressed with a method ferry cannot read are failed items with their reason; the rest is read', async () => {
    const zip = rawZip([{ name: Buffer.from('locked.txt'), data: Buffer.alloc(13, 7), size: 1, flags: 0x1 }, { name: Buffer.from('lzma.txt'), data: 'y' }, { name: Buffer.from('ok.txt'), data: 'z' }]);
    const lzma = zip.lastIndexOf(Buffer.from('lzma.txt')) - 46; // its directory entry: method at +10
    zip.writeUInt16LE(14, lzma + 10);
    const source = await openSource(await zipFile(zip));
    const seen: string[] = [];
    for await (const e of source.entries()) seen.push(`${e.kind} ${e.key}${e.kind === 'problem' ? `: ${e.reason}` : ''}`);
    await source.close();
    expect(seen).toEqual([
      expect.stringMatching(/^problem locked\.txt: the entry is encrypted/),
      expect.stringMatching(/^problem lzma\.txt: the entry is compressed with method 14/),
      'file ok.txt',
    ]);
  });
});
