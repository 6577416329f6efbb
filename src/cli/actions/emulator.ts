// `ferry emulator`: the service itself, on this machine, for tests and offline scripts.
import type { Command } from 'commander';
import { ConfigurationError } from '../../api/errors.js';
import { createLogger } from '../../log.js';
import { loadSeedFile, parseFaultSpec, startEmulator } from '../../emulator/index.js';
import { flagLevel, globalOptions } from '../context.js';
import { ProfilesFileError, writeProfilesFile } from '../emulator-profiles.js';
import { parseListingLag } from '../../api/listing-lag.js';

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
  const faults = opts.faults ? asConfig('--faults', () => parseFaultSpec(opts.faults as string)) : undefined;
  const seed = opts.seed ? asConfig(`--seed ${opts.seed}`, () => loadSeedFile(opts.seed as string)) : undefined;
  // Logs to stderr only: stdout carries exactly the one ready line.
  const g = globalOptions(cmd);
  const logger = createLogger({ level: flagLevel(g) ?? process.env.FERRY_LOG_LEVEL ?? 'info', ...(g.logFile ? { file: g.logFile } : {}) });
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
  });
  if (opts.writeProfiles) {
    try {
      const names = writeProfilesFile(opts.writeProfiles, handle.describe());
      process.stderr.write(`profiles ${names.join(', ')} written to ${opts.writeProfiles}: ferry --config ${opts.writeProfiles} -p ${names[0]} ls\n`);
    } catch (err) {
      await handle.close();
      if (err instanceof ProfilesFileError) throw new ConfigurationError(err.message);
      throw err;
    }
  }
  process.stdout.write(`${JSON.stringify(handle.describe())}\n`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await handle.close();
}


/** Bad input named as a usage error (exit 2). */
function asConfig<T>(what: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw new ConfigurationError(`${what}: ${(err as Error).message}`);
  }
}
