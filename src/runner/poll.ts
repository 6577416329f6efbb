// The one way ferry waits for the service to finish something (a batch's processing, an import
// task, the demo's uploads): ask, and ask again after a wait that doubles up to a cap, until the
// answer says done or the time is up. Reads only, so it is resumable by nature.
import { sleep } from '../api/sleep.js';
import { FerryError } from '../errors.js';

/** The service was still processing when the wait ran out (exit 5): nothing is lost, a later wait or report goes on. */
export class ProcessingTimeoutError extends FerryError {}

export interface PollOptions {
  /** The first wait, ms; it doubles up to `maxMs`. */
  firstMs: number;
  maxMs: number;
  /** Longest total wait, ms. */
  timeoutMs: number;
  signal?: AbortSignal | undefined;
}

/**
 * Calls `check` until it returns a value (anything but undefined). When the next wait would pass
 * the deadline, throws what `timedOut` makes (it may quote the last answer it saw).
 */
export async function poll<T>(check: () => Promise<T | undefined>, opts: PollOptions, timedOut: () => Error): Promise<T> {
  const deadline = Date.now() + opts.timeoutMs;
  let delay = opts.firstMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    opts.signal?.throwIfAborted();
    if (Date.now() + delay > deadline) throw timedOut();
    await sleep(delay, opts.signal);
    delay = Math.min(opts.maxMs, delay * 2);
  }
}
