// What every job command shares: the transfer flags and their parsing, ids checked as uuids,
// client + checkpoint store + limiter for a run, and the exit of a run refused by the lock.
import { isUuid } from '../ids.js';
import type { PairDeps } from '../tenants/selection.js';
import { Option, type Command } from 'commander';
import { ConfigurationError } from '../api/errors.js';
import { FerryClient } from '../api/client.js';
import { AdaptiveConcurrency, DEFAULT_CONCURRENCY, throttleListener } from '../runner/adaptive.js';
import { createLogger } from '../log.js';
import { ENV_VARS, resolveSettings, type ResolvedSettings } from '../config/profile.js';
import { defaultStorePath, openStore } from '../store/index.js';
import type { CheckpointStore } from '../store/types.js';
import { LockedError } from '../runner/job.js';
import type { MirrorOptions } from '../../jobs/mirror.js';
import { visible, safeText } from '../backends/names.js';
import { OWN_METADATA } from '../backends/project/identity.js';
import { globalOptions, logLevelOf } from './context.js';
import { EXIT } from './exit-codes.js';
import { printJsonError } from './output.js';

export const OCR_ENGINES = ['cloudDocumentIntelligence', 'engineA'];
export const OCR_STRATEGIES = ['never', 'detect', 'always'];
export const COORDINATE_STRATEGIES = ['never', 'engineB', 'cloudDocumentIntelligence', 'spreadsheet'];

export interface MirrorCliOptions {
  project: string;
  to?: string;
  include: string[];
  exclude: string[];
  concurrency: string;
  rps?: string;
  checksum?: boolean;
  resync?: boolean;
  dryRun?: boolean;
  json?: boolean;
  followSymlinks?: boolean;
  ocrEngine?: string;
  ocrStrategy?: string;
  coordinateExtraction?: string;
  metadata: string[];
  state?: string;
}

/** The flags every job that sends files takes (mirror, upload). */
export function addTransferOptions(cmd: Command): Command {
  return cmd
    .requiredOption('--project <id>', 'the project the documents go to')
    .option('--to <folder>', 'remote folder path under the project root (default: the root)')
    .option('--include <glob>', 'only files matching (repeatable; fast-glob syntax)', collect, [])
    .option('--exclude <glob>', 'skip files matching (repeatable)', collect, [])
    .option('--concurrency <n>', 'most uploads at once (adapts down when the service pushes back)', String(DEFAULT_CONCURRENCY))
    .option('--rps <n>', 'most requests per second, all calls together')
    .option('--checksum', 'compare files by sha256 instead of size and modification time')
    .option('--resync', 'list the project first and adopt what is there, whatever the checkpoint store remembers')
    .option('--follow-symlinks', 'upload symlinked files that point inside SOURCE (folders are never followed)')
    .addOption(new Option('--ocr-engine <engine>', 'OCR engine for every document').choices(OCR_ENGINES))
    .addOption(new Option('--ocr-strategy <strategy>', 'OCR strategy for every document').choices(OCR_STRATEGIES))
    .addOption(new Option('--coordinate-extraction <strategy>', 'coordinate extraction strategy').choices(COORDINATE_STRATEGIES))
    .option('--metadata <key=value>', 'metadata on every document (repeatable)', collect, [])
    .option('--state <file>', 'checkpoint database (default: FERRY_STATE_DIR or $XDG_STATE_HOME/ferry/<profile>.sqlite)')
    .option('--json', 'print one JSON summary on stdout at the end');
}

/** Ids are uuids: anything else is a usage error found before any request (exit 2). */
export function uuidFlag(flag: string, value: string): string {
  if (!isUuid(value)) throw new ConfigurationError(`${flag} "${visible(value)}" is not an id: expected a uuid like 0f3c2a9e-5b1d-4c8e-9a7f-2d6e8b1c4a50`);
  return value;
}

export function transferOptionsFrom(source: string, opts: MirrorCliOptions): MirrorOptions {
  return {
    source,
    project: uuidFlag('--project', opts.project),
    to: opts.to,
    include: opts.include,
    exclude: opts.exclude,
    concurrency: positiveInt('--concurrency', opts.concurrency),
    checksum: opts.checksum === true,
    resync: opts.resync === true,
    followSymlinks: opts.followSymlinks === true,
    ocrEngine: opts.ocrEngine as MirrorOptions['ocrEngine'],
    ocrStrategy: opts.ocrStrategy as MirrorOptions['ocrStrategy'],
    coordinateExtractionStrategy: opts.coordinateExtraction as MirrorOptions['coordinateExtractionStrategy'],
    metadata: parseMetadata(opts.metadata),
    progress: !opts.json,
  };
}

