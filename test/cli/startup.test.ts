// Start-up pays for the command asked for only: `--version` and every `--help` load commander and
// the definitions, never a client, the checkpoint store, the profiles or a job (issue 21: a cron
// job or a shell loop pays start-up on every call). Read from the modules Node actually resolves.
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { FERRY_BIN } from '../helpers/cli.js';

const REGISTER = fileURLToPath(new URL('../helpers/load-trace/register.mjs', import.meta.url));

async function loaded(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; urls: string[]; stdout: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-startup-'));
  const trace = join(dir, 'trace.txt');
  await writeFile(trace, '');
  const child = spawn(process.execPath, ['--import', REGISTER, FERRY_BIN, ...args], { env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent', FERRY_LOAD_TRACE: trace, ...env } });
  let stdout = '';
  child.stdout.on('data', (d) => (stdout += d));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const urls = (await readFile(trace, 'utf8')).split('\n').filter(Boolean);
  return { code, urls, stdout };
}

/** What a definition may load: commander and ferry's own light modules (the emulator's mode choices are data alone). */
function heavy(urls: string[]): string[] {
  return [...new Set(urls)].filter((u) => {
    if (u.startsWith('node:')) return false;
    const pkg = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(u)?.[1];
    if (pkg) return pkg !== 'commander';
    return /\/dist\/(jobs\/|src\/(api\/(client|transport|auth)|store\/|config\/profile|emulator\/(?!mode-choices\.js$)|sync\/engine|backends\/(folder|zip|local)\/|backends\/project\/(?!identity)|cli\/(actions|shared|context)))/.test(u);
  });
}

const COMMANDS = ['api', 'doctor', 'mirror', 'upload', 'watch', 'report', 'playbooks', 'pull', 'migrate', 'check', 'ls', 'config', 'completion', 'jobs', 'run', 'emulator', 'demo'];

describe('start-up', () => {
  it('--version loads commander and nothing heavy', async () => {
    const r = await loaded(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe('0.1.0');
    expect(heavy(r.urls)).toEqual([]);
    // The trace itself works: the entry and commander are in it.
    expect(r.urls.some((u) => u.endsWith('/dist/src/cli/entry.js'))).toBe(true);
    expect(r.urls.some((u) => u.includes('/node_modules/commander/'))).toBe(true);
  });

  it.each([['--help'], ...COMMANDS.map((c) => [c, '--help']), ['jobs', 'list', '--help'], ['playbooks', 'backup', '--help'], ['playbooks', 'list', '--help'], ['help', 'pull']])('%s %s loads no client, store, profile or job', async (...args) => {
    // A config file that cannot be read as YAML: help must not read it at all.
    const dir = await mkdtemp(join(tmpdir(), 'ferry-startup-cfg-'));
    await writeFile(join(dir, 'config.yaml'), ': : not yaml [');
    const r = await loaded(args, { FERRY_CONFIG: join(dir, 'config.yaml'), FERRY_STATE_DIR: '/nonexistent/state' });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Usage: ferry/);
    expect(heavy(r.urls)).toEqual([]);
  });

  it('a mirror of a folder loads neither a manifest\'s parsers (csv-parse, saxes), a code page (iconv-lite), a pull nor an upload: they load when a run needs them', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-startup-mirror-'));
    // No service named: the command stops at its address (exit 2), after its action and job are loaded.
    const r = await loaded(['mirror', dir, '--project', 'p', '--state', join(dir, 's.sqlite')]).finally(() => rm(dir, { recursive: true, force: true }));
    expect(r.code).toBe(2);
    const urls = [...new Set(r.urls)];
    expect(urls).toEqual(expect.arrayContaining([expect.stringMatching(/\/dist\/src\/cli\/actions\/mirror\.js$/), expect.stringMatching(/\/dist\/jobs\/mirror\.js$/), expect.stringMatching(/\/dist\/jobs\/definition\.js$/)]));
    const unwanted = urls.filter((u) => /\/node_modules\/(csv-parse|csv-stringify|saxes|iconv-lite)\/|\/dist\/jobs\/(pull|upload|migrate)\.js$|\/dist\/src\/(manifest\/write|backends\/local\/destination|tenants\/selection)\.js$/.test(u));
    expect(unwanted).toEqual([]);
  });

  it('a command that runs does load its action (the trace would see a regression)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-startup-run-'));
    const r = await loaded(['jobs', 'list', '--state', join(dir, 's.sqlite')]);
    expect(r.code).toBe(0);
    expect(heavy(r.urls)).toEqual(expect.arrayContaining([expect.stringMatching(/\/dist\/src\/cli\/actions\/jobs\.js$/), expect.stringMatching(/\/dist\/src\/store\//)]));
  });
});
