import { describe, expect, it } from 'vitest';
import { SeenSet } from '../../src/sync/seen.js';

describe('SeenSet', () => {
  it('answers membership for many keys, across growth', () => {
    const seen = new SeenSet();
    for (let i = 0; i < 50_000; i += 2) seen.add(`folder-${i % 97}/file ${i}.txt`);
    for (let i = 0; i < 50_000; i++) expect(seen.has(`folder-${i % 97}/file ${i}.txt`)).toBe(i % 2 === 0);
    expect(seen.has('')).toBe(false);
    seen.add('ünï/cöde.txt');
    expect(seen.has('ünï/cöde.txt')).toBe(true);
  });
});
