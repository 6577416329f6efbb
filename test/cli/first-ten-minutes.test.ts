// The README's "First ten minutes", run as written: the emulator line as its own process (a first
// terminal), then every line of the second block in one bash (a second terminal), with `npx ferry`
// the ferry of this checkout and /tmp/ferry-first a temporary folder. Each command must succeed,
// and what the section promises must hold: the mirror carries the file once, the pull brings it back.
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { createInterface } from 'node:readline';
import { FERRY_BIN } from '../helpers/cli.js';

const README = new URL('../../README.md', import.meta.url);

function blocksOf(text: string): string[] {
  const section = text.slice(text.indexOf('## First ten minutes'), text.indexOf('\n## ', text.indexOf('## First ten minutes') + 5));
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] as string);
}

describe('README: first ten minutes', () => {
  it('runs every command as written', async () => {
    const [emulatorBlock, session] = blocksOf(await readFile(README, 'utf8'));
    expect(emulatorBlock).toBeDefined();
    expect(session).toBeDefined();
    const dir = await mkdtemp(join(tmpdir(), 'ferry-first-'));
    // The checkout's ferry for `npx ferry`, a temp folder for /tmp/ferry-first.
    const local = (line: string) => line.replaceAll('/tmp/ferry-first', dir).replaceAll('npx ferry', `node ${FERRY_BIN}`);
    const env = { PATH: process.env.PATH ?? '', HOME: dir, FERRY_LOG_LEVEL: 'silent', FERRY_STATE_DIR: join(dir, 'state') };

    const emulatorLine = (emulatorBlock as string).trim();
    const emulator = spawn('bash', ['-c', `exec ${local(emulatorLine)}`], { env });
    try {
      const lines = createInterface({ input: emulator.stdout });
      let stderr = '';
      emulator.stderr.on('data', (d) => (stderr += d));
      const [ready] = await Promise.race([once(lines, 'line'), once(emulator, 'exit').then(() => [undefined])]);
      expect(ready, stderr).toBeDefined();

      const script = ['set -euo pipefail', ...(session as string).trim().split('\n').map((l) => `${local(l)}`)].join('\n');
      const shell = spawn('bash', ['-c', script], { env });
      let out = '';
      let err = '';
      shell.stdout.on('data', (d) => (out += d));
      shell.stderr.on('data', (d) => (err += d));
      const [code] = await once(shell, 'exit');
      expect(code, `${out}\n${err}`).toBe(0);
      // What the section promises.
      expect(out).toContain('* contoso  127.0.0.1:');
      expect(out).toContain('verdict: ready');
      expect(out).toMatch(/2ea32fa3-a2be-4b9c-8eb3-559d8a004598 {2}\S+ \S+ {2}Contoso onboarding/);
      expect(out).toContain('upload, new: contracts/terms.txt');
      expect(out).toMatch(/mirror run \d+: succeeded/);
      expect(out).toMatch(/\/Share\/contracts\/terms\.txt$/m);
      expect(out).toMatch(/pull run \d+: succeeded/);
      expect(await readFile(join(dir, 'copy', 'contracts', 'terms.txt'), 'utf8')).toBe('Supplier terms\n');
    } finally {
      emulator.kill('SIGTERM');
      await once(emulator, 'exit').catch(() => undefined);
    }
  });
});
