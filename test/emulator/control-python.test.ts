// Another language drives the control API: the Python helper docs/emulator.md gives (extracted
// from the docs, so the docs cannot drift from what works) and a script of the standard library
// alone (python/control_api_check.py) run by python3 against a real `ferry emulator` process.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FERRY_BIN } from '../helpers/cli.js';

const docs = readFileSync(fileURLToPath(new URL('../../docs/emulator.md', import.meta.url)), 'utf8');
const script = fileURLToPath(new URL('./python/control_api_check.py', import.meta.url));

/** The docs' python block whose first line names `file`. */
function block(file: string): string {
  const found = [...docs.matchAll(/```python\n([\s\S]*?)```/g)].map((m) => m[1] as string).find((code) => code.startsWith(`# ${file}`));
  if (!found) throw new Error(`docs/emulator.md has no python block starting "# ${file}"`);
  return found;
}

describe('the control API from Python', () => {
  it('drives a real emulator through every lever with the docs\' helper', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ferry-python-'));
    try {
      writeFileSync(join(dir, 'ferry_emulator.py'), block('ferry_emulator.py'));
      writeFileSync(join(dir, 'conftest.py'), block('conftest.py'));
      // The fixture file compiles (pytest itself is not needed to compile it).
      const compiled = spawnSync('python3', ['-m', 'py_compile', join(dir, 'conftest.py')], { encoding: 'utf8' });
      expect(compiled.stderr).toBe('');
      const run = spawnSync('python3', [script, dir, join(dir, 'data')], {
        encoding: 'utf8',
        env: { PATH: process.env.PATH ?? '', HOME: dir, FERRY_LOG_LEVEL: 'silent', FERRY_COMMAND: JSON.stringify([process.execPath, FERRY_BIN]) },
        timeout: 120_000,
      });
      expect(run.stderr).toBe('');
      expect(run.stdout.trim().split('\n')).toEqual([
        'ok health',
        'ok 401 and 403',
        'ok snapshot and restore',
        'ok faults',
        'ok listing lag',
        'ok processing/drain',
        'ok clock',
        'ok reset',
        'ok snapshots after a restart',
      ]);
      expect(run.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
