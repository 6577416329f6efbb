// Runs work items from a stream with bounded concurrency and a bounded backlog, so memory stays
// flat however long the stream: the producer waits while the backlog is full (rclone's
// "--max-backlog" between its lister and its transfers).
import PQueue from 'p-queue';
import type { AdaptiveConcurrency } from './adaptive.js';

export interface PoolOptions {
  concurrency: AdaptiveConcurrency;
  /** Items queued but not yet started (default 4 x max concurrency). */
  backlog?: number;
  signal?: AbortSignal;
}

/**
 * Feeds `items` to `work`. Stops taking new items when `signal` aborts and waits for the
 * ones in flight to settle. Errors thrown by `work` are the caller's to record: the pool
 * rethrows the first one only after everything in flight has settled.
 */
export async function runPool<T>(items: AsyncIterable<T>, work: (item: T) => Promise<void>, opts: PoolOptions): Promise<void> {
  const queue = new PQueue({ concurrency: opts.concurrency.limit });
  const backlog = opts.backlog ?? opts.concurrency.limit * 4;
  let failure: unknown;
  const sync = () => {
    if (queue.concurrency !== opts.concurrency.limit) queue.concurrency = opts.concurrency.limit;
  };
  try {
    for await (const item of items) {
      if (opts.signal?.aborted || failure !== undefined) break;
      sync();
      await queue.onSizeLessThan(backlog);
      if (opts.signal?.aborted) break;
      void queue.add(async () => {
        // Stopped, or a fatal failure ended the job: what waits in the backlog is not started.
        if (opts.signal?.aborted || failure !== undefined) return;
        try {
          await work(item);
        } catch (err) {
          failure ??= err;
        } finally {
          sync();
        }
      });
    }
  } finally {
    await queue.onIdle();
  }
  if (failure !== undefined) throw failure;
}
