// Backpressure for producers that do not have any: the producer awaits `open()` before making
// more, and the consumer iterates the items out. At most about `highWater` items wait in between.
export class BoundedBuffer<T> implements AsyncIterable<T> {
  // A queue with a moving head: Array#shift would copy the whole backlog on every item.
  private items: T[] = [];
  private head = 0;
  private ended = false;
  private failure: unknown;
  private wakeConsumer: (() => void) | undefined;
  private readonly waitingProducers: (() => void)[] = [];

  constructor(private readonly highWater: number) {}

  private get size(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
    this.wakeConsumer?.();
  }

  end(err?: unknown): void {
    this.ended = true;
    this.failure = err;
    this.wakeConsumer?.();
  }

  /** Resolves once there is room for more. */
  open(): Promise<void> {
    if (this.size < this.highWater) return Promise.resolve();
    return new Promise((resolve) => this.waitingProducers.push(resolve));
  }

  /**
   * Everything waiting, a batch at a time: one step of the consumer's loop per batch rather than
   * per item (on a walk of a large, unchanged tree the per-item awaits are a real share of the time).
   */
  async *batches(): AsyncIterable<T[]> {
    for (;;) {
      if (this.size > 0) {
        const batch = this.items.slice(this.head);
        this.items = [];
        this.head = 0;
        if (this.waitingProducers.length > 0) this.waitingProducers.splice(0).forEach((wake) => wake());
        yield batch;
        continue;
      }
      if (this.ended) {
        if (this.failure !== undefined) throw this.failure;
        return;
      }
      await new Promise<void>((resolve) => (this.wakeConsumer = resolve));
      this.wakeConsumer = undefined;
    }
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      while (this.size > 0) {
        const item = this.items[this.head] as T;
        this.items[this.head++] = undefined as T;
        if (this.head > 1024 && this.head * 2 > this.items.length) {
          this.items = this.items.slice(this.head);
          this.head = 0;
        }
        if (this.waitingProducers.length > 0 && this.size < this.highWater) this.waitingProducers.splice(0).forEach((wake) => wake());
        yield item;
      }
      if (this.ended) {
        if (this.failure !== undefined) throw this.failure;
        return;
      }
      await new Promise<void>((resolve) => (this.wakeConsumer = resolve));
      this.wakeConsumer = undefined;
    }
  }
}
