// Exit codes of every ferry command (documented in docs/cli.md).
export const EXIT = {
  /** Everything done. */
  ok: 0,
  /** Finished, but something failed (items, checks, a call the service refused). */
  failed: 1,
  /** Bad usage or configuration: nothing was attempted. */
  usage: 2,
  /** Aborted: interrupted, authentication failed, the service refused the job, or it listed later than the bound. */
  aborted: 3,
  /** Another run holds the job's lock: in this checkpoint store, or its lease on the service. */
  locked: 4,
  /** Processing of an upload batch did not end within --timeout. */
  timeout: 5,
  /** The tenant ran out of processing credits: the job stopped. */
  noCredits: 6,
  /** The run lost its lease on the service (stopped past its TTL, or broken): it stopped writing. */
  leaseLost: 7,
  /** The run reached its window (--max-duration, --max-transfer, --max-files): it started nothing more; the next run carries on. */
  limit: 8,
} as const;
