// What every command that talks to the service needs: settings, a logger and a client.
import type { Command } from 'commander';
import { FerryClient } from '../api/client.js';
import { createLogger, type Logger } from '../log.js';
import { resolveSettings, type ResolvedSettings } from '../config/profile.js';
import type { GlobalOptions } from './main.js';

export interface CommandContext {
  settings: ResolvedSettings;
  logger: Logger;
  client: FerryClient;
}

export function globalOptions(cmd: Command): GlobalOptions {
  return cmd.optsWithGlobals<GlobalOptions>();
}

/** The log level by the one rule: --log-level, then FERRY_LOG_LEVEL, then the profile, then `fallback`. */
export function logLevelOf(cmd: Command, settings: ResolvedSettings, fallback = 'info'): string {
  return globalOptions(cmd).logLevel ?? settings.profile.logLevel ?? fallback;
}

export function createContext(cmd: Command): CommandContext {
  const g = globalOptions(cmd);
  const settings = resolveSettings({ profile: g.profile, configFile: g.config });
  const logger = createLogger({ level: logLevelOf(cmd, settings) });
  const client = new FerryClient({ ...settings.clientOptions, ...(settings.profileName ? { label: settings.profileName } : {}), logger });
  return { settings, logger, client };
}
