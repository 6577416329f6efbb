// Item-level retries: after the client's own request retries are spent, an item with a
// transient failure gets a few more tries with a longer backoff; permanent failures do not.
// Every failure of an item is classified here, once: transient, throttling, fatal to the job.
import { ApiError, AuthenticationError, ConnectionError, PermissionDeniedError, TimeoutError, RateLimitError, ServerError } from '../api/errors.js';
import { backoffDelay } from '../api/retry.js';
import { sleep } from '../api/sleep.js';

export interface ItemRetryOptions {
  retries: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_ITEM_RETRY: ItemRetryOptions = { retries: 3, baseDelayMs: 2_000, maxDelayMs: 60_000 };

/** Worth trying the item again later: the service or the network was the problem, not the item. */
export function isTransient(err: unknown): boolean {
  if (err instanceof RateLimitError || err instanceof ServerError) return true;
  if (err instanceof ConnectionError || err instanceof TimeoutError) return true;
  if (err instanceof ApiError) return false;
  // File-system errors that may pass (a file busy on a network share).
  const code = (err as { code?: string } | undefined)?.code;
  return code === 'EBUSY' || code === 'EAGAIN';
}

/** The service pushes back: fewer writes at once (adaptive concurrency). */
export function isThrottle(err: unknown): boolean {
  return err instanceof RateLimitError || (err instanceof ServerError && err.status === 503);
}

/** Every other item would fail the same way: the job stops. */
export function isFatal(err: unknown): boolean {
  return err instanceof AuthenticationError || err instanceof PermissionDeniedError;
}

export async function withItemRetries<T>(fn: (attempt: number) => Promise<T>, opts: ItemRetryOptions, signal?: AbortSignal): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (err) {
      if (attempt >= opts.retries || !isTransient(err) || signal?.aborted) throw err;
      await sleep(backoffDelay(attempt, { maxRetries: opts.retries, baseDelayMs: opts.baseDelayMs, maxDelayMs: opts.maxDelayMs, maxRetryAfterMs: opts.maxDelayMs }), signal);
    }
  }
}
