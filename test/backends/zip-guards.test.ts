import { describe, expect, it } from 'vitest';
import { checkArchive, DEFAULT_ZIP_LIMITS, ZipRefusedError } from '../../src/backends/zip/source.js';

const entry = (path: string, uncompressedSize = 10, compressedSize = 10) => ({ path, uncompressedSize, compressedSize });

describe('zip guards', () => {
  it('refuses entries that climb out or are absolute', () => {
    for (const bad of ['../x', 'a/../../x', '/etc/passwd', 'C:/Windows/x', 'a\\..\\..\\x', 'nul\0byte']) {
      expect(() => checkArchive('t.zip', [entry('ok.txt'), entry(bad)], DEFAULT_ZIP_LIMITS)).toThrow(ZipRefusedError);
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
