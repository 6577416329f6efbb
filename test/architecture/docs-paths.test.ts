// docs/architecture.md names a file for every box: each path it names exists, so the drawing
// cannot drift from the code unnoticed.
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** `src/backends/project/{source,destination}.ts` -> both paths. */
function expand(path: string): string[] {
  const m = /^(.*?)\{([^}]+)\}(.*)$/.exec(path);
  if (!m) return [path];
  return m[2]!.split(',').flatMap((part) => expand(`${m[1]}${part}${m[3]}`));
}

describe('docs/architecture.md', () => {
  it('names only paths that exist', () => {
    const text = readFileSync(`${ROOT}docs/architecture.md`, 'utf8');
    const named = [...text.matchAll(/`((?:src|jobs|test)\/[^`\s*]+)`/g)].flatMap((m) => expand(m[1]!));
    expect(named.length).toBeGreaterThan(40);
    expect(named.filter((p) => !existsSync(`${ROOT}${p}`))).toEqual([]);
  });
});
