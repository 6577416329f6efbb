// The lease: one writer at a time per destination, held on the service itself, so that runs with
// different checkpoint stores (two machines, a fresh container, a laptop beside the cron job)
// exclude each other. The service has no conditional create, so the decision is the one of
// ZooKeeper's lock recipe, made with the order the service gives: every contender creates a claim,
// lists the claims, and holds the lease when no earlier live claim conflicts with its own. Time
// is the service's too: a record's age is measured against the service-assigned time of the
// contender's own claim, never against a machine's clock. The protocol and its assumptions are in
// docs/scale-out.md; test/runner/lease-interleavings.test.ts explores its schedules.
//
// This file knows no HTTP: the records live on a LeaseBoard (src/backends/project/lease-board.ts
// keeps them as projects of the service; the tests keep them in a model of it).
import { FerryError } from '../errors.js';
import type { Mark } from '../marks.js';
import { listsAtOnce, owedListing, settledAfter, type ListingBound } from '../api/settled.js';

/** The protocol this ferry speaks; a record of a higher one is never judged expired here. */
export const LEASE_PROTOCOL = 1;
export const DEFAULT_LEASE_TTL_MS = 30_000;
export const MIN_LEASE_TTL_MS = 2_000;
export const MAX_LEASE_TTL_MS = 3_600_000;

/** What a record says of itself (kept in the record; nothing secret). */
export interface LeaseBody {
  v: number;
  kind: 'claim' | 'beat';
  /** The run's token: every record of one holder carries it. */
  owner: string;
  /** The destination path under the scope ('' for all of it); two paths conflict when one holds the other. */
  path: string;
  ttlMs: number;
  host: string;
  pid: number;
  job: string;
}

export interface LeaseRecord {
  id: string;
  /** The service's time of its creation, ms since the epoch (its `dateAdded`). */
  at: number;
  /** Undefined when the record does not read as a lease record of any version (garbage). */
  body: LeaseBody | undefined;
  /** The protocol version a record declares, even when it is one this ferry does not read. */
  v?: number | undefined;
}

/** Where the records of one scope live: created, listed and removed, and read by id. */
export interface LeaseBoard {
  /** Creates a record; its id and the service's time of creation. */
  create(body: LeaseBody): Promise<{ id: string; at: number }>;
  /** Every record of the scope the service lists now, in any order (new ones may be listed late). */
  list(): Promise<LeaseRecord[]>;
  /** Removes a record; one already gone is no error. */
  remove(id: string): Promise<void>;
  /** Whether a record exists, read by its id (never late): tells a claim removed from one not listed yet. */
  exists(id: string): Promise<boolean>;
}

/**
 * The service's listing lag as the run bounds it (src/api/listing-lag.ts): how long after its
 * create a record is surely listed, and where a record seen missing for longer is reported. Every
 * wait for it is src/api/settled.ts's.
 */
export type LagBound = ListingBound;

/** Items list at once: the bound of a service that lists what it just made. */
const NO_LAG: LagBound = { boundMs: 0, missing: () => undefined };

/** The local time a holder measures its own validity by (elapsed ms, never compared across machines). */
export interface LeaseClock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Who holds a lease, as a refused run names it. */
export interface LeaseHolder {
  host: string;
  pid: number;
  job: string;
  /** The holder's run token. */
  run: string;
  path: string;
  /** The service's time of its claim, ISO. */
  since: string;
  /** The service's time of its latest record, ISO. */
  renewed: string;
  ttlMs: number;
  /** Why this holder could not be judged by this ferry, if so (a newer protocol, an unreadable record). */
  note?: string;
}

export interface LeaseOptions {
  board: LeaseBoard;
  /** What the lease is on, for messages (a project and folder, a playbook…). */
  description: string;
  path: string;
  ttlMs?: number;
  /** How long to wait for a held lease before giving up (0: not at all). */
  waitMs?: number;
  owner: string;
  host: string;
  pid: number;
  job: string;
  clock?: LeaseClock;
  /** How to break it, said to whoever is refused. */
  breakHint?: string;
  /**
   * Owners known to be dead without the service's word: the holder this run's checkpoint store
   * proved dead (its process is gone) when it took over the store's lock. Their records are
   * taken over at once, not a TTL later.
   */
  deadOwners?: readonly string[];
  random?: () => number;
  onEvent?: (event: string, detail?: Record<string, unknown>) => void;
  /** The service's listing lag, bounded (default: none; a record missing from a listing is then beyond the bound). */
  lag?: LagBound;
  /**
   * Whether the run has sent a write of its own (not the lease's) to the service: a release waits
   * the bound only then. Default: whether any write was let through the lease's gate.
   */
  wroteOwn?: () => boolean;
}

