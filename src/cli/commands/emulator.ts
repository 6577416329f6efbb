// `ferry emulator`: the service itself, on this machine, for tests and offline scripts.
import { Option, type Command } from 'commander';
import { ConfigurationError } from '../../api/errors.js';
import { createLogger } from '../../log.js';
import { loadSeedFile, parseFaultSpec, startEmulator } from '../../emulator/index.js';
import { globalOptions } from '../context.js';

interface EmulatorCliOptions {
  host: string;
  port: string;
  data?: string;
  seed?: string;
  faults?: string;
  tokenTtl?: string;
  maxPageSize?: string;
  strict?: boolean;
  folders?: 'extension' | 'none';
  dateCompleted?: 'when-processed' | 'at-patch';
  streamFormat?: 'events' | 'json' | 'no-final';
}

export function registerEmulator(program: Command): void {
  program
    .command('emulator')
    .description('run a local, stateful emulator of the whole service; prints one JSON line with its URLs and clients when ready')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <n>', 'port (0 takes any free port)', '4010')
    .option('--data <dir>', 'keep state and blobs in this folder across restarts (default: in memory)')
    .option('--seed <file>', 'JSON seed replacing the default tenants, clients, metadata and models')
    .option('--faults <spec>', 'inject faults, e.g. 429=0.05,503=0.05,reset=0.02,latency=20,seed=7')
    .addOption(new Option('--token-ttl <seconds>', 'lifetime of issued tokens').default('3600'))
    .option('--max-page-size <n>', 'answer every list with at most n items per page, silently, as services that cap page sizes do')
    .option('--strict', 'the interface exactly as the spec shows it: no folder creation, no document-content route (url is a signed link)')
    .addOption(new Option('--folders <mode>', 'folder creation: the extension, or none (404)').choices(['extension', 'none']))
    .addOption(new Option('--date-completed <when>', "when a document upload's dateCompleted is set").choices(['when-processed', 'at-patch']))
    .addOption(new Option('--stream-format <format>', 'what stream: true answers: events, plain json, or events without the final message').choices(['events', 'json', 'no-final']))
    .action(async (opts: EmulatorCliOptions, cmd: Command) => {
      const port = Number(opts.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigurationError(`--port must be a whole number from 0 to 65535, not "${opts.port}"`);
      const ttl = Number(opts.tokenTtl);
      if (!Number.isInteger(ttl) || ttl < 1) throw new ConfigurationError(`--token-ttl must be a positive number of seconds, not "${opts.tokenTtl}"`);
      const maxPageSize = opts.maxPageSize === undefined ? undefined : Number(opts.maxPageSize);
      if (maxPageSize !== undefined && !(Number.isInteger(maxPageSize) && maxPageSize >= 1)) throw new ConfigurationError(`--max-page-size must be a whole number of at least 1, not "${opts.maxPageSize}"`);
      const faults = opts.faults ? asConfig('--faults', () => parseFaultSpec(opts.faults as string)) : undefined;
      const seed = opts.seed ? asConfig(`--seed ${opts.seed}`, () => loadSeedFile(opts.seed as string)) : undefined;
      // Logs to stderr only: stdout carries exactly the one ready line.
      const logger = createLogger({ level: globalOptions(cmd).logLevel ?? process.env.FERRY_LOG_LEVEL ?? 'info' });
      const handle = await startEmulator({
        host: opts.host,
        port,
        tokenTtlSeconds: ttl,
        logger,
        ...(opts.data ? { dataDir: opts.data } : {}),
        ...(maxPageSize ? { maxPageSize } : {}),
        ...(faults ? { faults } : {}),
        ...(seed ? { seed } : {}),
        ...(opts.strict ? { strict: true } : {}),
        ...(opts.folders ? { folders: opts.folders } : {}),
        ...(opts.dateCompleted ? { dateCompleted: opts.dateCompleted } : {}),
        ...(opts.streamFormat ? { streamFormat: opts.streamFormat } : {}),
      });
      process.stdout.write(`${JSON.stringify(handle.describe())}\n`);
      await new Promise<void>((resolve) => {
        const stop = () => resolve();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
      await handle.close();
    });
}

/** Bad input named as a usage error (exit 2). */
function asConfig<T>(what: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw new ConfigurationError(`${what}: ${(err as Error).message}`);
  }
}
