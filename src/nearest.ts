// The known word a typo was closest to: a flag (`--projct`), a job file's key (`maxDuraton`). One
// owner, so that both say "did you mean" alike. Levenshtein distance: the words are short, the
// plain table is enough.

/** Edit distance between two words. */
export function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next[j] = Math.min((row[j] as number) + 1, (next[j - 1] as number) + 1, (row[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length] as number;
}

/** The candidate nearest `word` within `within` edits (case folded), or undefined. */
export function nearest(word: string, candidates: Iterable<string>, within = 2): string | undefined {
  const folded = word.toLowerCase();
  let best: { word: string; d: number } | undefined;
  for (const c of candidates) {
    const d = editDistance(c.toLowerCase(), folded);
    if (d <= within && (!best || d < best.d)) best = { word: c, d };
  }
  return best?.word;
}
