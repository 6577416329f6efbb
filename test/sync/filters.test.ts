// --min-size, --max-size, --min-age, --max-age: the parsing of their values and the rule, on a
// clock held still.
import { describe, expect, it } from 'vitest';
import { sizeAgeFilter } from '../../src/sync/filters.js';
import { settingsOf } from '../../src/settings/values.js';
import { OTHER_SETTINGS } from '../../src/settings/declared.js';
import type { FileEntry } from '../../src/sync/types.js';

const NOW = Date.parse('2026-11-24T12:00:00Z');
const HOUR = 3_600_000;
const file = (size: number, ageMs: number): FileEntry => ({ kind: 'file', key: `f-${size}-${ageMs}`, size, mtimeMs: NOW - ageMs, open: () => { throw new Error('not read'); } }) as FileEntry;

describe('size and age filters', () => {
  // Read as scan reads them: through the declarations, one reader (settingsOf, src/settings/values.ts).
  const read = (flags: Record<string, string>) => settingsOf(OTHER_SETTINGS.scan, flags);
  const sizeFlag = (flag: string, text: string) => read({ [flag === '--min-size' ? 'minSize' : 'maxSize']: text })[flag === '--min-size' ? 'minSize' : 'maxSize'];
  const ageFlag = (flag: string, text: string) => read({ [flag === '--min-age' ? 'minAge' : 'maxAge']: text })[flag === '--min-age' ? 'minAge' : 'maxAge'];
  const sizeAgeFrom = read;

  it('reads sizes in bytes and powers of 1024, ages in units up to weeks', () => {
    expect(sizeFlag('--min-size', '500')).toBe(500);
    expect(sizeFlag('--min-size', '10K')).toBe(10_240);
    expect(sizeFlag('--min-size', '1.5M')).toBe(1_572_864);
    expect(sizeFlag('--min-size', '2GiB')).toBe(2 * 1024 ** 3);
    expect(() => sizeFlag('--max-size', 'big')).toThrow('--max-size "big" is not a size');
    expect(ageFlag('--min-age', '90s')).toBe(90_000);
    expect(ageFlag('--max-age', '1d12h')).toBe(36 * HOUR);
    expect(ageFlag('--max-age', '2w')).toBe(14 * 24 * HOUR);
    expect(() => ageFlag('--max-age', '3 days')).toThrow('--max-age "3 days" is not an age');
    expect(() => sizeAgeFrom({ minSize: '2M', maxSize: '1M' })).toThrow('no file would be left');
    expect(() => sizeAgeFrom({ minAge: '2d', maxAge: '1d' })).toThrow('no file would be left');
  });

  it('leaves alone what lies outside the limits, bounds included', () => {
    expect(sizeAgeFilter({})).toBeUndefined();
    const f = sizeAgeFilter({ minSize: 10, maxSize: 100, minAge: HOUR, maxAge: 24 * HOUR }, NOW)!;
    expect(f(file(10, 2 * HOUR))).toBe(true);
    expect(f(file(100, 24 * HOUR))).toBe(true);
    expect(f(file(9, 2 * HOUR))).toBe(false);
    expect(f(file(101, 2 * HOUR))).toBe(false);
    expect(f(file(50, HOUR - 1))).toBe(false);
    expect(f(file(50, 24 * HOUR + 1))).toBe(false);
    // A file whose time is unknown is judged by size alone.
    expect(f({ ...file(50, 0), mtimeMs: Number.NaN } as FileEntry)).toBe(true);
  });
});
