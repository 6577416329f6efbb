// `ferry emulator`: the service itself, on this machine, for tests and offline scripts.
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { ConfigurationError } from '../../api/errors.js';
import { createLogger } from '../../log.js';
import { loadSeedFile, parseFaultSpec, startEmulator } from '../../emulator/index.js';
import { flagLevel, globalOptions } from '../context.js';
import { ProfilesFileError, writeProfilesFile } from '../emulator-profiles.js';
import { parseListingLag } from '../../api/listing-lag.js';
import { visible } from '../../text.js';
import { pidAlive } from '../../processes.js';

interface EmulatorCliOptions {
  host: string;
  port: string;
  data?: string;
  seed?: string;
  faults?: string;
  tokenTtl?: string;
  maxPageSize?: string;
  listingLag?: string;
  strict?: boolean;
  folders?: 'extension' | 'none';
  dateCompleted?: 'when-processed' | 'at-patch';
  streamFormat?: 'events' | 'json' | 'no-final';
  writeProfiles?: string;
  readyJson?: boolean;
  search?: 'substring' | 'prefix' | 'word';
  searchCase?: 'insensitive' | 'sensitive';
  folderCase?: 'insensitive' | 'sensitive';
  timeResolution?: string;
  linkTtl?: string;
  linkAuth?: 'none' | 'token';
  range?: 'honoured' | 'ignored';
  formOrder?: 'any' | 'fields-first';
  metadata?: 'kept' | 'dropped';
  adminToken?: string;
  tlsCert?: string;
  tlsKey?: string;
  /** False under --no-control. */
  control: boolean;
}

export async function emulatorAction(opts: EmulatorCliOptions, cmd: Command): Promise<void> {
  const port = Number(opts.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigurationError(`--port must be a whole number from 0 to 65535, not "${opts.port}"`);
  const ttl = Number(opts.tokenTtl);
  if (!Number.isInteger(ttl) || ttl < 1) throw new ConfigurationError(`--token-ttl must be a positive number of seconds, not "${opts.tokenTtl}"`);
  const maxPageSize = opts.maxPageSize === undefined ? undefined : Number(opts.maxPageSize);
  if (maxPageSize !== undefined && !(Number.isInteger(maxPageSize) && maxPageSize >= 1)) throw new ConfigurationError(`--max-page-size must be a whole number of at least 1, not "${opts.maxPageSize}"`);
  // The global --listing-lag (ferry's bound) and the emulator's own flag share a name: here it is the emulator's.
  const lagText = opts.listingLag ?? globalOptions(cmd).listingLag;
  const listingLagMs = lagText === undefined ? undefined : parseListingLag(lagText, '--listing-lag');
  const timeResolutionMs = opts.timeResolution === undefined ? undefined : wholeAtLeastOne('--time-resolution', opts.timeResolution);
  const linkTtlSeconds = opts.linkTtl === undefined ? undefined : wholeAtLeastOne('--link-ttl', opts.linkTtl);
  const faults = opts.faults ? asConfig('--faults', () => parseFaultSpec(opts.faults as string)) : undefined;
  if (opts.adminToken !== undefined && !/^[\x21-\x7e]+$/.test(opts.adminToken)) {
    throw new ConfigurationError('--admin-token (or FERRY_EMULATOR_ADMIN_TOKEN) must be printable ASCII without spaces (it is sent as a bearer token)');
  }
  const seed = opts.seed ? asConfig(`--seed ${opts.seed}`, () => loadSeedFile(opts.seed as string)) : undefined;
  const tls = tlsFiles(opts);
  // Logs to stderr only, warnings and worse unless asked: stdout carries exactly the one ready line.
  const g = globalOptions(cmd);
  const logger = createLogger({ level: flagLevel(g) ?? process.env.FERRY_LOG_LEVEL ?? 'warn', ...(g.logFile ? { file: g.logFile } : {}) });
  const handle = await startEmulator({
    host: opts.host,
    port,
    tokenTtlSeconds: ttl,
    logger,
    ...(opts.data ? { dataDir: opts.data } : {}),
    ...(maxPageSize ? { maxPageSize } : {}),
    ...(listingLagMs ? { listingLagMs } : {}),
    ...(faults ? { faults } : {}),
    ...(seed ? { seed } : {}),
    ...(opts.strict ? { strict: true } : {}),
    ...(opts.folders ? { folders: opts.folders } : {}),
    ...(opts.dateCompleted ? { dateCompleted: opts.dateCompleted } : {}),
    ...(opts.streamFormat ? { streamFormat: opts.streamFormat } : {}),
    ...(opts.search ? { search: opts.search } : {}),
    ...(opts.searchCase ? { searchCase: opts.searchCase } : {}),
    ...(opts.folderCase ? { folderCase: opts.folderCase } : {}),
    ...(timeResolutionMs ? { timeResolutionMs } : {}),
    ...(linkTtlSeconds ? { linkTtlSeconds } : {}),
    ...(opts.linkAuth ? { linkAuth: opts.linkAuth } : {}),
    ...(opts.range ? { range: opts.range } : {}),
    ...(opts.formOrder ? { formOrder: opts.formOrder } : {}),
    ...(opts.metadata ? { metadata: opts.metadata } : {}),
    control: opts.control,
    ...(opts.adminToken ? { adminToken: opts.adminToken } : {}),
    ...(tls ? { tls } : {}),
  });
  const described = handle.describe();
  let written: string[] = [];
  if (opts.writeProfiles) {
    try {
      written = writeProfilesFile(opts.writeProfiles, described, opts.formOrder ?? 'any');
    } catch (err) {
      await handle.close();
      if (err instanceof ProfilesFileError) throw new ConfigurationError(err.message);
      throw err;
    }
  }
  // Listening for the stop before saying ready: a script that reads the line and stops it at once is heard.
  const stopped = new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    // Started by npm (npx, npm exec, npm run): the emulator stops with npm's wrapper rather than
    // serve on, orphaned, when the wrapper is killed in a way it cannot pass on.
    if (process.env.npm_command) watchParent(stop);
  });
  // The ready line: plain, no secret (a terminal, a CI log); with every client's secret only
  // under --ready-json, for the script that asked.
  if (opts.readyJson) process.stdout.write(`${JSON.stringify(described)}\n`);
  else {
    const tenants = described.tenants.map((t) => `${t.name} (${t.region})`).join(', ');
    const profiles = opts.writeProfiles ? `; profiles ${written.join(', ')} in ${visible(opts.writeProfiles)} (export FERRY_CONFIG=${visible(opts.writeProfiles)})` : '; --write-profiles FILE writes its clients as ferry profiles';
    const control = described.adminToken ? `; control API at ${described.baseUrl}/_emulator/ (its token: --admin-token, or adminToken in --ready-json)` : '';
    process.stdout.write(`ferry emulator: ready at ${described.baseUrl}, tenants ${tenants}${profiles}${control}; Ctrl-C or SIGTERM stops it\n`);
  }
  await stopped;
  await handle.close();
}

