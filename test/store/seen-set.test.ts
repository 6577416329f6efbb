import { describe, expect, it } from 'vitest';
import { KeySet, NumberByKey, SeenSet } from '../../src/hashed-keys.js';

describe('SeenSet', () => {
  it('answers membership for many keys, across growth', () => {
    const seen = new SeenSet();
    for (let i = 0; i < 50_000; i += 2) seen.add(`folder-${i % 97}/file ${i}.txt`);
    for (let i = 0; i < 50_000; i++) expect(seen.has(`folder-${i % 97}/file ${i}.txt`)).toBe(i % 2 === 0);
    expect(seen.has('')).toBe(false);
    seen.add('ünï/cöde.txt');
    expect(seen.has('ünï/cöde.txt')).toBe(true);
  });

  it('keeps what it holds through a reserve, and grows past the reserved count when more come', () => {
    const seen = new SeenSet();
    for (let i = 0; i < 3_000; i++) seen.add(`a/${i}`);
    seen.reserve(5_000);
    seen.reserve(10); // smaller than what it holds: nothing is lost
    for (let i = 3_000; i < 12_000; i++) seen.add(`a/${i}`);
    for (let i = 0; i < 13_000; i++) expect(seen.has(`a/${i}`)).toBe(i < 12_000);
  });
});

describe('NumberByKey', () => {
  it('keeps one number per key across growth, and replaces it on a second set', () => {
    const dates = new NumberByKey();
    for (let i = 0; i < 40_000; i++) dates.set(`folder-${i % 89}/doc ${i}.pdf`, i * 1000);
    for (let i = 0; i < 40_000; i++) expect(dates.get(`folder-${i % 89}/doc ${i}.pdf`)).toBe(i * 1000);
    expect(dates.get('folder-1/never set.pdf')).toBeUndefined();
    dates.set('folder-1/doc 1.pdf', 7);
    expect(dates.get('folder-1/doc 1.pdf')).toBe(7);
    dates.set('', 0);
    expect(dates.get('')).toBe(0);
  });

  it('keeps two numbers per key, each set on its own, across growth and after a reserve', () => {
    for (const reserveFirst of [false, true]) {
      const paths = new NumberByKey(2);
      if (reserveFirst) paths.reserve(30_000);
      for (let i = 0; i < 30_000; i++) paths.set(`p/${i}`, i);
      for (let i = 0; i < 30_000; i += 2) paths.set(`p/${i}`, -i, 1);
      if (!reserveFirst) paths.reserve(100_000); // a reserve after the fact moves every key
      for (let i = 0; i < 30_000; i++) {
        expect(paths.get(`p/${i}`)).toBe(i);
        expect(paths.get(`p/${i}`, 1)).toBe(i % 2 === 0 ? -i : 0);
      }
      expect(paths.get('p/30000', 1)).toBeUndefined();
    }
  });

  it('of width 0 is a set: keys only, asked with has, across growth and a reserve', () => {
    const ids = new NumberByKey(0);
    for (let i = 0; i < 30_000; i += 3) ids.set(`doc-${i}`, 0);
    ids.reserve(60_000);
    for (let i = 0; i < 30_000; i++) expect(ids.has(`doc-${i}`)).toBe(i % 3 === 0);
    expect(ids.get('doc-0')).toBeUndefined(); // no numbers kept
  });
});

describe('KeySet', () => {
  it('answers for keys added in any order, asked between additions', () => {
    const claimed = new KeySet();
    for (let i = 0; i < 20_000; i++) {
      claimed.add(`remote-${i * 7}`);
      expect(claimed.has(`remote-${i * 7}`)).toBe(true);
      expect(claimed.has(`remote-${i * 7 + 1}`)).toBe(false);
    }
    for (let i = 0; i < 20_000; i++) expect(claimed.has(`remote-${i * 7}`)).toBe(true);
  });

  it('keeps what it holds through a reserve', () => {
    const claimed = new KeySet();
    for (let i = 0; i < 1_000; i++) claimed.add(`remote-${i}`);
    claimed.reserve(50_000);
    for (let i = 1_000; i < 2_000; i++) claimed.add(`remote-${i}`);
    for (let i = 0; i < 3_000; i++) expect(claimed.has(`remote-${i}`)).toBe(i < 2_000);
  });
});
