// Whole `ferry` processes for the scale and shapes benches: run as a user runs them, with their
// own peak RSS read back (bench/workers/peak-rss.mjs) and their --json answer parsed.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const ferryBin = new URL('../bin/ferry.js', import.meta.url).pathname;
const preload = new URL('./workers/peak-rss.mjs', import.meta.url).pathname;

/** One ferry process: wall ms, exit code, its peak RSS (KiB), its CPU ms, when it first connected (ms from its start) and its --json answer. `started` sees the child. */
export async function runFerry(work, step, argv, env, started) {
  const rssFile = join(work, 'rss');
  const cpuFile = join(work, 'cpu');
  const startupFile = join(work, 'startup');
  for (const f of [rssFile, cpuFile, startupFile]) await rm(f, { force: true });
  const begun = process.hrtime.bigint();
  const child = spawn(process.execPath, ['--import', preload, ferryBin, ...argv, '--json'], { env: { ...process.env, ...env, BENCH_RSS_FILE: rssFile, BENCH_CPU_FILE: cpuFile, BENCH_STARTUP_FILE: startupFile }, stdio: ['ignore', 'pipe', 'pipe'] });
  started?.(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
  const [code, signal] = await once(child, 'exit');
  const ms = Number(process.hrtime.bigint() - begun) / 1e6;
  if (signal) return { code, signal, ms, json: undefined, rssKiB: 0 };
  let json;
  try {
    json = JSON.parse(stdout);
  } catch {
    throw new Error(`${step}: exit ${code}, no JSON answer: ${stderr}`);
  }
  const startup = await readFile(startupFile, 'utf8');
  return { code, ms, json, rssKiB: Number(await readFile(rssFile, 'utf8')), cpuMs: Number(await readFile(cpuFile, 'utf8')), startupMs: startup ? Number(startup) : undefined };
}

/** A ferry environment of its own under `work`: no user config, a state directory per name. */
export function ferryEnv(work, stateDir, extra = {}) {
  return { HOME: work, XDG_CONFIG_HOME: join(work, 'no-config'), FERRY_STATE_DIR: join(work, stateDir), FERRY_LOG_LEVEL: 'silent', ...extra };
}

/** The environment that points ferry at one emulator process. */
export function emulatorEnv(emu) {
  return { FERRY_BASE_URL: emu.baseUrl, FERRY_SETTINGS_URL: emu.settingsUrl, FERRY_AUTH_URL: emu.authUrl, FERRY_AUDIENCE: emu.audience, FERRY_CLIENT_ID: emu.credentials.clientId, FERRY_CLIENT_SECRET: emu.credentials.clientSecret };
}

/** The environment naming two emulators as profiles `a` and `b` (migrate takes tenants by profile). */
export async function twoProfiles(work, a, b) {
  const profile = (emu, name) => `    baseUrl: ${emu.baseUrl}\n    settingsUrl: ${emu.settingsUrl}\n    authUrl: ${emu.authUrl}\n    audience: ${emu.audience}\n    clientId: ${emu.credentials.clientId}\n    clientSecretEnv: SCALE_SECRET_${name}\n`;
  const file = join(work, 'profiles.yaml');
  await writeFile(file, `profiles:\n  a:\n${profile(a, 'A')}  b:\n${profile(b, 'B')}`);
  return { FERRY_CONFIG: file, SCALE_SECRET_A: a.credentials.clientSecret, SCALE_SECRET_B: b.credentials.clientSecret };
}
