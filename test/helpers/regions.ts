// Emulators in processes of their own, standing for two regions of the service, and a config file
// with one profile per tenant: what `ferry migrate --from uk --to us` is run against.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { FerryClient } from '../../src/api/index.js';
import type { TenantDescription } from '../../src/emulator/index.js';
import { FERRY_BIN } from './cli.js';
import { LAG_BOUND_MS, LAG_MS, STRICT, STRICT_FLAGS } from './service.js';

export interface Region {
  child: ChildProcess;
  baseUrl: string;
  settingsUrl: string;
  authUrl: string;
  audience: string;
  tenants: TenantDescription[];
  client(tenant: number): FerryClient;
  stop(): Promise<void>;
}

export async function startRegion(args: string[] = []): Promise<Region> {
  const child = spawn(process.execPath, [FERRY_BIN, 'emulator', '--port', '0', '--ready-json', ...(STRICT ? STRICT_FLAGS : []), ...(LAG_MS ? ['--listing-lag', `${LAG_MS}ms`] : []), ...args], { env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent', FERRY_LOG_LEVEL: 'silent' }, stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  const ready = JSON.parse(line) as Omit<Region, 'child' | 'client' | 'stop'>;
  const clients: FerryClient[] = [];
  return {
    ...ready,
    child,
    client(tenant) {
      const t = ready.tenants[tenant]!;
      const c = new FerryClient({ address: { baseUrl: ready.baseUrl, settingsUrl: ready.settingsUrl, authUrl: ready.authUrl }, credentials: { clientId: t.clientId, clientSecret: t.clientSecret, audience: ready.audience }, retry: { baseDelayMs: 5, maxDelayMs: 50 }, ...(LAG_MS ? { listingLagMs: LAG_BOUND_MS } : {}) });
      clients.push(c);
      return c;
    },
    async stop() {
      await Promise.all(clients.map((c) => c.close()));
      child.kill('SIGTERM');
      if (child.exitCode === null) await once(child, 'exit');
    },
  };
}

/** A config file naming each (region, tenant) as a profile; secrets in the returned environment. */
export async function writeProfiles(file: string, profiles: Record<string, { region: Region; tenant: number }>): Promise<Record<string, string>> {
  const env: Record<string, string> = { FERRY_CONFIG: file, ...(LAG_MS ? { FERRY_LISTING_LAG: `${LAG_BOUND_MS}ms` } : {}) };
  const lines = ['profiles:'];
  for (const [name, { region, tenant }] of Object.entries(profiles)) {
    const t = region.tenants[tenant]!;
    const secretVar = `SECRET_${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
    env[secretVar] = t.clientSecret;
    lines.push(`  ${name}:`, `    baseUrl: ${region.baseUrl}`, `    settingsUrl: ${region.settingsUrl}`, `    authUrl: ${region.authUrl}`, `    audience: ${region.audience}`, `    clientId: ${t.clientId}`, `    clientSecretEnv: ${secretVar}`);
  }
  await writeFile(file, `${lines.join('\n')}\n`);
  return env;
}
