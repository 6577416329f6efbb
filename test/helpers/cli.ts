// The compiled `ferry` command run as a user runs it: a child process, its exit code and output.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { assertEnvelope } from './json-envelope.js';

export const FERRY_BIN = fileURLToPath(new URL('../../bin/ferry.js', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `as`: run as another user (root reads every file, so unreadable-file cases run as nobody). The
 * suite's TMPDIR goes along (test/global-setup.ts): ferry's scratch lands where the test looks for
 * it, and is removed with the run.
 */
export function runFerry(args: string[], env: Record<string, string>, onSpawn?: (child: ChildProcess) => void, as: { uid?: number; gid?: number } = {}): Promise<CliResult> {
  return runCommand(process.execPath, [FERRY_BIN, ...args], ferryTestEnv(env), onSpawn, as);
}

/** The environment a test's ferry runs with: `env` over a PATH, no home, no logs and the suite's TMPDIR. */
export function ferryTestEnv(env: Record<string, string>): Record<string, string> {
  const temp = process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {};
  return { PATH: process.env.PATH ?? '', HOME: '/nonexistent', FERRY_LOG_LEVEL: 'silent', ...temp, ...env };
}

/** Any command (an installed `ferry`), with exactly `env`: its exit code and output. */
export function runCommand(file: string, args: string[], env: Record<string, string>, onSpawn?: (child: ChildProcess) => void, opts: { uid?: number; gid?: number; cwd?: string } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { ...opts, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    onSpawn?.(child);
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * `ferry` run and killed with SIGKILL once `when` says so (asked every 10 ms while it runs); its
 * result. A run that ended on its own would make a test of what a kill leaves prove nothing: the
 * caller checks `code` is null.
 */
export async function killedWhen(args: string[], env: Record<string, string>, when: () => boolean | Promise<boolean>): Promise<CliResult> {
  let child: ChildProcess | undefined;
  let done = false;
  const watching = (async () => {
    while (!done) {
      if (await when()) {
        child?.kill('SIGKILL');
        return;
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  const result = await runFerry(args, env, (c) => (child = c));
  done = true;
  await watching;
  return result;
}

/** The one JSON object a `--json` run must print, held to the schema of every --json answer; or a failure naming what was printed instead. */
export function onlyJson(result: CliResult): Record<string, unknown> {
  const lines = result.stdout.split('\n').filter((l) => l.trim() !== '');
  if (lines.length !== 1) throw new Error(`expected exactly one JSON line on stdout, got ${lines.length}: ${result.stdout.slice(0, 500)} (stderr: ${result.stderr.slice(0, 500)})`);
  const value = JSON.parse(lines[0] as string) as Record<string, unknown>;
  assertEnvelope(value);
  return value;
}
