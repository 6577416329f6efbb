// A lease held: renewed every quarter of its TTL, checked before every write (the gate and the
// fence), given up when a renewal shows it lost, and released with the wait a run that wrote owes
// the next holder (src/api/listed.ts).
import { listsAtOnce, owedListing, listedAfter, type Listed } from '../../api/listed.js';
import { LEASE_PROTOCOL, LeaseLostError, type LagBound, type LeaseLoss, type LeaseBody, type LeaseHolder, type LeaseOptions, type LeaseRecord } from './protocol.js';
import { pathsConflict } from './judge.js';
import { leaseEntries } from './operator.js';
import type { CountedBoard } from './counted.js';

/** What a held lease did, for the run's summary. */
export interface LeaseReport {
  on: string;
  path: string;
  ttlMs: number;
  run: string;
  since: string;
  waitedMs: number;
  renewals: number;
  requests: number;
  tookOverFrom?: LeaseHolder[];
  lost?: string;
  /** How it was lost (the CLI's advice is chosen by it). */
  lostHow?: LeaseLoss['how'];
}

/** A record of this holder's, as created: when its create returned by the local clock, and whether a listing has shown it yet. */
interface OwnRecord {
  id: string;
  at: number;
  returnedAt: number;
  listed: boolean;
}

interface HeldLeaseInit {
  opts: Required<Pick<LeaseOptions, 'description' | 'path' | 'owner' | 'host' | 'pid' | 'job' | 'clock'>> & { onEvent?: LeaseOptions['onEvent'] };
  ttlMs: number;
  claim: { id: string; at: number };
  /** When the request that created the claim was sent, by the local clock. */
  sentAt: number;
  /** The board, counted: every request of the lease, and the removals it lets fail. */
  board: CountedBoard;
  waitedMs: number;
  tookOverFrom: LeaseHolder[];
  lag: LagBound;
  wroteOwn: (() => boolean) | undefined;
  /** Listings show every earlier holder's writes (the claim was judged the bound after it was made). */
  listed: Listed;
}

/**
 * A held lease. Writes call `assertHeld()` first: it answers at once while the last renewal is
 * fresh, and otherwise renews before it lets a write go (or throws LeaseLostError).
 */
export class HeldLease {
  readonly ttlMs: number;
  private readonly opts: HeldLeaseInit['opts'];
  private readonly claim: { id: string; at: number };
  private readonly board: CountedBoard;
  private readonly lag: LagBound;
  private lastAt: number;
  private validUntil: number;
  /** This holder's beats, oldest first; an older one is removed only once a newer one is listed. */
  private beats: OwnRecord[] = [];
  private lost: LeaseLostError | undefined;
  /** A listing later than the bound: no write may go (the run ends, exit 3). */
  private lagged: Error | undefined;
  /** A write was let through the gate (what the release asks when it is told nothing better: wroteOwn). */
  private gated = false;
  private renewing: Promise<void> | undefined;
  private readonly stopRenewals = new AbortController();
  private loop: Promise<void> | undefined;
  private renewals = 0;
  private failingSince: number | undefined;

  constructor(private readonly init: HeldLeaseInit) {
    this.opts = init.opts;
    this.ttlMs = init.ttlMs;
    this.claim = init.claim;
    this.board = init.board;
    this.lag = init.lag;
    this.lastAt = init.claim.at;
    this.validUntil = init.sentAt + this.validity();
  }

  /**
   * A holder writes for at most half the TTL after it sent its last successful renewal; another
   * run takes over no sooner than a whole TTL after that renewal was made. The half between is
   * the margin for clocks that run at other rates and for a write that left just in time.
   */
  private validity(): number {
    return this.ttlMs / 2;
  }

  /** Starts renewing every quarter of the TTL, until released or lost. */
  start(): void {
    this.loop ??= (async () => {
      while (!this.stopRenewals.signal.aborted && !this.lost && !this.lagged) {
        await this.opts.clock.sleep(this.ttlMs / 4, this.stopRenewals.signal);
        if (this.stopRenewals.signal.aborted) break;
        await this.renew().catch(() => undefined);
      }
    })();
  }

  /** Throws LeaseLostError when this run may no longer write; renews first if the last renewal is stale. */
  async assertHeld(): Promise<void> {
    this.gated = true;
    this.throwIfStopped();
    if (this.opts.clock.now() < this.validUntil) return;
    // Stale: a renewal decides (one at a time); failing renewals are tried until the TTL is over twice.
    for (;;) {
      await this.renew().catch(() => undefined);
      this.throwIfStopped();
      if (this.opts.clock.now() < this.validUntil) return;
      await this.opts.clock.sleep(Math.min(1_000, this.ttlMs / 8));
    }
  }

  private throwIfStopped(): void {
    if (this.lost) throw this.lost;
    if (this.lagged) throw this.lagged;
  }

  /** The proof that listings read under this lease show every earlier holder's writes. */
  get listed(): Listed {
    return this.init.listed;
  }

  /** The service's time of the claim that won: the order in which holders of one lease follow each other. */
  get claimAt(): number {
    return this.claim.at;
  }

  /** Synchronously: whether a write may leave right now (held, and the last renewal fresh). */
  fresh(): boolean {
    return !this.lost && !this.lagged && this.opts.clock.now() < this.validUntil;
  }

  /** True while no renewal has shown the lease lost. */
  get held(): boolean {
    return !this.lost;
  }

  /** One renewal: a new beat, the listing that shows the claim still stands, the old beats removed. */
  renew(): Promise<void> {
    this.renewing ??= this.renewOnce().finally(() => {
      this.renewing = undefined;
    });
    return this.renewing;
  }

