// Reads an async source of batches ahead of its consumer, up to a bound: a cold start's walk of the
// source (local I/O, mostly waiting) overlaps its listing of the destination (the service's work)
// instead of following it. Past the bound the source waits, as it would in the backlog.

export class ReadAhead<T> {
  private readonly iterator: AsyncIterator<T[]>;
  private readonly held: T[][] = [];
  private heldItems = 0;
  private done = false;
  private failure: { error: unknown } | undefined;
  private stopped = false;
  private readonly filling: Promise<void>;

  constructor(
    source: AsyncIterable<T[]>,
    private readonly limit: number,
  ) {
    this.iterator = source[Symbol.asyncIterator]();
    this.filling = this.fill();
  }

  private async fill(): Promise<void> {
    try {
      while (!this.stopped && this.heldItems < this.limit) {
        const next = await this.iterator.next();
        if (next.done) {
          this.done = true;
          return;
        }
        this.held.push(next.value);
        this.heldItems += next.value.length;
      }
    } catch (error) {
      // Kept for the consumer, at the place it happened: the batches before it are still handed on.
      this.failure = { error };
    }
  }

  /** Items read and not yet handed on (the bound holds it near `limit`, plus one batch). */
  get waiting(): number {
    return this.heldItems;
  }

  /** What was read ahead, then the rest of the source as the consumer asks for it. */
  async *batches(): AsyncIterable<T[]> {
    this.stopped = true;
    await this.filling;
    try {
      while (this.held.length > 0) {
        const batch = this.held.shift() as T[];
        this.heldItems -= batch.length;
        yield batch;
      }
      if (this.failure) throw this.failure.error;
      if (this.done) return;
      for (;;) {
        const next = await this.iterator.next();
        if (next.done) {
          this.done = true;
          return;
        }
        yield next.value;
      }
    } finally {
      if (!this.done) await this.close();
    }
  }

  /** Lets the source go (its open folders and handles) when what was read ahead is not wanted. */
  async close(): Promise<void> {
    this.stopped = true;
    await this.filling;
    this.held.length = 0;
    this.heldItems = 0;
    if (this.done || this.failure) return;
    this.done = true;
    await this.iterator.return?.();
  }
}
