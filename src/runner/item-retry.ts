// Item-level retries: after the client's own request retries are spent, an item with a
// transient failure gets a few more tries with a longer backoff; permanent failures do not.
// Failures are read by their mark (../marks.ts), given once where they arise.
import { isRetryable, markOf } from '../marks.js';
import { backoffDelay } from '../api/backoff.js';
import { sleep } from '../api/sleep.js';
import { type Slot, waitOutsideSlot } from '../slots.js';

export interface ItemRetryOptions {
  retries: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_ITEM_RETRY: ItemRetryOptions = { retries: 3, baseDelayMs: 2_000, maxDelayMs: 60_000 };

/** Worth trying the item again later: the service or the network was the problem, not the item. */
export function isTransient(err: unknown): boolean {
  return isRetryable(markOf(err));
}

/** The service pushes back: fewer writes at once (adaptive concurrency). */
export function isThrottle(err: unknown): boolean {
  return markOf(err) === 'throttled';
}

/** Every other item would fail the same way: the job stops. */
export function isFatal(err: unknown): boolean {
  return markOf(err) === 'fatal';
}

/** `slot`: the pool slot of the item, given back while it waits for its next try. */
export async function withItemRetries<T>(fn: (attempt: number) => Promise<T>, opts: ItemRetryOptions, signal?: AbortSignal, slot?: Slot): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (err) {
      if (attempt >= opts.retries || !isTransient(err) || signal?.aborted) throw err;
      const ms = backoffDelay(attempt, { maxRetries: opts.retries, baseDelayMs: opts.baseDelayMs, maxDelayMs: opts.maxDelayMs, maxRetryAfterMs: opts.maxDelayMs });
      await waitOutsideSlot(slot, () => sleep(ms, signal));
    }
  }
}
