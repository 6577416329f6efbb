// The house rules, read from the code's own imports by dependency-cruiser (.dependency-cruiser.cjs):
// the engine imports no backend, no HTTP, no file system; the emulator shares only the contract;
// data flows one way. And no circle between rooms (folders) outside the CLI.
import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = fileURLToPath(new URL('../../node_modules/dependency-cruiser/bin/dependency-cruise.mjs', import.meta.url));

interface Cruised {
  modules: { source: string; dependencies: { resolved: string; coreModule: boolean; couldNotResolve: boolean }[] }[];
  summary: { violations: { rule: { name: string }; from: string; to: string }[]; totalCruised: number };
}

let cruised: Promise<Cruised> | undefined;
function cruise(): Promise<Cruised> {
  cruised ??= promisify(execFile)(process.execPath, [BIN, 'src', 'jobs', '--config', '.dependency-cruiser.cjs', '--output-type', 'json'], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 }).then(
    ({ stdout }) => JSON.parse(stdout) as Cruised,
    // A violation makes depcruise exit non-zero; its JSON is on stdout all the same.
    (err: { stdout?: string }) => JSON.parse(err.stdout ?? '{}') as Cruised,
  );
  return cruised;
}

/** The room a module lives in: `jobs`, `src/<folder>`, or a file at the ground floor of src. */
export function roomOf(path: string): string {
  const parts = path.split('/');
  if (parts[0] === 'jobs') return 'jobs';
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : path;
}

/** Strongly connected groups of rooms (Tarjan), the ones with more than one room. */
export function roomCircles(edges: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  let next = 0;
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    on.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1) out.push(group.sort());
    }
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return out;
}

describe('the house rules', () => {
  it('finds circles between rooms (the check itself)', () => {
    const edges = new Map([['a', new Set(['b'])], ['b', new Set(['c'])], ['c', new Set(['a'])], ['d', new Set(['a'])]]);
    expect(roomCircles(edges)).toEqual([['a', 'b', 'c']]);
    expect(roomOf('src/backends/project/source.ts')).toBe('src/backends');
    expect(roomOf('src/marks.ts')).toBe('src/marks.ts');
  });

  it('dependency-cruiser finds no violation of .dependency-cruiser.cjs', async () => {
    const result = await cruise();
    expect(result.summary.totalCruised).toBeGreaterThan(100);
    expect(result.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`)).toEqual([]);
  });

  it('no circle between rooms outside src/cli', async () => {
    const result = await cruise();
    const edges = new Map<string, Set<string>>();
    for (const m of result.modules) {
      if (m.source.startsWith('node_modules')) continue;
      const from = roomOf(m.source);
      for (const d of m.dependencies) {
        if (d.coreModule || d.couldNotResolve || d.resolved.startsWith('node_modules')) continue;
        const to = roomOf(d.resolved);
        if (to === from) continue;
        if (!edges.has(from)) edges.set(from, new Set());
        edges.get(from)!.add(to);
      }
    }
    expect(edges.size).toBeGreaterThan(10);
    expect(roomCircles(edges)).toEqual([]);
  });
});
