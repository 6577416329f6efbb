// The one owner of "not listed, so not there". A service may list a new item up to the listing
// lag after its create returned (src/api/listing-lag.ts), and keep listing a removed one as long:
// a decision that reads absence from a listing takes it from a listing begun at least the bound
// after the last write it must see. Everything that waits for that, looks again until then, or
// tells a listing later than the bound does it here, on one injected clock; the lag is reported
// through the one ListingLagWatch of the service.
import type { Clock } from '../clock.js';
import { sleep } from './sleep.js';

/** The bound, and where a listing later than it is told (a ListingLagWatch, or the lease's view of one). */
export interface ListingBound {
  readonly boundMs: number;
  /** One of the run's own writes was missing from a listing begun `lateByMs` after its create returned: an error when beyond the bound. */
  missing(what: string, lateByMs: number): Error | undefined;
}

/** Elapsed local time and waiting on it: the one clock interface. */
export type { Clock } from '../clock.js';

/** The process's monotonic clock. */
export const monotonicClock: Clock = {
  now: () => performance.now(),
  sleep: (ms, signal) => sleep(ms, signal),
};

/** The instant from which a listing shows every item whose create returned by `since`: the bound after it. */
export function listedInstant(bound: ListingBound, since: number): number {
  return since + bound.boundMs;
}

/** A service that lists what it made at once (a bound of 0): nothing is ever waited for. */
export function listsAtOnce(bound: ListingBound): boolean {
  return bound.boundMs === 0;
}

/**
 * Waits until a listing begun now shows every item whose create returned by `since` (local time),
 * and returns that instant: the bound after `since`.
 */
export async function listedAfter(bound: ListingBound, since: number, clock: Clock = monotonicClock, signal?: AbortSignal): Promise<number> {
  const at = listedInstant(bound, since);
  const early = at - clock.now();
  if (early > 0) await clock.sleep(early, signal);
  return at;
}

/** Whether a listing begun `lateByMs` after a create returned is owed that item (the bound has passed). */
export function owedListing(bound: ListingBound, lateByMs: number): boolean {
  return lateByMs >= bound.boundMs;
}

/**
 * Looks for something a listing shows, again every `everyMs`, until a look begun the bound after
 * `since` has not found it: then it is not there (undefined). Found sooner, it is.
 */
export async function lookUntilListed<T>(bound: ListingBound, since: number, look: () => Promise<T | undefined>, opts: { everyMs?: number; clock?: Clock; signal?: AbortSignal } = {}): Promise<T | undefined> {
  const clock = opts.clock ?? monotonicClock;
  const every = opts.everyMs ?? 250;
  for (;;) {
    const lookedAt = clock.now();
    const found = await look();
    if (found !== undefined) return found;
    const left = since + bound.boundMs - lookedAt;
    if (left <= 0) return undefined;
    await clock.sleep(Math.min(every, left), opts.signal);
  }
}

/**
 * As lookUntilListed, for an item known to exist since `since` (a create answered that it does):
 * not listed by a look begun the bound after is a listing later than the bound, told through the
 * bound's watch and thrown (the run stops writing).
 */
export async function expectListed<T>(bound: ListingBound, since: number, look: () => Promise<T | undefined>, what: string, opts: { everyMs?: number; clock?: Clock; signal?: AbortSignal } = {}): Promise<T> {
  const found = await lookUntilListed(bound, since, look, opts);
  if (found !== undefined) return found;
  // The last look began the bound after `since`, or later: at least that late.
  const lateBy = Math.max((opts.clock ?? monotonicClock).now() - since, bound.boundMs, 1);
  throw bound.missing(what, lateBy) ?? new Error(`${what} was not listed ${Math.round(lateBy)} ms after it was made`);
}

declare const LISTED: unique symbol;

/**
 * Proof that the listings read from here on show every item written before `since`: made only
 * here (by `awaitListed`, having waited for it), asked for by every decision that reads absence from
 * a listing (a destination's cold start and warm looks, migrate's counterparts, replay's lookups),
 * so that one made before the wait is a type error, not a copy. The lease makes it when it holds
 * (its claim waited the bound; every earlier holder's writes are listed), a run without a lease
 * when it has waited the bound at its start.
 */
export interface Listed {
  /** The local instant (Clock) whose writes every listing begun now shows. */
  readonly since: number;
  readonly [LISTED]: true;
}

/** Waits until listings show every item whose create returned by `since`, and gives the proof of it. */
export async function awaitListed(bound: ListingBound, since: number, clock: Clock = monotonicClock, signal?: AbortSignal): Promise<Listed> {
  await listedAfter(bound, since, clock, signal);
  // Stopped during the wait: no proof (an aborted signal always carries its reason).
  if (signal?.aborted) throw signal.reason;
  return { since } as Listed;
}
