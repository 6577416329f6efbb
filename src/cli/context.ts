// What every command that talks to the service needs: settings, a logger and a client.
import type { Command } from 'commander';
import { FerryClient } from '../api/client.js';
import { createLogger, type Logger } from '../log.js';
import { writeStderr } from '../runner/terminal.js';
import { resolveSettings, type ResolvedSettings } from '../config/profile.js';
import type { GlobalOptions } from './global-options.js';
import { parseListingLag } from '../api/listing-lag.js';
import { positiveNumber } from './options.js';

export interface CommandContext {
  settings: ResolvedSettings;
  logger: Logger;
  client: FerryClient;
}

/** --listing-lag, which comes before FERRY_LISTING_LAG and the profile's listingLag (already in the settings). */
export function listingLagFlagOf(g: GlobalOptions): { listingLagMs?: number; allowPlainHttp?: true } {
  return {
    ...(g.listingLag === undefined ? {} : { listingLagMs: parseListingLag(g.listingLag, '--listing-lag') }),
    // --allow-http, or FERRY_ALLOW_HTTP=1 where no flag can be given (a container's command).
    ...(g.allowHttp || process.env.FERRY_ALLOW_HTTP === '1' ? { allowPlainHttp: true as const } : {}),
  };
}

export function globalOptions(cmd: Command): GlobalOptions {
  return cmd.optsWithGlobals<GlobalOptions>();
}

/** The log level by the one rule: --log-level (or -v, -q), then FERRY_LOG_LEVEL, then the profile, then `fallback`. */
export function logLevelOf(cmd: Command, settings: ResolvedSettings, fallback = 'info'): string {
  return flagLevel(globalOptions(cmd)) ?? settings.profile.logLevel ?? fallback;
}

/** The level the global flags ask for, if any: --log-level, or -v (debug), or -q (error). */
export function flagLevel(g: GlobalOptions): string | undefined {
  return g.logLevel ?? (g.verbose ? 'debug' : g.quiet ? 'error' : undefined);
}

/** The logger of a command: at its level, to --log-file when one is given. */
export function loggerFor(cmd: Command, settings: ResolvedSettings, fallback = 'info'): Logger {
  const file = globalOptions(cmd).logFile;
  return createLogger({ level: logLevelOf(cmd, settings, fallback), ...(file ? { file } : { stderr: writeStderr }) });
}

/** `rps`: a command's --rps, which comes before the profile's requestsPerSecond. */
/** `profile`: a job file's, which names the tenant its runs use (before the -p flag, as `ferry run` takes it). */
export function createContext(cmd: Command, rps?: string, profile?: string): CommandContext {
  const g = globalOptions(cmd);
  const settings = resolveSettings({ profile: profile ?? g.profile, configFile: g.config });
  const logger = loggerFor(cmd, settings);
  const client = new FerryClient({
    ...settings.clientOptions,
    ...listingLagFlagOf(g),
    ...(settings.profileName ? { label: settings.profileName } : {}),
    logger,
    ...(rps !== undefined ? { requestsPerSecond: positiveNumber('--rps', rps) } : {}),
  });
  return { settings, logger, client };
}
