// The one wrapper around a lease's board: every request the lease makes is counted here (the run's
// summary says how many), and a removal that fails is swallowed here, and told through the one
// event channel: the record is left to expire with its TTL, and the next winner removes it.
import type { LeaseBoard, LeaseBody, LeaseOptions, LeaseRecord } from './protocol.js';

export class CountedBoard implements LeaseBoard {
  requests = 0;

  constructor(
    private readonly board: LeaseBoard,
    private readonly onEvent?: LeaseOptions['onEvent'],
  ) {}

  create(body: LeaseBody): Promise<{ id: string; at: number }> {
    this.requests++;
    return this.board.create(body);
  }

  list(): Promise<LeaseRecord[]> {
    this.requests++;
    return this.board.list();
  }

  exists(id: string): Promise<boolean> {
    this.requests++;
    return this.board.exists(id);
  }

  remove(id: string): Promise<void> {
    this.requests++;
    return this.board.remove(id);
  }

  /** Removes a record; one that cannot be removed now is left to expire (said as `remove-failed`). */
  async removeQuietly(id: string): Promise<void> {
    try {
      await this.remove(id);
    } catch (err) {
      this.onEvent?.({ type: 'remove-failed', id, error: (err as Error).message });
    }
  }
}
