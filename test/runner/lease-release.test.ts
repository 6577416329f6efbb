// The wait before a release, scripted: a holder that wrote removes its claim only once a listing
// begun then would show its last write. The next holder decides from listings as soon as the
// claim is gone from them, so a release that did not wait would let it miss that write and write
// it again. One clock, one board, no processes: the answer does not depend on how they interleave.
import { describe, expect, it } from 'vitest';
import { acquireLease, type LeaseBoard, type LeaseBody, type Clock, type LeaseRecord } from '../../src/runner/lease.js';

/** Elapsed time that moves only when someone sleeps: every step of the protocol at a known instant. */
class ScriptedClock implements Clock {
  t = 0;
  now(): number {
    return this.t;
  }
  async sleep(ms: number): Promise<void> {
    this.t += Math.max(0, ms);
  }
}

/** The service, listing every record exactly `lagMs` after it was made (the bound's worst case), and what was removed when. */
class LaggingBoard implements LeaseBoard {
  private readonly records = new Map<string, LeaseRecord>();
  private seq = 0;
  readonly removedAt = new Map<string, number>();
  constructor(
    private readonly clock: ScriptedClock,
    private readonly lagMs: number,
  ) {}
  async create(body: LeaseBody): Promise<{ id: string; at: number }> {
    const record = { id: `r${++this.seq}`, at: this.clock.now(), body, v: body.v };
    this.records.set(record.id, record);
    return { id: record.id, at: record.at };
  }
  async list(): Promise<LeaseRecord[]> {
    return [...this.records.values()].filter((r) => r.at + this.lagMs <= this.clock.now());
  }
  async remove(id: string): Promise<void> {
    if (this.records.delete(id)) this.removedAt.set(id, this.clock.now());
  }
  async exists(id: string): Promise<boolean> {
    return this.records.has(id);
  }
}

const LAG = 2_000;

async function holder(clock: ScriptedClock, board: LaggingBoard, wrote: boolean) {
  return acquireLease({ board, description: 'project p', path: 'Share', owner: 'holder', host: 'h', pid: 1, job: 'mirror', ttlMs: 10_000, clock, lag: { boundMs: LAG, missing: () => undefined }, wroteOwn: () => wrote });
}

describe('a release under a listing lag', () => {
  it('removes the claim of a run that wrote no sooner than the bound after its last write', async () => {
    const clock = new ScriptedClock();
    const board = new LaggingBoard(clock, LAG);
    const lease = await holder(clock, board, true);
    const claim = (await board.list()).find((r) => r.body?.kind === 'claim')!;
    // The run works, and its last write (a document) returns at this instant.
    await clock.sleep(7_000);
    const lastWrite = clock.now();
    await lease.release();
    const removed = board.removedAt.get(claim.id);
    expect(removed).toBeDefined();
    expect(removed! - lastWrite).toBeGreaterThanOrEqual(LAG);
    // Every record of the holder is gone.
    expect(await board.list()).toEqual([]);
  });

  it('a contender that judges as soon as the claim is gone from the listings begins after the last write was listed', async () => {
    const clock = new ScriptedClock();
    const board = new LaggingBoard(clock, LAG);
    const lease = await holder(clock, board, true);
    await clock.sleep(3_000);
    const lastWrite = clock.now();
    await lease.release();
    // The contender claims now; its judging listing comes the bound after, and finds the lease free.
    const next = await acquireLease({ board, description: 'project p', path: 'Share', owner: 'next', host: 'n', pid: 2, job: 'mirror', ttlMs: 10_000, clock, lag: { boundMs: LAG, missing: () => undefined } });
    // Whatever it lists from now on began at least the bound after the holder's last write returned.
    expect(clock.now() - lastWrite).toBeGreaterThanOrEqual(2 * LAG);
    await next.release();
  });

  it('a run that wrote nothing releases at once: no wait is owed', async () => {
    const clock = new ScriptedClock();
    const board = new LaggingBoard(clock, LAG);
    const lease = await holder(clock, board, false);
    const claim = (await board.list()).find((r) => r.body?.kind === 'claim')!;
    const before = clock.now();
    await lease.release();
    expect(board.removedAt.get(claim.id)).toBe(before);
  });
});
