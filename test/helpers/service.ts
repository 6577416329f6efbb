// The emulator started in-process, with a typed client for one of its tenants: what the job
// tests talk to, over real loopback HTTP.
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { Agent, type Dispatcher } from 'undici';
import { mkdir, writeFile, symlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { FerryClient, type ClientOptions } from '../../src/api/index.js';
import { startEmulator, type EmulatorHandle, type EmulatorOptions } from '../../src/emulator/index.js';
import { collect } from './test-server.js';
import type { Document } from '../../src/api/types.js';
import { logicalPath } from '../../src/backends/project/source.js';
import { writeProfilesFile } from '../../src/cli/emulator-profiles.js';
import { mirror } from '../../jobs/mirror.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';

export interface Service {
  emulator: EmulatorHandle;
  project: string;
  client(opts?: Partial<ClientOptions>, tenant?: number): FerryClient;
  /** FERRY_* variables for a child `ferry` process. */
  env(tenant?: number): Record<string, string>;
  close(): Promise<void>;
}

/**
 * The test matrix (vitest.config.ts): the job suites run once against the default emulator and once
 * with FERRY_TEST_EMULATOR=strict, against the interface exactly as the spec shows it and the other
 * plausible answer to everything it leaves open.
 */
export const STRICT = process.env.FERRY_TEST_EMULATOR === 'strict';

/**
 * The lagging project of the matrix (vitest.config.ts): the suites that decide from listings run
 * against an emulator that lists each new item up to LAG_MS late, every ferry told a bound of
 * LAG_BOUND_MS. The test's own checks read once the lag has passed (settled()).
 */
export const LAG_MS = Number(process.env.FERRY_TEST_LISTING_LAG_MS ?? 0);
export const LAG_BOUND_MS = Math.ceil((LAG_MS * 4) / 3);

/** Waits out the emulator's listing lag before a test reads what was written (nothing when it lists at once). */
export async function settled(): Promise<void> {
  if (LAG_MS > 0) await new Promise((r) => setTimeout(r, LAG_MS + 20));
}

/** The strict answers, as emulator options and as `ferry emulator` flags. */
export const STRICT_OPTIONS: EmulatorOptions = { strict: true, dateCompleted: 'at-patch', streamFormat: 'no-final', maxPageSize: 100 };
export const STRICT_FLAGS = ['--strict', '--date-completed', 'at-patch', '--stream-format', 'no-final', '--max-page-size', '100'];

/** Folders as the emulator holds them: none at all where it offers no folder creation. */
export function whereFoldersExist(folders: string[]): string[] {
  return STRICT ? [] : folders;
}

export async function startService(opts: EmulatorOptions = {}): Promise<Service> {
  const emulator = await startEmulator({ validateResponses: 'throw', processing: { minDelayMs: 1, maxDelayMs: 5, seed: 1 }, ...(STRICT ? STRICT_OPTIONS : {}), ...(LAG_MS ? { listingLagMs: LAG_MS } : {}), ...opts });
  const clients: FerryClient[] = [];
  const address = { baseUrl: emulator.baseUrl, settingsUrl: emulator.settingsUrl, authUrl: emulator.authUrl };
  return {
    emulator,
    project: emulator.tenants[0]!.assistants[0]!.projectIdentifier,
    client(extra = {}, tenant = 0) {
      const t = emulator.tenants[tenant]!;
      const c = new FerryClient({ address, credentials: { clientId: t.clientId, clientSecret: t.clientSecret, audience: emulator.audience }, retry: { baseDelayMs: 5, maxDelayMs: 50 }, ...(LAG_MS ? { listingLagMs: LAG_BOUND_MS } : {}), ...extra });
      clients.push(c);
      return c;
    },
    env(tenant = 0) {
      const t = emulator.tenants[tenant]!;
      return {
        FERRY_BASE_URL: emulator.baseUrl,
        FERRY_SETTINGS_URL: emulator.settingsUrl,
        FERRY_AUTH_URL: emulator.authUrl,
        FERRY_AUDIENCE: emulator.audience,
        FERRY_CLIENT_ID: t.clientId,
        FERRY_CLIENT_SECRET: t.clientSecret,
        ...(LAG_MS ? { FERRY_LISTING_LAG: `${LAG_BOUND_MS}ms` } : {}),
      };
    },
    /** Stops everything, and fails the file if any response broke the contract along the way. */
    async close() {
      await Promise.all(clients.map((c) => c.close()));
      const violations = [...emulator.contractViolations];
      await emulator.close();
      if (violations.length > 0) throw new Error(`the emulator sent responses that break the contract: ${JSON.stringify(violations.slice(0, 5))}`);
    },
  };
}

/** Counts requests by "METHOD /path" while passing them on untouched (nothing is intercepted). */
export function countingDispatcher(): { dispatcher: Dispatcher; counts: Map<string, number>; count(method: string, pattern: RegExp): number } {
  const counts = new Map<string, number>();
  const dispatcher = new Agent().compose((dispatch) => (options, handler) => {
    const key = `${options.method} ${String(options.path).split('?')[0]}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    return dispatch(options, handler);
  });
  return {
    dispatcher,
    counts,
    count: (method, pattern) => [...counts].filter(([k]) => k.startsWith(`${method} `) && pattern.test(k.slice(method.length + 1))).reduce((n, [, v]) => n + v, 0),
  };
}

/** Writes files given as relative path -> content. */
export async function writeTree(root: string, files: Record<string, string | Buffer>): Promise<void> {
  for (const [rel, content] of Object.entries(files)) {
    const path = join(root, rel);
    await mkdir(dirname(path), { recursive: true });
    if (rel.endsWith('/')) await mkdir(path, { recursive: true });
    else await writeFile(path, content);
  }
}

export { symlink };

/**
 * A new project holding `files`: written as a tree at `src` and mirrored into the project with a
 * checkpoint store of its own (`<src>.sqlite`), which the caller's runs never see.
 */
export async function mirroredProject(client: FerryClient, src: string, files: Record<string, string | Buffer>, name: string): Promise<string> {
  await writeTree(src, files);
  const project = (await client.projects.create({ name, description: 'seeded by a mirror' })).objectIdentifier;
  const store = new SqliteCheckpointStore(`${src}.sqlite`);
  try {
    await mirror({ source: src, project }, { client, store });
  } finally {
    store.close();
  }
  return project;
}

/**
 * Every non-folder document of the project, with its path: where it belongs, which for a document
 * flattened by a service without folders is the path ferry kept in its metadata.
 */
export async function remoteFiles(client: FerryClient, project: string): Promise<Document[]> {
  await settled();
  const docs = await collect(client.documents.list(project, { flattenList: true, includePath: true, hidePackagedFiles: false }));
  return docs.filter((d) => !d.isDirectory).map((d) => ({ ...d, path: logicalPath(d) ?? null }));
}

export async function remoteFolders(client: FerryClient, project: string): Promise<string[]> {
  await settled();
  const docs = await collect(client.documents.list(project, { flattenList: true, includePath: true, hidePackagedFiles: false }));
  return docs.filter((d) => d.isDirectory).map((d) => d.path ?? '').sort();
}

/** A ferry config file with a profile per client of the service's emulator (as `ferry emulator --write-profiles`); its path. */
export function writeServiceProfiles(service: Service, file: string): string {
  const emu = service.emulator;
  writeProfilesFile(file, {
    baseUrl: emu.baseUrl,
    settingsUrl: emu.settingsUrl,
    authUrl: emu.authUrl,
    audience: emu.audience,
    tenants: emu.tenants.map((t) => ({ name: t.name, clientId: t.clientId, clientSecret: t.clientSecret, readOnlyClientId: t.readOnlyClientId, readOnlyClientSecret: t.readOnlyClientSecret })),
  });
  return file;
}


/**
 * One emulator for a test file: started before its tests, closed after them, and after each test
 * checked for answers outside the contract. Returns a getter (the service exists once started).
 */
export function useService(opts: EmulatorOptions = {}): () => Service {
  let service: Service | undefined;
  beforeAll(async () => {
    service = await startService(opts);
  });
  afterAll(async () => {
    await service?.close();
  });
  afterEach(() => {
    expect(service?.emulator.contractViolations).toEqual([]);
  });
  return () => service as Service;
}
