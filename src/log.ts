// Logging: JSON lines by default (for cron and log shippers), readable on a TTY, to stderr so
// that stdout stays free for a command's own output. Secrets are redacted by key wherever they sit.
import pino, { type Logger, type DestinationStream, type Level } from 'pino';
import type PinoPretty from 'pino-pretty';
import { createRequire } from 'node:module';
import { Writable } from 'node:stream';
import { ConfigurationError } from './errors.js';

export type { Logger };

export const LOG_LEVELS: readonly Level[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'];

/** Keys whose values never reach a log line, at any depth pino's redaction reaches. */
export const REDACT_PATHS = [
  'clientSecret',
  'client_secret',
  'secret',
  'password',
  'token',
  'accessToken',
  'access_token',
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  '*.clientSecret',
  '*.client_secret',
  '*.secret',
  '*.token',
  '*.accessToken',
  '*.access_token',
  '*.authorization',
  '*.*.authorization',
];

export interface LogOptions {
  /** Level name, or 'silent'. Default: FERRY_LOG_LEVEL, else 'info'. */
  level?: string;
  /** Human-readable output; default when stderr is a TTY. */
  pretty?: boolean;
  /** Where to write (tests capture here); default stderr. */
  destination?: DestinationStream;
  /** A file to append JSON lines to instead (--log-file); its folder is made when missing. */
  file?: string;
  /** How text reaches stderr (the CLI's: above a live status line); default the stream itself. */
  stderr?: (text: string) => void;
}

export function createLogger(opts: LogOptions = {}): Logger {
  const level = opts.level ?? process.env.FERRY_LOG_LEVEL ?? 'info';
  if (level !== 'silent' && !(LOG_LEVELS as readonly string[]).includes(level)) {
    throw new ConfigurationError(`unknown log level "${level}": expected one of ${LOG_LEVELS.join(', ')}, silent`);
  }
  const base = { level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, base: { app: 'ferry' } };
  if (opts.file) return pino(base, pino.destination({ dest: opts.file, append: true, mkdir: true, sync: true }));
  const usePretty = opts.pretty ?? (!opts.destination && process.stderr.isTTY === true);
  const write = opts.stderr;
  const toStderr = write ? new Writable({ write: (chunk: Buffer, _enc, done) => (write(String(chunk)), done()) }) : undefined;
  if (usePretty) {
    // Loaded only for a terminal: cron and scripts, which start ferry most often, never pay for it.
    const pretty = createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
    return pino(base, pretty({ destination: toStderr ?? 2, sync: true, colorize: true, ignore: 'pid,hostname,app' }));
  }
  return pino(base, opts.destination ?? (write ? { write } : pino.destination({ dest: 2, sync: true })));
}

export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
