// The net under ferry's own bugs (src/cli/stall.ts): a process whose last promise can never settle
// exits 1 saying so, and under --json still prints its one object; one that had begun its answer
// is not added to. Real processes, each ending on a top-level await that never settles.
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { assertEnvelope } from '../helpers/json-envelope.js';

const STALL = fileURLToPath(new URL('../../dist/src/cli/stall.js', import.meta.url));

function stalled(json: boolean, before = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const script = `import { installStallNet } from ${JSON.stringify(STALL)};
installStallNet(${json});
${before ? `process.stdout.write(${JSON.stringify(before)});` : ''}
await new Promise(() => {});`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script]);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

describe('a run that can never finish', () => {
  it('exits 1 naming the fault, with one JSON object under --json', async () => {
    const r = await stalled(true);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/the run stopped waiting on work that could never finish/);
    const answer = JSON.parse(r.stdout) as Record<string, unknown>;
    assertEnvelope(answer);
    expect(answer).toMatchObject({ status: 'error', exitCode: 1 });
  });

  it('adds nothing to an answer already begun, and prints no JSON without --json', async () => {
    const begun = await stalled(true, '{"command":"ls","items":[');
    expect(begun.code).toBe(1);
    expect(begun.stdout).toBe('{"command":"ls","items":[');
    const plain = await stalled(false);
    expect(plain.code).toBe(1);
    expect(plain.stdout).toBe('');
    expect(plain.stderr).toMatch(/please report it/);
  });
});
