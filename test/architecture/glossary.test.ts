// One word, one meaning (docs/architecture.md, *Glossary*): each word is listed once, and the
// words given their own meaning keep it in the code. A test that reads the source as text: it
// fails when a listed word comes back as an identifier of another meaning.
import { describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { code, root, sources } from './sources.js';

/** Identifiers of a file's code (comments and string literals left out). */
const identifiers = (text: string) => [...code(text).replace(/'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`/g, "''").matchAll(/[A-Za-z_$][\w$]*/g)].map((m) => m[0]);

describe('the glossary', () => {
  it('lists each word once', async () => {
    const doc = await readFile(join(root, 'docs/architecture.md'), 'utf8');
    const table = doc.slice(doc.indexOf('## Glossary'));
    const words = [...table.matchAll(/^\| ([^|]+?) \|/gm)].map((m) => m[1]!).filter((w) => w !== 'word' && !/^-+$/.test(w));
    expect(words.length).toBeGreaterThan(20);
    expect(words.filter((w, i) => words.indexOf(w) !== i)).toEqual([]);
    for (const w of ['unchanged', 'skipped', 'settle', 'listed', 'judge', 'refused', 'throttled', 'denied', 'rejected', 'in flight']) expect(words).toContain(w);
  });

  it('"listed" is the listing lag waited out: no identifier calls it settled', async () => {
    const files = [...(await sources('src')), ...(await sources('jobs'))];
    const found = files.flatMap((f) => [...code(f.text).matchAll(/\b(Settled|settledAfter|settledInstant|lookUntilSettled|settledListings)\b/g)].map((m) => `${f.path}: ${m[1]}`));
    expect(found).toEqual([]);
  });

  it('"skipped" always has its reason: every count of a skip gives one, and what is unchanged is counted as unchanged', async () => {
    const files = [...(await sources('src')), ...(await sources('jobs'))];
    const skips = files.flatMap((f) => {
      const lines = code(f.text).split('\n');
      return lines.flatMap((line, i) => (/counts\.skipped(\+\+|\s*\+=)/.test(line) ? [{ at: `${f.path}:${i + 1}`, near: lines.slice(i - 2, i + 4).join('\n') }] : []));
    });
    expect(skips.length).toBeGreaterThan(0);
    for (const s of skips) expect(s.near, s.at).toMatch(/noteProblem\(|reason/);
    // Nothing unchanged is counted as skipped.
    for (const f of files) expect(code(f.text), f.path).not.toMatch(/unchanged[^\n]*\n?[^\n]*counts\.skipped\+\+|counts\.skipped\+\+[^\n]*unchanged/);
  });
  it('"refused" is what processing refused a document for: throttling, a lease, and input ferry will not take have their own words', async () => {
    // The modules of the other meanings: throttled (pacing), denied (the lease), rejected (bad input, unsafe archives, links, names).
    const otherMeanings = /^(src\/api\/(pacing|transport)\.ts|src\/runner\/(lease\/|lock\.ts|lease\.ts)|src\/cli\/lease-words\.ts|src\/settings\/|src\/manifest\/|src\/playbooks\/read\.ts|src\/tenants\/|jobs\/definition\.ts|src\/backends\/(?!project\/source\.ts))/;
    // Keys of the JSON summary that scripts read, kept under their old names.
    const keptKeys: Record<string, string[]> = { 'src/backends/local/destination.ts': ['refused', 'foldersRefused'], 'src/backends/project/folders.ts': ['refused', 'creationRefused'] };
    const files = [...(await sources('src')), ...(await sources('jobs'))].filter((f) => otherMeanings.test(f.path));
    expect(files.length).toBeGreaterThan(40);
    const found = files.flatMap((f) => identifiers(f.text).filter((id) => /refus/i.test(id) && !(keptKeys[f.path] ?? []).includes(id)).map((id) => `${f.path}: ${id}`));
    expect([...new Set(found)]).toEqual([]);
  });

  it('"settle" is the destination asked which in-flight items landed; nothing else is called settled', async () => {
    const owners = /^(src\/sync\/(engine|cold-start|contract)\.ts|src\/backends\/[^/]+\/destination\.ts|src\/mapping\/id-map\.ts)$/;
    const files = [...(await sources('src')), ...(await sources('jobs'))].filter((f) => !owners.test(f.path));
    const found = files.flatMap((f) => identifiers(f.text).filter((id) => /settl|Settl/.test(id) && id !== 'allSettled').map((id) => `${f.path}: ${id}`));
    expect([...new Set(found)]).toEqual([]);
  });

  it('an item whose intent is written and whose outcome is not is "in flight", never "uploading"', async () => {
    const files = [...(await sources('src')), ...(await sources('jobs'))].filter((f) => f.path !== 'src/store/migrations.ts');
    expect(files.flatMap((f) => (/'uploading'/.test(code(f.text)) ? [f.path] : []))).toEqual([]);
  });
});
