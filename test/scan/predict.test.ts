// The scan's predictions as pure logic: shares of a project's history turned into whole files that
// add up, the empty-file rule, "unknown" for a type without history, and pages no fewer than the
// history's fewest a file.
import { describe, expect, it } from 'vitest';
import { apportion, predict, SendTallies } from '../../src/scan/predict.js';
import type { ServiceHistory, TypeHistory } from '../../src/scan/history.js';

const type = (extension: string, over: Partial<TypeHistory>): TypeHistory => ({ extension, processed: 0, inProgress: 0, taken: 0, refused: {}, measuredBytes: 0, pages: 0, minPages: undefined, credits: 0, largestTaken: 0, ...over });
const history = (...types: TypeHistory[]): ServiceHistory => ({ documents: types.reduce((n, t) => n + t.processed, 0), byExtension: new Map(types.map((t) => [t.extension, t])), largestTaken: Math.max(0, ...types.map((t) => t.largestTaken)) });

describe('apportion', () => {
  it('gives whole files in the history\'s shares, never more than there are', () => {
    expect(apportion(1, 2, { badFile: 1, maliciousFile: 1 })).toEqual({ badFile: 1 });
    expect(apportion(10, 4, { unsupportedFileType: 4 })).toEqual({ unsupportedFileType: 10 });
    expect(apportion(7, 3, { a: 1, b: 1 })).toEqual({ a: 3, b: 2 });
    expect(apportion(3, 100, { a: 1 })).toEqual({});
    expect(apportion(0, 5, { a: 5 })).toEqual({});
  });
});

describe('predict', () => {
  it('empty files are badFile; a type refused before is refused again; an unknown type is unknown; pages at least the fewest a file', () => {
    const tallies = new SendTallies(1_000);
    for (const [key, size] of [['a.txt', 0], ['b.txt', 300], ['c.txt', 10], ['x.7z', 50], ['y.dat', 40], ['big.txt', 5_000]] as const) tallies.add(key, size);
    const o = predict(tallies.all(), history(type('txt', { processed: 4, taken: 4, measuredBytes: 4_096, pages: 4, minPages: 1, credits: 2, largestTaken: 1_000 }), type('7z', { processed: 1, refused: { unsupportedFileType: 1 } })));
    const txt = o.byExtension.find((x) => x.extension === 'txt')!;
    expect(txt).toMatchObject({ files: 4, refused: { badFile: 1 }, taken: 3 });
    // 5,310 bytes at a page per KiB: 5.2 pages, more than the one a file the fewest gives for 3 files.
    expect(txt.pages).toBe(5.2);
    expect(txt.credits).toBe(2.6);
    expect(o.byExtension.find((x) => x.extension === '7z')).toMatchObject({ refused: { unsupportedFileType: 1 }, taken: 0 });
    expect(o.byExtension.find((x) => x.extension === 'dat')).toMatchObject({ taken: null, pages: null, credits: null, basis: expect.stringMatching(/no dat document processed in this project yet: unknown/) });
    expect(o.unknown).toEqual({ files: 1, bytes: 40, extensions: ['dat'] });
    expect(o.refusals).toEqual([{ reason: 'badFile', files: 1 }, { reason: 'unsupportedFileType', files: 1 }]);
    expect(o.beyondLargestTaken).toEqual({ files: 1, largestTaken: 1_000 });
    // Small files: no fewer pages than the fewest a document of the type was counted.
    const small = new SendTallies(0);
    for (let i = 0; i < 4; i++) small.add(`n${i}.txt`, 5);
    expect(predict(small.all(), history(type('txt', { processed: 1, taken: 1, measuredBytes: 10_000, pages: 2, minPages: 2, credits: 0 }))).pages).toBe(8);
  });
});
