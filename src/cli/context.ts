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

export function createContext(cmd: Command): CommandContext {
  const g = globalOptions(cmd);
  const settings = resolveSettings({ profile: g.profile, configFile: g.config });
  const logger = createLogger({ level: g.logLevel ?? settings.profile.logLevel });
  const client = new FerryClient({ ...settings.clientOptions, logger });
  return { settings, logger, client };
}