/** Another run holds the lease (after --wait-lock, if any). */
export class LeaseHeldError extends FerryError {
  constructor(readonly description: string, readonly holder: LeaseHolder, readonly waitedMs: number, readonly breakHint?: string) {
    super(
      `another run holds the lease on ${description} on the service: ${holder.job} run ${holder.run} on host ${holder.host} (pid ${holder.pid}), since ${holder.since}, last renewed ${holder.renewed}` +
        `${holder.note ? ` (${holder.note})` : ''}; ${waitedMs > 0 ? `waited ${Math.round(waitedMs / 1000)} s (--wait-lock); ` : 'not waiting (--wait-lock DURATION waits); '}` +
        `a holder that is gone stops holding it ${Math.round(holder.ttlMs / 1000)} s after its last renewal` +
        `${breakHint ? `; to break it now: ${breakHint}` : ''}`,
    );
  }
  override get mark(): Mark {
    return 'fatal';
  }
}

/** The holder no longer holds the lease: it writes nothing more. */
export class LeaseLostError extends FerryError {
  override get mark(): Mark {
    return 'fatal';
  }
}

/** The lease could not be decided at all (the service's answers do not allow it). */
export class LeaseError extends FerryError {
  override get mark(): Mark {
    return 'fatal';
  }
}

/** Whether two destination paths overlap: one is the other or holds it ('' holds every path). */
export function pathsConflict(a: string, b: string): boolean {
  return a === '' || b === '' || a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);
}

/** A claim as judged: whose, how long it lives, whether it can be judged at all. */
interface Claimant {
  owner: string;
  claim: LeaseRecord;
  /** Latest record of this owner created no later than the judge's own claim. */
  latest: number;
  /** A record of this owner created after the judge's own claim: it was renewing meanwhile. */
  renewedSince: boolean;
  ttlMs: number;
  path: string;
  /** A record this ferry cannot judge: never expires (newer protocol). */
  unjudgeable?: string;
  unreadable?: boolean;
}

/** Before or after in the service's order; equal times are a tie, which no one wins. */
function compare(a: LeaseRecord, b: LeaseRecord): number {
  return a.at - b.at;
}

export interface Verdict {
  held: boolean;
  /** Another claim at the very same service time conflicts: no one wins, both try again. */
  tie: boolean;
  blocker?: Claimant;
  /** Records of holders expired by the service's time (and orphans): removed by the winner. */
  expired: LeaseRecord[];
  /** Holders the winner takes over from (expired, not released). */
  tookOverFrom: LeaseHolder[];
}

/**
 * The decision, made from one listing taken after `mine` was created. `mine.at` is the service's
 * "now" for the judge: a record older than a claimant's TTL before it is expired.
 */
export function judge(records: readonly LeaseRecord[], mine: LeaseRecord, ownToken: string, ownPath: string, ownTtlMs: number, deadOwners: readonly string[] = []): Verdict {
  const byOwner = new Map<string, LeaseRecord[]>();
  for (const r of records) {
    const owner = r.body ? r.body.owner : `unreadable:${r.id}`;
    const list = byOwner.get(owner) ?? [];
    list.push(r);
    byOwner.set(owner, list);
  }
  const verdict: Verdict = { held: false, tie: false, expired: [], tookOverFrom: [] };
  let blocker: Claimant | undefined;
  for (const [owner, list] of byOwner) {
    if (owner === ownToken) continue;
    const claimant = claimantOf(owner, list, mine.at, ownTtlMs);
    if (!claimant) {
      // Beats whose claim is gone (released, broken): nobody's; removed once they are old.
      for (const r of list) if (mine.at - r.at > ownTtlMs) verdict.expired.push(r);
      continue;
    }
    const alive = !deadOwners.includes(owner) && (claimant.unjudgeable !== undefined || claimant.renewedSince || mine.at - claimant.latest <= claimant.ttlMs);
    if (!alive) {
      verdict.expired.push(...list);
      if (compare(claimant.claim, mine) < 0 && pathsConflict(claimant.path, ownPath)) verdict.tookOverFrom.push(holderOf(claimant));
      continue;
    }
    if (!pathsConflict(claimant.path, ownPath)) continue;
    const order = compare(claimant.claim, mine);
    if (order > 0) continue; // later: it yields to this claim
    if (order === 0) {
      verdict.tie = true;
      continue;
    }
    if (!blocker || compare(claimant.claim, blocker.claim) < 0) blocker = claimant;
  }
  if (blocker) verdict.blocker = blocker;
  verdict.held = !blocker && !verdict.tie;
  return verdict;
}

