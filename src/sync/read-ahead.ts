// The source read before the transfer takes from it, beside the destination's preparation (a
// cold start's listing of it): a folder walk is done by the time decisions can begin, instead of
// starting then. Up to `ahead` entries (raised by `allow`) wait before the first is taken; from
// then on it reads one batch ahead, as a plain loop would (a backend keeps its own pace: a walk's
// buffer, a listing's pages asked ahead), so that what a run holds stays the same as work grows.

export interface ReadAhead<T> extends AsyncIterable<T[]> {
  /** Lets up to `ahead` entries be read before the first is taken (no effect once it is). */
  allow(ahead: number): void;
  /** Stops reading (the transfer ended before taking everything): resolves once the source is closed. */
  stop(): Promise<void>;
}

export function readAhead<T>(source: AsyncIterable<T[]>, ahead: number): ReadAhead<T> {
  const queue: T[][] = [];
  let queued = 0;
  let limit = ahead;
  let taking = false;
  let ended = false;
  let failed = false;
  let failure: unknown;
  let stopped = false;
  let wakeConsumer: (() => void) | undefined;
  let wakeReader: (() => void) | undefined;
  const it = source[Symbol.asyncIterator]();

  const reader = (async () => {
    try {
      for (;;) {
        while (queued >= limit && !stopped) await new Promise<void>((resolve) => (wakeReader = resolve));
        if (stopped) {
          await it.return?.();
          return;
        }
        const next = await it.next();
        if (next.done) return;
        queue.push(next.value);
        queued += Math.max(1, next.value.length);
        wakeConsumer?.();
      }
    } catch (err) {
      failed = true;
      failure = err;
    } finally {
      ended = true;
      wakeConsumer?.();
    }
  })();

  const stop = async (): Promise<void> => {
    stopped = true;
    wakeReader?.();
    await reader;
  };

  return {
    stop,
    allow(more: number) {
      if (taking || more <= limit) return;
      limit = more;
      wakeReader?.();
    },
    async *[Symbol.asyncIterator](): AsyncIterator<T[]> {
      taking = true;
      limit = 1;
      wakeReader?.();
      try {
        for (;;) {
          const batch = queue.shift();
          if (batch !== undefined) {
            queued -= Math.max(1, batch.length);
            wakeReader?.();
            yield batch;
            continue;
          }
          if (ended) {
            if (failed) throw failure;
            return;
          }
          await new Promise<void>((resolve) => (wakeConsumer = resolve));
          wakeConsumer = undefined;
        }
      } finally {
        await stop();
      }
    },
  };
}
