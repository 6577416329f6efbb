// SpillSort: rows sorted on disk, a folder just before its own contents.
import { describe, expect, it } from 'vitest';
import { SpillSort, pathSortKey } from '../../src/store/spill-sort.js';

describe('SpillSort', () => {
  it('gives paths back folder first, then its contents, segment by segment; equal paths by tie, then in the order added', () => {
    const paths = ['/a b/z.txt', '/a/y.txt', '/a b/', '/a/', '/a/b/c', '/a/b/', '/a.txt', '/é/x', '/Z', '/a/y.txt'];
    const sort = new SpillSort<{ path: string; n: number }>();
    try {
      paths.forEach((path, n) => sort.add(pathSortKey(path), { path, n }, n === 9 ? '2026-01-01' : n === 1 ? '2026-02-01' : ''));
      expect([...sort.sorted()].map((r) => r.path)).toEqual(['/Z', '/a/', '/a/b/', '/a/b/c', '/a/y.txt', '/a/y.txt', '/a b/', '/a b/z.txt', '/a.txt', '/é/x']);
      // The two /a/y.txt by their tie: the one added last, with the earlier date, first.
      expect([...sort.sorted()].filter((r) => r.path === '/a/y.txt').map((r) => r.n)).toEqual([9, 1]);
    } finally {
      sort.close();
    }
  });

  it('sorts more rows than one batch, in order', () => {
    const sort = new SpillSort<number>();
    try {
      const n = 5_000;
      for (let i = 0; i < n; i++) sort.add(pathSortKey(`/f/${String((i * 7919) % n).padStart(5, '0')}`), i);
      const out = [...sort.sorted()];
      expect(out).toHaveLength(n);
      const keys = out.map((i) => (i * 7919) % n);
      expect(keys).toEqual([...keys].sort((a, b) => a - b));
    } finally {
      sort.close();
    }
  });
});
