// The lease's TTL under a listing lag. A claim is held only once the bound has passed since it was
// made, and the holder must renew within its TTL of the claim, so the TTL must outlast the bound
// with room for the round trips: at least LAG_TTL_FACTOR times it. Unset, the default grows to
// that; set shorter, it is refused before anything is attempted (a ConfigurationError: exit 2).
import { ConfigurationError } from '../../errors.js';
import { formatLag } from '../../api/listing-lag.js';
import { DEFAULT_LEASE_TTL_MS, MAX_LEASE_TTL_MS } from './protocol.js';

export const LAG_TTL_FACTOR = 3;

/** A TTL asked for that a lease could not be renewed within under the run's listing lag. */
export class LeaseTtlError extends ConfigurationError {
  constructor(readonly askedMs: number, readonly lagMs: number, readonly leastMs: number) {
    super(
      `a lease TTL of ${formatLag(askedMs)} is too short for a listing lag of ${formatLag(lagMs)}: a lease is held only once the listing lag has passed since its claim, and must be renewed within its TTL; ` +
        `it takes a TTL of at least ${LAG_TTL_FACTOR} times the lag (${formatLag(leastMs)})`,
    );
  }
}

/** The TTL a run's lease lives by: the one asked for, or the default grown to the lag. */
export function leaseTtlFor(asked: number | undefined, lagMs: number): number {
  const least = LAG_TTL_FACTOR * lagMs;
  if (asked === undefined) return Math.min(MAX_LEASE_TTL_MS, Math.max(DEFAULT_LEASE_TTL_MS, least));
  if (asked < least) throw new LeaseTtlError(asked, lagMs, least);
  return asked;
}
