// What every job command's action shares: client + checkpoint store + limiter for a run, and the
// exit of a run refused by the lock. (The flags and their parsing are in ./options.ts.)
import type { PairDeps } from '../tenants/selection.js';
import type { Command } from 'commander';
import { FerryClient } from '../api/client.js';
import { AdaptiveConcurrency, DEFAULT_CONCURRENCY } from '../runner/adaptive.js';
import { ENV_VARS, resolveSettings, type ResolvedSettings } from '../config/profile.js';
import { defaultStorePath, openStore } from '../store/index.js';
import type { CheckpointStore } from '../store/types.js';
import { LockedError } from '../runner/job.js';
import { LeaseError, LeaseHeldError } from '../runner/lease.js';
import { breakCommand, leaseEventsOnStderr, userMessage } from './lease-words.js';
import type { LeaseSettings } from '../backends/project/lease-use.js';
import { definitionFromFlags, type LoadedDefinition } from '../../jobs/definition.js';
import { JOB_SETTINGS, type JobKind } from '../settings/declared.js';
import { formFromFlags, type Form } from '../settings/form.js';
import { globalOptions, listingLagFlagOf, loggerFor } from './context.js';
import { EXIT } from './exit-codes.js';
import type { Reply } from './reply.js';
import { positiveNumber, type RunOptions } from './options.js';
import { shellWord } from './shell-words.js';
import { resolve } from 'node:path';

export { collect, positiveInt, uuidFlag, type RunOptions } from './options.js';

/**
 * A job command's flags read as its job file would be (jobs/definition.ts): one reader for the
 * flags, a job file and a resumed run's record. `args` are the command's arguments under their keys.
 */
export function jobFromFlags<K extends JobKind>(kind: K, args: Form, opts: Record<string, unknown>): Extract<LoadedDefinition, { kind: K }> {
  return definitionFromFlags(kind, { ...args, ...formFromFlags(JOB_SETTINGS[kind], opts) }) as Extract<LoadedDefinition, { kind: K }>;
}

/** A job's lease settings with what the operator hears at once (a wait, a loss). */
export function heard<T extends { lock?: LeaseSettings | undefined }>(options: T): T {
  return { ...options, lock: { onEvent: leaseEventsOnStderr(), breakHint: breakCommand, ...options.lock } };
}

export interface JobDeps {
  client: FerryClient;
  store: CheckpointStore;
  /** The store's file, as a command says which store it opened. */
  storePath: string;
  concurrency: AdaptiveConcurrency;
  close(): Promise<void>;
}

/** Client, checkpoint store and limiter for a job run from the command line. */
export function openJobDeps(cmd: Command, maxConcurrency: number | undefined, run: Pick<RunOptions, 'rps' | 'state' | 'profile'>): JobDeps {
  const g = globalOptions(cmd);
  const settings = resolveSettings({ profile: run.profile ?? g.profile, configFile: g.config });
  const concurrency = new AdaptiveConcurrency({ max: maxConcurrency ?? DEFAULT_CONCURRENCY });
  const client = clientFor(cmd, settings, run.rps);
  const storePath = run.state ?? defaultStorePath(settings.profileName);
  const store = openStore(storePath, { reopenFlags: reopenFlags(run.profile ?? g.profile, run.state) });
  return {
    client,
    store,
    storePath,
    concurrency,
    async close() {
      store.close();
      await client.close();
    },
  };
}

/**
 * The flags a command ferry prints must carry to reach the same tenant and store: the profile when
 * one was named (a flag or a job file: the user's environment does not hold it), the store when it
 * is not the profile's default one (--state, a job file's `state:`).
 */
export function reopenFlags(profile: string | undefined, state: string | undefined): string {
  const words = [...(profile !== undefined ? ['-p', profile] : []), ...(state !== undefined ? ['--state', resolve(state)] : [])];
  return words.map((w) => ` ${shellWord(w)}`).join('');
}

function clientFor(cmd: Command, settings: ResolvedSettings, rpsFlag?: string | number): FerryClient {
  const logger = loggerFor(cmd, settings, 'warn');
  const rps = rpsFlag !== undefined ? positiveNumber('--rps', String(rpsFlag)) : settings.clientOptions.requestsPerSecond;
  return new FerryClient({
    ...settings.clientOptions,
    ...listingLagFlagOf(globalOptions(cmd)),
    ...(settings.profileName ? { label: settings.profileName } : {}),
    logger,
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
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !(k in ENV_VARS) || k === 'FERRY_LOG_LEVEL' || k === 'FERRY_LISTING_LAG'));
  const fromSettings = resolveSettings({ profile: fromProfile, configFile: g.config, env });
  const toSettings = resolveSettings({ profile: toProfile, configFile: g.config, env });
  const concurrency = new AdaptiveConcurrency({ max: maxConcurrency });
  const from = clientFor(cmd, fromSettings);
  const to = clientFor(cmd, toSettings);
  // A report or watch of the migration's batches reads the target, as the target's profile.
  const store = openStore(state ?? defaultStorePath(toSettings.profileName), { reopenFlags: reopenFlags(toProfile, state) });
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
export function lockedOr(err: unknown, reply: Reply): number {
  if (err instanceof LeaseHeldError) {
    reply.error(EXIT.locked, userMessage(err), { lock: 'service', holder: err.holder, waitedMs: Math.round(err.waitedMs), ...(err.breakHint ? { breakWith: err.breakHint } : {}) }, 'locked');
    return EXIT.locked;
  }
  if (err instanceof LeaseError) {
    reply.error(EXIT.aborted, userMessage(err));
    return EXIT.aborted;
  }
  if (err instanceof LockedError) {
    reply.error(EXIT.locked, err.message, { holder: err.holder }, 'locked');
    return EXIT.locked;
  }
  throw err;
}

