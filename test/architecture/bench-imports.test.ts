// `npm run bench` imports the built code by path and by name; a room moved or an export renamed
// would break it unseen until someone benchmarks. Every such import is checked against dist/
// (built by the test setup).
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const BENCH = fileURLToPath(new URL('../../bench/', import.meta.url));

function scripts(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? scripts(join(dir, d.name)) : d.name.endsWith('.mjs') ? [join(dir, d.name)] : []));
}

describe('the benchmarks import what exists', () => {
  it('every name bench/ imports from dist/ is exported there', async () => {
    const missing: string[] = [];
    let checked = 0;
    for (const file of scripts(BENCH)) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/import \{([^}]+)\} from '([./]+dist\/[^']+)'/g)) {
        const names = m[1]!.split(',').map((n) => n.trim().split(/\s+as\s+/)[0]!).filter(Boolean);
        const target = resolve(dirname(file), m[2]!);
        const mod = (await import(pathToFileURL(target).href).catch(() => undefined)) as Record<string, unknown> | undefined;
        for (const name of names) {
          checked++;
          if (!mod || !(name in mod)) missing.push(`${file.slice(BENCH.length)}: ${name} from ${m[2]}`);
        }
      }
    }
    expect(checked).toBeGreaterThan(10);
    expect(missing).toEqual([]);
  });
});
