// Runs work items from a stream with bounded concurrency and a bounded backlog, so memory stays
// flat however long the stream: the producer waits while the backlog is full (rclone's
// "--max-backlog" between its lister and its transfers). An item waiting out a retry gives its
// slot back meanwhile (../slots.ts: the slot goes with the item's calls), so a refused request
// does not idle a worker; at most WAITING_PER_SLOT x the limit wait so at once, and one coming
// back from its wait goes ahead of new ones. (At 800 requests a second with 12 % of them asked to
// wait 1 s, about 100 wait at any time: a cap of 4 x 16 held the pace of 6,000 files under that
// mix to 300/s, 16 x to 700/s.)
// Hand-written over p-queue: a queue's task cannot hand its slot back and take it again.
import type { Slot } from '../slots.js';
import type { AdaptiveConcurrency } from './adaptive.js';

/** Items that may wait out a retry without a slot, per slot: bounds what a stalled service keeps in memory. */
export const WAITING_PER_SLOT = 16;

export interface PoolOptions {
  concurrency: AdaptiveConcurrency;
  /** Items queued but not yet started (default 4 x max concurrency). */
  backlog?: number;
  signal?: AbortSignal;
}

/** Slots counted against a limit that may change (adaptive concurrency). */
export class Slots {
  private active = 0;
  private released = 0;
  private readonly fresh: (() => void)[] = [];
  private readonly returning: (() => void)[] = [];

  /** `waiting`: most items waiting without a slot at once (default: the limit). */
  constructor(
    private readonly limit: () => number,
    private readonly waitingMax: () => number = limit,
  ) {}

  /** Items waiting for a first slot. */
  get queued(): number {
    return this.fresh.length;
  }

  acquire(returning = false): Promise<void> {
    if (this.active < this.limit() && (returning || this.returning.length === 0)) {
      this.active++;
      return Promise.resolve();
    }
    return new Promise((resolve) => (returning ? this.returning : this.fresh).push(resolve));
  }

  release(): void {
    this.active--;
    this.pump();
  }

  /** A slot for one item, which it may hand back while it waits. */
  slot(): Slot {
    const slots = this;
    return {
      waitedMs: 0,
      retries: 0,
      async releaseWhile<T>(wait: () => Promise<T>): Promise<T> {
        // Enough items already wait without a slot: this one keeps its own.
        if (slots.released >= slots.waitingMax()) return wait();
        slots.released++;
        slots.release();
        try {
          return await wait();
        } finally {
          slots.released--;
          await slots.acquire(true);
        }
      },
    };
  }

  private pump(): void {
    while (this.active < this.limit()) {
      const next = this.returning.shift() ?? this.fresh.shift();
      if (!next) return;
      this.active++;
      next();
    }
  }
}

/**
 * Feeds `items` to `work`. Stops taking new items when `signal` aborts and waits for the
 * ones in flight to settle. Errors thrown by `work` are the caller's to record: the pool
 * rethrows the first one only after everything in flight has settled.
 */
export async function runPool<T>(items: AsyncIterable<T>, work: (item: T, slot: Slot) => Promise<void>, opts: PoolOptions): Promise<void> {
  const slots = new Slots(
    () => opts.concurrency.limit,
    () => opts.concurrency.limit * WAITING_PER_SLOT,
  );
  const backlog = opts.backlog ?? opts.concurrency.limit * 4;
  const running = new Set<Promise<void>>();
  let failure: unknown;
  /** Resolves the producer when the backlog has room again. */
  let room: (() => void) | undefined;

  const start = (item: T): void => {
    const task = (async () => {
      await slots.acquire();
      room?.();
      room = undefined;
      try {
        // Stopped, or a fatal failure ended the job: what waits in the backlog is not started.
        if (opts.signal?.aborted || failure !== undefined) return;
        await work(item, slots.slot());
      } catch (err) {
        failure ??= err;
      } finally {
        slots.release();
      }
    })();
    running.add(task);
    void task.finally(() => running.delete(task));
  };

  try {
    for await (const item of items) {
      if (opts.signal?.aborted || failure !== undefined) break;
      // A full backlog is refilled once half of it has started, not one item per slot freed:
      // what is taken together is prepared together (the engine's intents share a commit).
      if (slots.queued >= backlog) while (slots.queued > backlog / 2) await new Promise<void>((resolve) => (room = resolve));
      if (opts.signal?.aborted || failure !== undefined) break;
      start(item);
    }
  } finally {
    while (running.size > 0) await Promise.all(running);
  }
  if (failure !== undefined) throw failure;
}
