// The listing lag: the longest the service takes to show a new item in its lists and searches
// after the create returned (and to stop showing a removed one). The spec never promises that a
// list shows an item at once; a service that lists from a search index does not. Every decision
// ferry makes from "not listed, so not there" rests on this bound (docs/scale-out.md, *Late
// listings*); the watch below is where a run learns that the service is later than the bound,
// from the listings that should hold ferry's own writes, and stops writing.
import { ConfigurationError, FerryError } from '../errors.js';
import { isDuration, parseDuration } from '../duration.js';
import type { Mark } from '../marks.js';

/** A bound past an hour is no bound a run could wait out. */
export const MAX_LISTING_LAG_MS = 3_600_000;

/**
 * A bound as the flag, the environment or a profile writes it: `4s`, `1500ms`, `0`. `where` names
 * the setting in the error (exit 2).
 */
export function parseListingLag(text: string, where: string): number {
  const t = text.trim();
  if (/^-/.test(t)) throw new ConfigurationError(`${where} "${t}" is negative: the listing lag is how long the service takes to list a new item, from 0 to 1h`);
  if (!isDuration(t)) throw new ConfigurationError(`${where} "${t}" is not a duration like 0, 500ms, 4s or 1m (how long the service takes to list a new item)`);
  const ms = parseDuration(t);
  if (ms > MAX_LISTING_LAG_MS) throw new ConfigurationError(`${where} "${t}" is above 1h: a run waits the bound out before it decides from a listing, so a bound that long cannot be used`);
  return ms;
}

/** A listing was later than the bound: the run stops writing (exit 3). */
export class ListingLagError extends FerryError {
  constructor(
    readonly boundMs: number,
    readonly observedMs: number,
    what: string,
  ) {
    super(
      `the service listed ${what} later than the listing lag ferry was told to allow: not listed ${formatLag(observedMs)} after it was made, with --listing-lag ${formatLag(boundMs)}; ` +
        `decisions made from its listings could write copies, so this run writes nothing more. Measure the service again with \`ferry doctor --probe --write-profile\` (it records the profile's listingLag), or raise --listing-lag (or FERRY_LISTING_LAG) above ${formatLag(observedMs)}`,
    );
  }
  override get mark(): Mark {
    return 'fatal';
  }
}

/** What a run saw of the service's listing lag, for its summary (`listingLag`). */
export interface ListingLagReport {
  /** The bound the run honoured, ms. */
  boundMs: number;
  /** The longest one of the run's own writes was seen missing from a listing begun after its create returned, ms (a lower bound of the lag). */
  observedMaxMs: number;
  /** Set when that was beyond the bound: the run stopped writing. */
  exceeded?: string;
}

/**
 * One service's bound, and what the run saw of its lag. Shared by everything that lists the
 * service's own writes back (the lease's claim and beats, a folder the service says exists).
 */
export class ListingLagWatch {
  private observed = 0;
  private failure: ListingLagError | undefined;

  constructor(readonly boundMs = 0) {}

  /**
   * One of ferry's own writes was missing from a listing begun `lateByMs` after its create
   * returned. Beyond the bound, the watch trips: every later write is refused (`check`).
   */
  missing(what: string, lateByMs: number): ListingLagError | undefined {
    this.observed = Math.max(this.observed, Math.round(lateByMs));
    if (lateByMs >= this.boundMs) this.failure ??= new ListingLagError(this.boundMs, lateByMs, what);
    return this.failure;
  }

  /** Throws once a listing was seen later than the bound: a run writes nothing more after that. */
  check(): void {
    if (this.failure) throw this.failure;
  }

  get exceeded(): ListingLagError | undefined {
    return this.failure;
  }

  report(): ListingLagReport {
    return { boundMs: this.boundMs, observedMaxMs: this.observed, ...(this.failure ? { exceeded: this.failure.message } : {}) };
  }
}

export function formatLag(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
}