function claimantOf(owner: string, list: LeaseRecord[], judgeAt: number, ownTtlMs: number): Claimant | undefined {
  // The earliest claim of an owner ranks it (a claim left by an earlier try that could not be
  // removed ranks it sooner, which only ever blocks more, never less).
  const claim = list.filter((r) => !r.body || r.body.kind === 'claim').sort(compare)[0];
  if (!claim) return undefined;
  // A holder removes its older beat once the newer one exists, so a listing made some time after
  // the judge's claim may no longer show the beat that kept the holder alive at that instant; it
  // shows the newer one instead. A record after the judge's claim therefore counts as alive (if
  // the holder had in fact lapsed before it, its own gap check stops it, and it removes the
  // record); otherwise the latest record up to the claim decides.
  const latest = Math.max(...list.filter((r) => r.at <= judgeAt).map((r) => r.at), claim.at);
  const renewedSince = list.some((r) => r.at > judgeAt);
  if (!claim.body) {
    const newer = claim.v !== undefined && claim.v > LEASE_PROTOCOL;
    return {
      owner,
      claim,
      latest,
      renewedSince,
      ttlMs: ownTtlMs,
      path: '',
      unreadable: true,
      ...(newer ? { unjudgeable: `a lease of protocol ${claim.v}, written by a newer ferry: upgrade, or break it` } : {}),
    };
  }
  return { owner, claim, latest, renewedSince, ttlMs: claim.body.ttlMs, path: claim.body.path };
}

function holderOf(c: Claimant): LeaseHolder {
  const b = c.claim.body;
  return {
    host: b?.host ?? 'unknown',
    pid: b?.pid ?? 0,
    job: b?.job ?? 'unknown',
    run: b?.owner ?? c.claim.id,
    path: b?.path ?? '',
    since: new Date(c.claim.at).toISOString(),
    renewed: new Date(c.latest).toISOString(),
    ttlMs: c.ttlMs,
    ...(c.unjudgeable ? { note: c.unjudgeable } : c.unreadable ? { note: `an unreadable lease record (${c.claim.id}), taken for a claim that expires ${Math.round(c.ttlMs / 1000)} s after it was made` } : {}),
  };
}

export const systemClock: LeaseClock = {
  // Elapsed time by both clocks, whichever says more: the monotonic clock stands still while a
  // laptop sleeps, the wall clock may be stepped back; the larger of the two is never too small.
  now: (() => {
    const perf0 = performance.now();
    const wall0 = Date.now();
    let last = 0;
    return () => (last = Math.max(last, performance.now() - perf0, Date.now() - wall0));
  })(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener('abort', done, { once: true });
    }),
};

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
}

/** A record of this holder's, as created: when its create returned by the local clock, and whether a listing has shown it yet. */
interface OwnRecord {
  id: string;
  at: number;
  returnedAt: number;
  listed: boolean;
}

interface HeldLeaseInit {
  opts: Required<Pick<LeaseOptions, 'board' | 'description' | 'path' | 'owner' | 'host' | 'pid' | 'job' | 'clock'>> & { onEvent?: LeaseOptions['onEvent'] };
  ttlMs: number;
  claim: { id: string; at: number };
  /** When the request that created the claim was sent, by the local clock. */
  sentAt: number;
  counter: { requests: number };
  waitedMs: number;
  tookOverFrom: LeaseHolder[];
  lag: LagBound;
  wroteOwn: (() => boolean) | undefined;
}

