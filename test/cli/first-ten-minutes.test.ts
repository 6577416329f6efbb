// The README's "First ten minutes", run as written and read off a terminal: the emulator line as
// its own process (a first terminal), then every line of the second block in one bash in a
// pseudo-terminal (a second terminal), and each line of the third block on its own.
// `npx ferry` is the ferry of this checkout and /tmp/ferry-first a temporary folder. Each
// command must do and say what its comment promises.
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { createInterface } from 'node:readline';
import { FERRY_BIN } from '../helpers/cli.js';
import { commandInTerminal, screen } from '../helpers/pty.js';

const README = new URL('../../README.md', import.meta.url);
// Wide enough that no message wraps: the test reads whole lines.
const COLS = 240;

function blocksOf(text: string): string[] {
  const section = text.slice(text.indexOf('## First ten minutes'), text.indexOf('\n## ', text.indexOf('## First ten minutes') + 5));
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] as string);
}

/** A script in a terminal: its exit code, and the screen's lines (scrollback included) as one string. */
async function terminal(script: string, env: Record<string, string>): Promise<{ code: number | null; text: string }> {
  const run = await commandInTerminal(COLS, ['bash', '-c', script], env).done;
  // A line the terminal wrapped is read whole again.
  const lines: string[] = [];
  for (const l of await screen(run.output, COLS)) {
    if (l.wrapped && lines.length) lines[lines.length - 1] += l.text;
    else lines.push(l.text);
  }
  return { code: run.code, text: lines.join('\n') };
}

describe('README: first ten minutes', () => {
  it('runs every command as written, in a terminal, and each says what the README promises', async () => {
    const [emulatorBlock, session, mistakes] = blocksOf(await readFile(README, 'utf8'));
    expect(emulatorBlock).toBeDefined();
    expect(session).toBeDefined();
    expect(mistakes).toBeDefined();
    const dir = await mkdtemp(join(tmpdir(), 'ferry-first-'));
    // The checkout's ferry for `npx ferry`, a temp folder for /tmp/ferry-first.
    const local = (line: string) => line.replaceAll('/tmp/ferry-first', dir).replaceAll('npx ferry', `node ${FERRY_BIN}`);
    const env = { PATH: process.env.PATH ?? '', HOME: dir, FERRY_LOG_LEVEL: 'silent', FERRY_STATE_DIR: join(dir, 'state') };

    const emulator = spawn('bash', ['-c', `exec ${local((emulatorBlock as string).trim())}`], { env });
    try {
      const lines = createInterface({ input: emulator.stdout });
      let stderr = '';
      emulator.stderr.on('data', (d) => (stderr += d));
      const [ready] = (await Promise.race([once(lines, 'line'), once(emulator, 'exit').then(() => [undefined])])) as [string | undefined];
      expect(ready, stderr).toMatch(/^ferry emulator: ready at http:\/\/127\.0\.0\.1:\d+, tenants contoso \(uk\), fabrikam \(us\); profiles contoso, contoso-reader, fabrikam, fabrikam-reader in /);
      expect(ready).not.toMatch(/secret/);

      const script = ['set -euo pipefail', ...(session as string).trim().split('\n').map(local)].join('\n');
      const first = await terminal(script, env);
      expect(first.code, first.text).toBe(0);
      const out = first.text;
      expect(out).toContain('* contoso  127.0.0.1:');
      expect(out).toContain('verdict: ready');
      expect(out).toMatch(/2ea32fa3-a2be-4b9c-8eb3-559d8a004598 {2}\S+ \S+ {2}Contoso onboarding/);
      expect(out).toContain('upload, new: contracts/terms.txt');
      expect(out).toMatch(/mirror run 1: succeeded/);
      // Point 8: the second run in one line, naming the tenant, no batch, no folder counts.
      expect(out).toMatch(/^mirror run 2: nothing to do, its one entry already in place \(checked in \d+s; target: 127\.0\.0\.1:\d+, client contoso-sync, profile contoso\)$/m);
      // Point 7: ls sorted, each folder before its contents; then two versions at one path.
      const listings = [...out.matchAll(/((?:^ +(?:-|\d+) {2}\d{4}-\d\d-\d\d \d\d:\d\d:\d\d {2}\/Share\S*\n?)+)/gm)].map((m) => (m[1] as string).trim().split('\n').map((l) => l.trim().split(/ +/).at(-1)));
      expect(listings[0]).toEqual(['/Share/contracts/', '/Share/contracts/terms.txt']);
      expect(out).toMatch(/pull run \d+: succeeded/);
      expect(out).toMatch(/mirror run 4: succeeded[\s\S]*changed files uploaded again: 1/);
      expect(listings[1]).toEqual(['/Share/contracts/', '/Share/contracts/terms.txt', '/Share/contracts/terms.txt']);
      expect(out).toMatch(/matching 1 {2}older versions 1 \(earlier uploads of changed files, kept by the service\) {2}changed 0 {2}missing on the service 0 {2}only on the service 0/);
      expect(await readFile(join(dir, 'copy', 'contracts', 'terms.txt'), 'utf8')).toBe('Supplier terms\n');

      // The third block: each line on its own, each a one-line reason and a non-zero exit.
      const said: { code: number | null; text: string }[] = [];
      const prelude = ['export FERRY_CONFIG=' + join(dir, 'profiles.yaml'), 'PROJECT=2ea32fa3-a2be-4b9c-8eb3-559d8a004598'];
      for (const line of (mistakes as string).trim().split('\n')) said.push(await terminal([...prelude, local(line)].join('\n'), env));
      const [typo, missing, reader, noConfig] = said as [typeof said[0], typeof said[0], typeof said[0], typeof said[0]];
      // Point 4: the unknown flag named with the one meant, one line of hint, no help dump.
      expect(typo.code).toBe(2);
      expect(typo.text).toMatch(/unknown option '--projct'[\s\S]*Did you mean --project\?/);
      expect(typo.text).toContain('(add --help to see every flag)');
      expect(typo.text.split('\n').length).toBeLessThanOrEqual(3);
      // Point 5: no such project, said before any lease, with where to look; no run recorded.
      expect(missing.code).toBe(3);
      expect(missing.text).toMatch(/^ferry: no project 0f3c2a9e-5b1d-4c8e-9a7f-2d6e8b1c4a50 at 127\.0\.0\.1:\d+, client contoso-sync, profile contoso \(the service answered 404\): `ferry ls` lists the projects this client sees$/m);
      expect(missing.text).not.toMatch(/lease|run \d+/);
      // Point 6: a read-only client, in ferry's words, not the lease's mechanics.
      expect(reader.code).toBe(3);
      expect(reader.text).toMatch(/^ferry: this client may read but not write \(127\.0\.0\.1:\d+, client contoso-reader, profile contoso-reader\): the service refused ferry's first write \(403\), and nothing was written/m);
      expect(reader.text).not.toMatch(/POST \/projects/);
      // Point 3: no profile, and where one would come from.
      expect(noConfig.code).toBe(2);
      expect(noConfig.text).toMatch(/or use a profile: --config FILE or FERRY_CONFIG, and -p NAME \(no config file at .*ferry\/config\.yaml\)/);
      // Nothing of the third block was recorded: the store's runs are the four of the second.
      const jobs = await terminal(`${prelude[0]}\nnode ${FERRY_BIN} jobs list`, env);
      expect(jobs.text.split('\n').filter((l) => /^\s*\d+\s+(mirror|pull)\s/.test(l))).toHaveLength(4);
    } finally {
      emulator.kill('SIGTERM');
      await once(emulator, 'exit').catch(() => undefined);
    }
  });
});