  private async renewOnce(): Promise<void> {
    if (this.lost || this.lagged) return;
    const { board } = this;
    const { clock } = this.opts;
    const sentAt = clock.now();
    try {
      const created = await board.create(this.body('beat'));
      const beat: OwnRecord = { ...created, returnedAt: clock.now(), listed: false };
      // A gap longer than the TTL between two of this holder's records: in it, another run may
      // have judged this lease expired and taken it. Whatever happened, this run writes no more.
      if (beat.at - this.lastAt > this.ttlMs) {
        this.loseWith({ how: 'gap', gapMs: beat.at - this.lastAt, ttlMs: this.ttlMs });
        await this.removeQuietly(beat.id);
        return;
      }
      this.beats.push(beat);
      const listedAt = clock.now();
      const records = await board.list();
      if (!records.some((r) => r.id === this.claim.id)) {
        // Removed by a run that judged this one expired (it went unrenewed past its TTL: a
        // stopped process, a renewal that came back too late) or by an operator breaking it.
        // (Not late: the claim was listed before the lease was held.)
        const successor = leaseEntries(records).find((e) => e.holder && e.holder.run !== this.opts.owner && pathsConflict(e.holder.path, this.opts.path))?.holder;
        this.loseWith({ how: 'broken', ttlMs: this.ttlMs, ...(successor ? { successor } : {}) });
        await this.removeQuietly(beat.id);
        return;
      }
      if (this.noteListed(records, listedAt)) return;
      this.lastAt = beat.at;
      this.validUntil = sentAt + this.validity();
      this.renewals++;
      this.failingSince = undefined;
      await this.removeOlderBeats();
      this.opts.onEvent?.({ type: 'renewed', at: beat.at });
    } catch (err) {
      this.failingSince ??= sentAt;
      this.opts.onEvent?.({ type: 'renewal-failed', error: (err as Error).message });
      if (clock.now() - this.failingSince > 2 * this.ttlMs) {
        this.loseWith({ how: 'unrenewed', failingMs: clock.now() - this.failingSince, error: (err as Error).message });
      }
      throw err;
    }
  }

  /**
   * What a listing shows of this holder's beats. A beat missing from a listing begun at least the
   * bound after its create returned is later than the bound: the run stops writing (true).
   */
  private noteListed(records: readonly LeaseRecord[], listedAt: number): boolean {
    const ids = new Set(records.map((r) => r.id));
    for (const beat of this.beats) {
      if (beat.listed || (beat.listed = ids.has(beat.id))) continue;
      const lateBy = listedAt - beat.returnedAt;
      if (!owedListing(this.lag, lateBy)) continue;
      const err = this.lag.missing(`a renewal of the lease on ${this.opts.description}`, lateBy);
      if (err) {
        this.lagged = err;
        this.stopRenewals.abort();
        this.opts.onEvent?.({ type: 'lagged', error: err });
        return true;
      }
    }
    return false;
  }

  /**
   * Removes the beats older than the newest one a listing has shown. A contender judges this
   * holder by its newest *listed* record; removing a beat before its successor is listed would
   * leave a listing with neither, and the holder would look expired.
   */
  private async removeOlderBeats(): Promise<void> {
    let newestListed = -1;
    this.beats.forEach((b, i) => {
      if (b.listed) newestListed = i;
    });
    if (newestListed <= 0) return;
    const older = this.beats.splice(0, newestListed);
    for (const b of older) await this.removeQuietly(b.id);
  }

  private loseWith(loss: LeaseLoss): void {
    if (this.lost) return;
    this.lost = new LeaseLostError(this.opts.description, loss);
    this.stopRenewals.abort();
    this.opts.onEvent?.({ type: 'lost', error: this.lost });
  }

  /**
   * Ends the lease: no more renewals, its records removed (a failure here only lets it expire).
   * A run that wrote waits out the listing lag first: once its claim is gone from the listings,
   * the next holder decides from them, and they must show every write this run made by then.
   */
  async release(): Promise<void> {
    this.stopRenewals.abort();
    await this.renewing?.catch(() => undefined);
    await this.loop;
    const wrote = this.init.wroteOwn ? this.init.wroteOwn() : this.gated;
    if (wrote && !listsAtOnce(this.lag) && !this.lost) {
      // One more beat first: listed once the wait is over, or the service lists later than the
      // bound now, whatever it did when the run began (a lag that grew is said, not left to the next run).
      await this.renewOnce().catch(() => undefined);
      this.opts.onEvent?.({ type: 'settling', ms: this.lag.boundMs });
      await listedAfter(this.lag, this.opts.clock.now(), this.opts.clock);
      if (!this.lagged && this.beats.some((b) => !b.listed)) {
        const listedAt = this.opts.clock.now();
        const records = await this.board.list().catch(() => undefined);
        if (records) this.noteListed(records, listedAt);
      }
    }
    for (const b of this.beats) await this.removeQuietly(b.id);
    await this.removeQuietly(this.claim.id);
  }

  report(): LeaseReport {
    return {
      on: this.opts.description,
      path: this.opts.path,
      ttlMs: this.ttlMs,
      run: this.opts.owner,
      since: new Date(this.claim.at).toISOString(),
      waitedMs: Math.round(this.init.waitedMs),
      renewals: this.renewals,
      requests: this.board.requests,
      ...(this.init.tookOverFrom.length ? { tookOverFrom: this.init.tookOverFrom } : {}),
      ...(this.lost ? { lost: this.lost.message, lostHow: this.lost.reason.how } : {}),
    };
  }

  private body(kind: LeaseBody['kind']): LeaseBody {
    const { owner, path, host, pid, job } = this.opts;
    return { v: LEASE_PROTOCOL, kind, owner, path, ttlMs: this.ttlMs, host, pid, job };
  }

  private removeQuietly(id: string): Promise<void> {
    return this.board.removeQuietly(id);
  }
}