/**
 * A held lease. Writes call `assertHeld()` first: it answers at once while the last renewal is
 * fresh, and otherwise renews before it lets a write go (or throws LeaseLostError).
 */
export class HeldLease {
  readonly ttlMs: number;
  private readonly opts: HeldLeaseInit['opts'];
  private readonly claim: { id: string; at: number };
  private readonly counter: { requests: number };
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
    this.counter = init.counter;
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
    const { board, clock } = this.opts;
    const sentAt = clock.now();
    try {
      this.counter.requests++;
      const created = await board.create(this.body('beat'));
      const beat: OwnRecord = { ...created, returnedAt: clock.now(), listed: false };
      // A gap longer than the TTL between two of this holder's records: in it, another run may
      // have judged this lease expired and taken it. Whatever happened, this run writes no more.
      if (beat.at - this.lastAt > this.ttlMs) {
        this.loseWith(`the lease on ${this.opts.description} was not renewed for ${Math.round((beat.at - this.lastAt) / 1000)} s of the service's time (its TTL is ${Math.round(this.ttlMs / 1000)} s; was this process stopped or cut off?): another run may hold it now, so this run writes nothing more`);
        await this.removeQuietly(beat.id);
        return;
      }
      this.beats.push(beat);
      this.counter.requests++;
      const listedAt = clock.now();
      const records = await board.list();
      if (!records.some((r) => r.id === this.claim.id)) {
        // Removed by a run that judged this one expired (it went unrenewed past its TTL: a
        // stopped process, a renewal that came back too late) or by `ferry lock break`. (Not late:
        // the claim was listed before the lease was held.)
        const successor = leaseEntries(records).find((e) => e.holder && e.holder.run !== this.opts.owner && pathsConflict(e.holder.path, this.opts.path))?.holder;
        this.loseWith(
          `the lease on ${this.opts.description} is no longer this run's: its claim was removed from the service${successor ? `, and ${successor.job} run ${successor.run} on host ${successor.host} (pid ${successor.pid}) holds it since ${successor.since}` : ''} ` +
            `(another run takes it over once this one goes unrenewed past its TTL of ${Math.round(this.ttlMs / 1000)} s, e.g. while stopped; \`ferry lock break\` removes it at once): this run writes nothing more`,
        );
        await this.removeQuietly(beat.id);
        return;
      }
      if (this.noteListed(records, listedAt)) return;
      this.lastAt = beat.at;
      this.validUntil = sentAt + this.validity();
      this.renewals++;
      this.failingSince = undefined;
      await this.removeOlderBeats();
      this.opts.onEvent?.('renewed', { at: beat.at });
    } catch (err) {
      this.failingSince ??= sentAt;
      this.opts.onEvent?.('renewal-failed', { error: (err as Error).message });
      if (clock.now() - this.failingSince > 2 * this.ttlMs) {
        this.loseWith(`the lease on ${this.opts.description} could not be renewed for ${Math.round((clock.now() - this.failingSince) / 1000)} s (${(err as Error).message}): this run writes nothing more`);
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
        this.opts.onEvent?.('lagged', { message: err.message });
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

  private loseWith(message: string): void {
    this.lost ??= new LeaseLostError(message);
    this.stopRenewals.abort();
    this.opts.onEvent?.('lost', { message });
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
      this.opts.onEvent?.('settling', { ms: this.lag.boundMs });
      await settledAfter(this.lag, this.opts.clock.now(), this.opts.clock);
      if (!this.lagged && this.beats.some((b) => !b.listed)) {
        const listedAt = this.opts.clock.now();
        this.counter.requests++;
        const records = await this.opts.board.list().catch(() => undefined);
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
      requests: this.counter.requests,
      ...(this.init.tookOverFrom.length ? { tookOverFrom: this.init.tookOverFrom } : {}),
      ...(this.lost ? { lost: this.lost.message } : {}),
    };
  }

  private body(kind: LeaseBody['kind']): LeaseBody {
    const { owner, path, host, pid, job } = this.opts;
    return { v: LEASE_PROTOCOL, kind, owner, path, ttlMs: this.ttlMs, host, pid, job };
  }

  private removeQuietly(id: string): Promise<void> {
    return removeQuietly(this.opts.board, this.counter, id);
  }
}

/** Removes a record, counted; one that cannot be removed is left to expire with its TTL (the next winner removes it). */
async function removeQuietly(board: LeaseBoard, counter: { requests: number }, id: string): Promise<void> {
  counter.requests++;
  await board.remove(id).catch(() => undefined);
}

/** Checks a TTL: a positive duration the protocol can renew within. */
export function checkLeaseTtl(ttlMs: number, said = `${ttlMs} ms`): number {
  if (!Number.isFinite(ttlMs) || ttlMs < MIN_LEASE_TTL_MS || ttlMs > MAX_LEASE_TTL_MS) {
    throw new LeaseError(`a lease TTL of ${said} cannot be used: it must be between ${MIN_LEASE_TTL_MS / 1000} s and ${MAX_LEASE_TTL_MS / 60_000} min (renewals come every quarter of it)`);
  }
  return ttlMs;
}

/** Claims removed before they were judged (an answer so late another run took them for expired): tried again this often. */
const MAX_CLAIMS_REMOVED = 4;

/**
 * Takes the lease: claims, waits out the listing lag, lists, and holds it when no earlier live
 * claim conflicts; otherwise removes its claim and, within `waitMs`, tries again; then throws
 * LeaseHeldError naming the holder.
 *
 * Under a listing lag L (docs/scale-out.md, *Late listings*): the listing that judges begins at
 * least L after the claim's create returned, so it shows every record made before the claim (and
 * the claim itself, or the lag is beyond the bound and the run stops). A refusal is confirmed by
 * one more listing L later, which shows a holder's release made before the first.
 */
export async function acquireLease(opts: LeaseOptions, signal?: AbortSignal): Promise<HeldLease> {
  const ttlMs = checkLeaseTtl(opts.ttlMs ?? DEFAULT_LEASE_TTL_MS);
  const clock = opts.clock ?? systemClock;
  const random = opts.random ?? Math.random;
  const lag = opts.lag ?? NO_LAG;
  const started = clock.now();
  const counter = { requests: 0 };
  const base = { board: opts.board, description: opts.description, path: opts.path, owner: opts.owner, host: opts.host, pid: opts.pid, job: opts.job, clock, ...(opts.onEvent ? { onEvent: opts.onEvent } : {}) };
  const body: LeaseBody = { v: LEASE_PROTOCOL, kind: 'claim', owner: opts.owner, path: opts.path, ttlMs, host: opts.host, pid: opts.pid, job: opts.job };
  let ties = 0;
  let removed = 0;
  for (;;) {
    if (signal?.aborted) throw new LeaseError(`stopped while waiting for the lease on ${opts.description}`);
    const sentAt = clock.now();
    counter.requests++;
    const mine = await opts.board.create(body);
    const returnedAt = clock.now();
    let verdict: Verdict;
    try {
      const decided = await claimAndJudge(opts, lag, counter, mine, returnedAt, ttlMs, clock, signal);
      if (decided === 'removed') {
        // Removed already: its answer came so late that another run judged it expired. Again, a few times.
        if (++removed > MAX_CLAIMS_REMOVED) throw new LeaseError(`the lease claims made on ${opts.description} were removed by other runs before they could be judged, ${removed} times: the service answers too slowly for a lease of ${Math.round(ttlMs / 1000)} s (raise --lock-ttl; --no-lock runs without one)`);
        continue;
      }
      verdict = decided;
    } catch (err) {
      await removeQuietly(opts.board, counter, mine.id);
      throw err;
    }
    if (verdict.held) {
      const held = new HeldLease({ opts: base, ttlMs, claim: mine, sentAt, counter, waitedMs: clock.now() - started, tookOverFrom: verdict.tookOverFrom, lag, wroteOwn: opts.wroteOwn });
      for (const r of verdict.expired) await removeQuietly(opts.board, counter, r.id);
      opts.onEvent?.('acquired', { at: mine.at });
      return held;
    }
    await removeQuietly(opts.board, counter, mine.id);
    const waited = clock.now() - started;
    if (verdict.tie && !verdict.blocker && ties < 8) {
      // The same instant on the service: neither won; a short random pause breaks the tie.
      ties++;
      await clock.sleep(20 + random() * 200, signal);
      continue;
    }
    const blocker = verdict.blocker;
    const waitMs = opts.waitMs ?? 0;
    if (waited >= waitMs || !blocker) {
      const holder: LeaseHolder = blocker ? holderOf(blocker) : { host: 'unknown', pid: 0, job: 'unknown', run: 'unknown', path: opts.path, since: new Date(mine.at).toISOString(), renewed: new Date(mine.at).toISOString(), ttlMs, note: 'claims made at the same instant kept tying' };
      throw new LeaseHeldError(opts.description, holder, waited, opts.breakHint);
    }
    const h = holderOf(blocker);
    opts.onEvent?.('waiting', { holder: `${h.job} run ${h.run} on host ${h.host}, pid ${h.pid}, since ${h.since}` });
    // Look again when the holder would expire if it stopped renewing, or sooner; never past the wait.
    const untilExpiry = blocker.unjudgeable ? ttlMs : Math.max(0, blocker.latest + blocker.ttlMs - mine.at) + 50;
    const pause = Math.min(Math.max(untilExpiry, 250), ttlMs / 4, waitMs - waited) * (0.8 + random() * 0.4);
    await clock.sleep(Math.max(pause, 50), signal);
  }
}

/**
 * One claim judged: waits until a listing begun now shows every record made before the claim (the
 * bound after its create returned), lists, and judges; a refusal is listed once more, the bound
 * later. 'removed': the claim was gone before it could be judged.
 */
async function claimAndJudge(
  opts: LeaseOptions,
  lag: LagBound,
  counter: { requests: number },
  mine: { id: string; at: number },
  returnedAt: number,
  ttlMs: number,
  clock: LeaseClock,
  signal: AbortSignal | undefined,
): Promise<Verdict | 'removed'> {
  await settledAfter(lag, returnedAt, clock, signal);
  const judgeListing = async (): Promise<Verdict | 'removed'> => {
    const listedAt = clock.now();
    counter.requests++;
    const records = await opts.board.list();
    const own = records.find((r) => r.id === mine.id);
    if (!own) {
      counter.requests++;
      if (!(await opts.board.exists(mine.id))) return 'removed';
      // There, and not listed a bound after it was made: the service lists later than the bound.
      // (Begun the bound after the create returned, or later: at least the bound, whatever a clock's rounding says.)
      throw lag.missing(`the lease claim on ${opts.description}`, Math.max(listedAt - returnedAt, lag.boundMs)) ?? new LeaseError(`the service did not list the lease record it had just created on ${opts.description}: a lease cannot be decided on a listing that misses records (--listing-lag sets how late the service may list; --no-lock runs without a lease)`);
    }
    return judge(records, { ...own, at: mine.at }, opts.owner, opts.path, ttlMs, opts.deadOwners);
  };
  const first = await judgeListing();
  if (first === 'removed' || first.held || !first.blocker || listsAtOnce(lag)) return first;
  // The holder may have released meanwhile, its removal not yet listed: a listing the bound later shows it.
  await settledAfter(lag, clock.now(), clock, signal);
  return judgeListing();
}

/** The records of a scope, by owner, as the operator sees them (`ferry lock status|break`). */
export interface LeaseEntry {
  /** Undefined for beats whose claim is gone (left by a release or a break cut short). */
  holder?: LeaseHolder;
  records: string[];
}

export function leaseEntries(records: readonly LeaseRecord[]): LeaseEntry[] {
  const byOwner = new Map<string, LeaseRecord[]>();
  for (const r of records) {
    const owner = r.body ? r.body.owner : `unreadable:${r.id}`;
    byOwner.set(owner, [...(byOwner.get(owner) ?? []), r]);
  }
  const entries: LeaseEntry[] = [];
  for (const [owner, list] of byOwner) {
    const claimant = claimantOf(owner, list, Infinity, DEFAULT_LEASE_TTL_MS);
    entries.push({ ...(claimant ? { holder: holderOf(claimant) } : {}), records: list.map((r) => r.id) });
  }
  return entries.sort((a, b) => (a.holder?.since ?? '').localeCompare(b.holder?.since ?? ''));
}