export interface RunOptions {
  rps?: string | number | undefined;
  state?: string | undefined;
  json: boolean;
  dryRun?: boolean;
  profile?: string | undefined;
}

export interface JobDeps {
  client: FerryClient;
  store: CheckpointStore;
  concurrency: AdaptiveConcurrency;
  close(): Promise<void>;
}

/** Client, checkpoint store and limiter for a job run from the command line. */
export function openJobDeps(cmd: Command, maxConcurrency: number | undefined, run: RunOptions): JobDeps {
  const g = globalOptions(cmd);
  const settings = resolveSettings({ profile: run.profile ?? g.profile, configFile: g.config });
  const concurrency = new AdaptiveConcurrency({ max: maxConcurrency ?? DEFAULT_CONCURRENCY });
  const client = clientFor(cmd, settings, concurrency, run.rps);
  const store = openStore(run.state ?? defaultStorePath(settings.profileName));
  return {
    client,
    store,
    concurrency,
    async close() {
      store.close();
      await client.close();
    },
  };
}

function clientFor(cmd: Command, settings: ResolvedSettings, concurrency: AdaptiveConcurrency, rpsFlag?: string | number): FerryClient {
  const logger = createLogger({ level: logLevelOf(cmd, settings, 'warn') });
  const rps = rpsFlag !== undefined ? positiveNumber('--rps', String(rpsFlag)) : settings.clientOptions.requestsPerSecond;
  return new FerryClient({
    ...settings.clientOptions,
    ...(settings.profileName ? { label: settings.profileName } : {}),
    logger,
    onRetry: throttleListener(concurrency),
    ...(rps !== undefined ? { requestsPerSecond: rps } : {}),
  });
}

/** The two tenants of a migration (tenants/selection's PairDeps) as the CLI opens them: with the shared limiter, and closed after. */
export type OpenedPair = PairDeps & { concurrency: AdaptiveConcurrency; close(): Promise<void> };

/**
 * Two tenants named by two profiles (a migration), each with its own client and its own
 * `requestsPerSecond`. The FERRY_* address and credential variables are not applied here: they
 * would make both sides the same tenant. The checkpoint store is the target profile's.
 */
export function openPairDeps(cmd: Command, fromProfile: string, toProfile: string, maxConcurrency: number, state: string | undefined): OpenedPair {
  const g = globalOptions(cmd);
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !(k in ENV_VARS) || k === 'FERRY_LOG_LEVEL'));
  const fromSettings = resolveSettings({ profile: fromProfile, configFile: g.config, env });
  const toSettings = resolveSettings({ profile: toProfile, configFile: g.config, env });
  const concurrency = new AdaptiveConcurrency({ max: maxConcurrency });
  const from = clientFor(cmd, fromSettings, concurrency);
  const to = clientFor(cmd, toSettings, concurrency);
  const store = openStore(state ?? defaultStorePath(toSettings.profileName));
  return {
    from,
    to,
    store,
    concurrency,
    async close() {
      store.close();
      await Promise.all([from.close(), to.close()]);
    },
  };
}

/** A held lock is exit code 4 with its message (and, under --json, one JSON object); anything else goes up. */
export function lockedOr(err: unknown, json: boolean): number {
  if (err instanceof LockedError) {
    process.stderr.write(`ferry: ${safeText(err.message)}\n`);
    if (json) printJsonError(EXIT.locked, err.message, { status: 'locked', holder: err.holder });
    return EXIT.locked;
  }
  throw err;
}

export function parseMetadata(pairs: string[]): Record<string, string> | undefined {
  if (pairs.length === 0) return undefined;
  const out: Record<string, string> = {};
  for (const pair of pairs) {
    const i = pair.indexOf('=');
    if (i <= 0) throw new ConfigurationError(`--metadata "${visible(pair)}" must look like key=value`);
    if (OWN_METADATA.test(pair.slice(0, i))) throw new ConfigurationError(`--metadata "${visible(pair)}": keys starting with "ferry." are ferry's own (the identity of each document, docs/cli.md); choose another key`);
    out[pair.slice(0, i)] = pair.slice(i + 1);
  }
  return out;
}

export function positiveInt(flag: string, value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new ConfigurationError(`${flag} must be a whole number of at least 1, not "${value}"`);
  return n;
}

function positiveNumber(flag: string, value: string): number {
  const n = Number(value);
  if (!(n > 0)) throw new ConfigurationError(`${flag} must be a positive number, not "${value}"`);
  return n;
}

export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
