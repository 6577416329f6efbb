// Summaries laid out for 80 columns: long lines broken at spaces, never inside an id or a path.
import { describe, expect, it } from 'vitest';
import { layout } from '../../src/runner/layout.js';

const ID_A = '2ea32fa3-a2be-4b9c-8eb3-559d8a004598';
const ID_B = '9ea32fa3-a2be-4b9c-8eb3-559d8a004598';

describe('layout', () => {
  it('keeps short lines, breaks long ones at spaces with the rest indented, and never cuts a word', () => {
    const long = `  project Contracts ${ID_A} -> ${ID_B} (created): 60 documents copied, 0 found, 0 skipped, 0 failed, 1.2 MB`;
    const out = layout(`short line\n${long}`, 80).split('\n');
    expect(out[0]).toBe('short line');
    for (const line of out) expect(line.length).toBeLessThanOrEqual(80);
    expect(out.slice(1).every((l, i) => (i === 0 ? l.startsWith('  project') : l.startsWith('      ')))).toBe(true);
    // Every word is whole on some line: the ids were not cut.
    expect(out.join(' ').split(/\s+/).filter(Boolean)).toEqual(`short line ${long}`.split(/\s+/).filter(Boolean));
    expect(out.some((l) => l.includes(ID_A))).toBe(true);
    expect(out.some((l) => l.includes(ID_B))).toBe(true);
  });

  it('puts a word longer than the width on a line of its own', () => {
    const path = `/${'x'.repeat(100)}`;
    const out = layout(`  deleted locally: ${path} and more`, 40).split('\n');
    expect(out).toEqual(['  deleted locally:', `      ${path}`, '      and more']);
  });
});
