// The lease's records and the words every part of it shares: what a record says, where records
// live (a LeaseBoard: src/backends/project/lease-board.ts keeps them as projects of the service;
// the tests keep them in a model of it), the clock a holder measures itself by, and how a lease
// fails. The protocol and its assumptions are in docs/scale-out.md, *The lease*.
import type { Clock } from '../../clock.js';
import type { ListingBound } from '../../api/listed.js';
import { LeaseError, type LeaseHolder } from './errors.js';

export * from './errors.js';

/** The protocol this ferry speaks; a record of a higher one is never judged expired here. */
export const LEASE_PROTOCOL = 1;
export const DEFAULT_LEASE_TTL_MS = 30_000;
export const MIN_LEASE_TTL_MS = 2_000;
export const MAX_LEASE_TTL_MS = 3_600_000;

/** What a record says of itself (kept in the record; nothing secret). */
export interface LeaseBody {
  v: number;
  kind: 'claim' | 'beat';
  /** The run's token: every record of one holder carries it. */
  owner: string;
  /** The destination path under the scope ('' for all of it); two paths conflict when one holds the other. */
  path: string;
  ttlMs: number;
  host: string;
  pid: number;
  job: string;
}

export interface LeaseRecord {
  id: string;
  /** The service's time of its creation, ms since the epoch (its `dateAdded`). */
  at: number;
  /** Undefined when the record does not read as a lease record of any version (garbage). */
  body: LeaseBody | undefined;
  /** The protocol version a record declares, even when it is one this ferry does not read. */
  v?: number | undefined;
}

/** Where the records of one scope live: created, listed and removed, and read by id. */
export interface LeaseBoard {
  /** Creates a record; its id and the service's time of creation. */
  create(body: LeaseBody): Promise<{ id: string; at: number }>;
  /** Every record of the scope the service lists now, in any order (new ones may be listed late). */
  list(): Promise<LeaseRecord[]>;
  /** Removes a record; one already gone is no error. */
  remove(id: string): Promise<void>;
  /** Whether a record exists, read by its id (never late): tells a claim removed from one not listed yet. */
  exists(id: string): Promise<boolean>;
}

/**
 * The service's listing lag as the run bounds it (src/api/listing-lag.ts): how long after its
 * create a record is surely listed, and where a record seen missing for longer is reported. Every
 * wait for it is src/api/listed.ts's.
 */
export type LagBound = ListingBound;

/** Items list at once: the bound of a service that lists what it just made. */
export const NO_LAG: LagBound = { boundMs: 0, missing: () => undefined };

/** The local time a holder measures its own validity by: the one clock interface. */
export type { Clock } from '../../clock.js';


/** What a lease tells as it happens, one channel for all of it. */
export type LeaseEvent =
  | { type: 'acquired'; at: number }
  /** Another run holds it; this one waits (said once by the CLI). */
  | { type: 'waiting'; holder: LeaseHolder }
  | { type: 'renewed'; at: number }
  | { type: 'renewal-failed'; error: string }
  | { type: 'lost'; error: LeaseError }
  /** A listing showed the service listing later than the bound: the run writes nothing more. */
  | { type: 'lagged'; error: Error }
  /** A release that waits the bound first (the run wrote). */
  | { type: 'settling'; ms: number }
  /** A record that could not be removed now, left to expire with its TTL. */
  | { type: 'remove-failed'; id: string; error: string };

/** Checks a TTL: a positive duration the protocol can renew within. */
export function checkLeaseTtl(ttlMs: number, on: string): number {
  if (!Number.isFinite(ttlMs) || ttlMs < MIN_LEASE_TTL_MS || ttlMs > MAX_LEASE_TTL_MS) {
    throw new LeaseError(on, { code: 'ttl-range', ttlMs, minMs: MIN_LEASE_TTL_MS, maxMs: MAX_LEASE_TTL_MS });
  }
  return ttlMs;
}

export const systemClock: Clock = {
  // Elapsed time by both clocks, whichever says more: the monotonic clock stands still while a
  // laptop sleeps, the wall clock may be stepped back; the larger of the two is never too small.
  now: (() => {
    const perf0 = performance.now();
    const wall0 = Date.now();
    let last = 0;
    return () => (last = Math.max(last, performance.now() - perf0, Date.now() - wall0));
  })(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener('abort', done, { once: true });
    }),
};

export interface LeaseOptions {
  board: LeaseBoard;
  /** What the lease is on, for messages (a project and folder, a playbook…). */
  description: string;
  path: string;
  ttlMs?: number;
  /** How long to wait for a held lease before giving up (0: not at all). */
  waitMs?: number;
  owner: string;
  host: string;
  pid: number;
  job: string;
  clock?: Clock;
  /** How to break it, said to whoever is refused. */
  breakHint?: string;
  /**
   * Owners known to be dead without the service's word: the holder this run's checkpoint store
   * proved dead (its process is gone) when it took over the store's lock. Their records are
   * taken over at once, not a TTL later.
   */
  deadOwners?: readonly string[];
  random?: () => number;
  /** What the lease does as it happens (the CLI says some of it at once; tests record it). */
  onEvent?: ((event: LeaseEvent) => void) | undefined;
  /** The service's listing lag, bounded (default: none; a record missing from a listing is then beyond the bound). */
  lag?: LagBound;
  /**
   * Whether the run has sent a write of its own (not the lease's) to the service: a release waits
   * the bound only then. Default: whether any write was let through the lease's gate.
   */
  wroteOwn?: () => boolean;
}