/** The key and certificate --tls-key and --tls-cert name, read; both or neither. */
function tlsFiles(opts: EmulatorCliOptions): { key: Buffer; cert: Buffer } | undefined {
  if (opts.tlsCert === undefined && opts.tlsKey === undefined) return undefined;
  if (opts.tlsCert === undefined || opts.tlsKey === undefined) throw new ConfigurationError('--tls-cert and --tls-key go together: give the certificate and its private key (PEM files)');
  const read = (flag: string, file: string) => asConfig(`${flag} ${visible(file)}`, () => readFileSync(file));
  const files = { key: read('--tls-key', opts.tlsKey), cert: read('--tls-cert', opts.tlsCert) };
  // Checked here, so that a wrong file is named rather than failing inside the server's start.
  asConfig(`--tls-cert ${visible(opts.tlsCert)} with --tls-key ${visible(opts.tlsKey)}`, () => createSecureContext(files));
  return files;
}

/**
 * Calls `gone` once npm's process that started this one has exited. npm runs a bin through a
 * shell (npm exec -> sh -c -> node), so the npm process is found up the chain of parents (Linux:
 * /proc); elsewhere, the direct parent.
 */
function watchParent(gone: () => void): void {
  const npm = npmAncestor();
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid !== parent || (npm !== undefined && !pidAlive(npm))) {
      clearInterval(timer);
      gone();
    }
  }, 250);
  timer.unref();
}

function npmAncestor(): number | undefined {
  let pid = process.ppid;
  for (let hop = 0; hop < 4 && pid > 1; hop++) {
    try {
      // npm names its process `npm exec …` / `npm run …` (process.title).
      if (/^npm\b|\/npm-cli\.js|\bnpx\b/.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' '))) return pid;
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      pid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {
      return undefined;
    }
  }
  return undefined;
}


function wholeAtLeastOne(flag: string, text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new ConfigurationError(`${flag} must be a whole number of at least 1, not "${text}"`);
  return n;
}

/** Bad input named as a usage error (exit 2). */
function asConfig<T>(what: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw new ConfigurationError(`${what}: ${(err as Error).message}`);
  }
}
