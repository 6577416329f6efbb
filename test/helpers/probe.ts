// What the `ferry doctor --probe` tests share: emulators closed after the file, each with its env
// and client; the scratch projects left; one probe run as a user runs it.
import { afterAll, expect } from 'vitest';
import { startEmulator, type EmulatorHandle, type EmulatorOptions } from '../../src/emulator/index.js';
import { FerryClient } from '../../src/api/index.js';
import { onlyJson, runFerry } from './cli.js';

export interface ProbeEmulator {
  emu: EmulatorHandle;
  env: Record<string, string>;
  client: FerryClient;
}

/** Call at a file's top level: emulators it starts are closed after the file (modules are shared between files). */
export function probeEmulators(): (opts: EmulatorOptions) => Promise<ProbeEmulator> {
  const started: EmulatorHandle[] = [];
  afterAll(async () => {
    await Promise.all(started.map((e) => e.close()));
  });
  return async (opts) => {
    const emu = await startEmulator(opts);
    started.push(emu);
    const t = emu.tenants[0]!;
    const env = { FERRY_BASE_URL: emu.baseUrl, FERRY_SETTINGS_URL: emu.settingsUrl, FERRY_AUTH_URL: emu.authUrl, FERRY_AUDIENCE: emu.audience, FERRY_CLIENT_ID: t.clientId, FERRY_CLIENT_SECRET: t.clientSecret };
    const client = new FerryClient({ address: { baseUrl: emu.baseUrl, settingsUrl: emu.settingsUrl, authUrl: emu.authUrl }, credentials: { clientId: t.clientId, clientSecret: t.clientSecret, audience: emu.audience } });
    return { emu, env, client };
  };
}

/** Scratch projects and canaries of the probe still listed. */
export async function scratchLeft(client: FerryClient): Promise<number> {
  const page = await client.projects.list({ searchText: '.ferry-probe' }, { leaseRecords: true }).page(1, 100);
  return page.items.filter((p) => p.name?.startsWith('.ferry-probe')).length;
}

export type ProbeAnswer = { probe: Record<string, Record<string, unknown>>; matches: string; scratch: { created: number; removed: number; leftoversRemoved: number } };

/** `ferry doctor --probe --json` (links tried for 1 s), which must end with exit 0. */
export async function probe(env: Record<string, string>, extra: string[] = []): Promise<ProbeAnswer> {
  const r = await runFerry(['doctor', '--probe', '--json', '--probe-link-wait', '1s', ...extra], env);
  expect(r.code, r.stderr).toBe(0);
  return onlyJson(r) as unknown as ProbeAnswer;
}
