// A lease held and a lease taken, step by step on a scripted clock and board (no processes, no
// timers): when a write may go, what a renewal does, how a lease is lost (a gap, a broken claim,
// renewals that keep failing, a listing later than the bound), and how a contender waits, ties,
// and is refused with the holder named.
import { describe, expect, it } from 'vitest';
import { acquireLease, LeaseError, LeaseHeldError, LeaseLostError, LEASE_PROTOCOL, type LeaseBoard, type LeaseBody, type Clock, type LeaseOptions, type LeaseRecord } from '../../src/runner/lease.js';
import { ListingLagError, ListingLagWatch } from '../../src/api/listing-lag.js';

/** Local elapsed time; a sleep moves it at once (nothing here sleeps in a loop without an end). */
class ScriptedClock implements Clock {
  t = 0;
  readonly sleeps: number[] = [];
  now(): number {
    return this.t;
  }
  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return;
    this.sleeps.push(ms);
    this.t += ms;
  }
}

/**
 * The service: its own time (the clock's, plus `skew`, which a test moves to stand for a process
 * stopped while the service went on), records listed `lagMs` after they were made, and calls that
 * can be made to fail.
 */
class Board implements LeaseBoard {
  readonly records = new Map<string, LeaseRecord>();
  private seq = 0;
  skew = 0;
  lagMs = 0;
  failCreates = false;
  failLists = false;
  /** Records the listings leave out, however old; with `hideNew`, every record made from now on. */
  readonly unlisted = new Set<string>();
  hideNew = false;
  calls = { create: 0, list: 0, remove: 0, exists: 0 };
  constructor(private readonly clock: ScriptedClock) {}
  get now(): number {
    return this.clock.now() + this.skew;
  }
  async create(body: LeaseBody): Promise<{ id: string; at: number }> {
    this.calls.create++;
    if (this.failCreates) throw new Error('503 from the service');
    const r = { id: `r${++this.seq}`, at: this.now, body, v: body.v };
    this.records.set(r.id, r);
    if (this.hideNew) this.unlisted.add(r.id);
    return { id: r.id, at: r.at };
  }
  async list(): Promise<LeaseRecord[]> {
    this.calls.list++;
    if (this.failLists) throw new Error('503 from the service');
    return [...this.records.values()].filter((r) => r.at + this.lagMs <= this.now && !this.unlisted.has(r.id));
  }
  async remove(id: string): Promise<void> {
    this.calls.remove++;
    this.records.delete(id);
  }
  async exists(id: string): Promise<boolean> {
    this.calls.exists++;
    return this.records.has(id);
  }
  /** A claim of another run, made now (or at `at`). */
  foreign(owner: string, at = this.now, path = 'Share', ttlMs = 10_000): LeaseRecord {
    const r = { id: `f${++this.seq}`, at, body: { v: LEASE_PROTOCOL, kind: 'claim' as const, owner, path, ttlMs, host: 'elsewhere', pid: 9, job: 'mirror' }, v: LEASE_PROTOCOL };
    this.records.set(r.id, r);
    return r;
  }
  ofOwner(owner: string): LeaseRecord[] {
    return [...this.records.values()].filter((r) => r.body?.owner === owner);
  }
}

const TTL = 10_000;

function setup(extra: Partial<LeaseOptions> = {}) {
  const clock = new ScriptedClock();
  const board = new Board(clock);
  const events: [string, Record<string, unknown> | undefined][] = [];
  const take = (more: Partial<LeaseOptions> = {}) =>
    acquireLease({ board, description: 'project p', path: 'Share', owner: 'me', host: 'here', pid: 1, job: 'mirror', ttlMs: TTL, clock, random: () => 0.5, onEvent: ({ type, ...d }) => events.push([type, d]), ...extra, ...more });
  return { clock, board, events, take };
}

describe('a lease held', () => {
  it('lets writes go at once for half the TTL after its claim was sent, then renews before the next', async () => {
    const { clock, board, take } = setup();
    const lease = await take();
    expect(lease.fresh()).toBe(true);
    // Held: the proof that listings show every earlier holder's writes, from the claim's return on.
    expect(lease.listed.since).toBeGreaterThanOrEqual(0);
    expect(lease.listed.since).toBeLessThanOrEqual(clock.now());
    const calls = { ...board.calls };
    clock.t = TTL / 2 - 1;
    await lease.assertHeld();
    expect(board.calls).toEqual(calls);
    clock.t = TTL / 2;
    expect(lease.fresh()).toBe(false);
    await lease.assertHeld();
    expect(board.calls.create).toBe(calls.create + 1);
    expect(lease.fresh()).toBe(true);
    expect(lease.report()).toMatchObject({ renewals: 1, run: 'me', ttlMs: TTL, path: 'Share', on: 'project p' });
    expect(lease.held).toBe(true);
  });

  it('keeps one beat: an older one is removed once a newer one is listed', async () => {
    const { clock, board, take, events } = setup();
    const lease = await take();
    await lease.renew();
    clock.t += 1;
    await lease.renew();
    const mine = board.ofOwner('me');
    expect(mine.map((r) => r.body?.kind).sort()).toEqual(['beat', 'claim']);
    expect(events.filter(([e]) => e === 'renewed')).toHaveLength(2);
    expect(lease.report().requests).toBeGreaterThanOrEqual(6);
  });

  it('under a lag, an older beat stays until a listing shows its successor', async () => {
    const { clock, board, take } = setup({ lag: new ListingLagWatch(1_000) });
    board.lagMs = 1_000;
    const lease = await take();
    clock.t += 2_000;
    await lease.renew(); // b1 created, not listed yet
    await lease.renew(); // b2 created; b1 still not listed: both kept
    expect(board.ofOwner('me').filter((r) => r.body?.kind === 'beat')).toHaveLength(2);
    clock.t += 1_000;
    await lease.renew(); // b1, b2 listed now; b3 not: the two older than the newest listed go
    expect(board.ofOwner('me').filter((r) => r.body?.kind === 'beat').map((r) => r.id)).toHaveLength(2);
  });

  it('is lost after a gap longer than its TTL between two of its records: no write goes, the new beat is removed', async () => {
    const { board, take, events } = setup();
    const lease = await take();
    board.skew = TTL + 1; // the service went on while this process was stopped
    await lease.renew();
    expect(lease.held).toBe(false);
    expect(lease.fresh()).toBe(false);
    await expect(lease.assertHeld()).rejects.toThrow(LeaseLostError);
    await expect(lease.assertHeld()).rejects.toThrow(/was not renewed for 10 s of the service's time \(its TTL is 10 s/);
    expect(board.ofOwner('me').filter((r) => r.body?.kind === 'beat')).toEqual([]);
    expect(lease.report().lost).toMatch(/writes nothing more/);
    expect(events.some(([e]) => e === 'lost')).toBe(true);
    // Exactly the TTL is no gap.
    const again = setup();
    const held = await again.take();
    again.board.skew = TTL;
    await held.renew();
    expect(held.held).toBe(true);
  });

  it('works with no one listening to its events (a library caller): renews, fails to renew, fails to remove, is lost, is released', async () => {
    const { clock, board } = setup();
    const lease = await acquireLease({ board, description: 'project p', path: 'Share', owner: 'quiet', host: 'here', pid: 1, job: 'mirror', ttlMs: TTL, clock, random: () => 0.5 });
    await lease.renew();
    const create = board.create.bind(board);
    board.create = async () => {
      throw new Error('503 from the service');
    };
    await expect(lease.renew()).rejects.toThrow('503');
    board.create = create;
    board.remove = async () => {
      throw new Error('503 from the service');
    };
    board.records.delete(board.ofOwner('quiet').find((r) => r.body?.kind === 'claim')!.id);
    await lease.renew();
    expect(lease.held).toBe(false);
    await lease.release();
    expect(lease.report().lost).toMatch(/no longer this run's/);
  });

  it('is lost when its claim is gone from the service, naming the run that holds it now', async () => {
    const { board, take } = setup();
    const lease = await take();
    const claim = board.ofOwner('me')[0]!;
    board.records.delete(claim.id);
    board.foreign('successor');
    await lease.renew();
    expect(lease.held).toBe(false);
    await expect(lease.assertHeld()).rejects.toThrow(/its claim was removed from the service, and mirror run successor on host elsewhere \(pid 9\) holds it since/);
  });

  it('renewals that keep failing: tried again until they have failed for twice the TTL, then lost', async () => {
    const { clock, board, take, events } = setup();
    const lease = await take();
    board.failCreates = true;
    clock.t = TTL / 2;
    await expect(lease.assertHeld()).rejects.toThrow(/could not be renewed for 2\d s \(503 from the service\)/);
    expect(events.filter(([e]) => e === 'renewal-failed').length).toBeGreaterThan(2);
    // Waited between tries an eighth of the TTL at most (a second at most).
    expect(Math.max(...clock.sleeps)).toBeLessThanOrEqual(Math.min(1_000, TTL / 8));
  });

  it('a renewal that fails once, then succeeds, is not lost', async () => {
    const { clock, board, take } = setup();
    const lease = await take();
    board.failCreates = true;
    await expect(lease.renew()).rejects.toThrow('503');
    board.failCreates = false;
    clock.t = TTL / 2;
    await lease.assertHeld();
    expect(lease.held).toBe(true);
  });

  it('a beat not listed the bound after it was made is a listing later than the bound: no write goes', async () => {
    const watch = new ListingLagWatch(500);
    const { clock, board, take, events } = setup({ lag: watch });
    const lease = await take();
    // The service leaves its new beats out of its listings (it lists later than it was said to).
    board.hideNew = true;
    await lease.renew();
    expect(lease.held).toBe(true);
    expect(events.some(([e]) => e === 'lagged')).toBe(false);
    clock.t += 499;
    await lease.renew();
    expect(events.some(([e]) => e === 'lagged')).toBe(false);
    clock.t += 1;
    await lease.renew();
    expect(events.some(([e]) => e === 'lagged')).toBe(true);
    await expect(lease.assertHeld()).rejects.toBeInstanceOf(ListingLagError);
    expect(lease.fresh()).toBe(false);
    expect(watch.exceeded).toBeInstanceOf(ListingLagError);
  });

  it('released: its claim and beats are removed; a run that wrote nothing owes no wait', async () => {
    const { clock, board, take } = setup({ lag: new ListingLagWatch(1_000) });
    const lease = await take();
    await lease.renew();
    const before = clock.now();
    await lease.release();
    expect(clock.now()).toBe(before);
    expect(board.ofOwner('me')).toEqual([]);
  });

  it('released after a write let through its gate: waits the bound first (no wroteOwn given)', async () => {
    const { clock, board, take, events } = setup({ lag: new ListingLagWatch(1_000) });
    board.lagMs = 1_000;
    const lease = await take();
    await lease.assertHeld();
    const before = clock.now();
    await lease.release();
    expect(clock.now() - before).toBeGreaterThanOrEqual(1_000);
    expect(events).toContainEqual(['settling', { ms: 1_000 }]);
    expect(board.ofOwner('me')).toEqual([]);
  });
});

/** A clock whose sleeps end only when the test says: for the renewal loop, which sleeps between renewals. */
class SteppedClock implements Clock {
  t = 0;
  private waiting: { until: number; wake: () => void }[] = [];
  now(): number {
    return this.t;
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.resolve();
    return new Promise((wake) => {
      const entry = { until: this.t + ms, wake };
      this.waiting.push(entry);
      signal?.addEventListener('abort', () => wake(), { once: true });
    });
  }
  /** Moves time on and wakes every sleep due by then; lets what they start run. */
  async advance(ms: number): Promise<void> {
    this.t += ms;
    const due = this.waiting.filter((w) => w.until <= this.t);
    this.waiting = this.waiting.filter((w) => w.until > this.t);
    for (const w of due) w.wake();
    for (let i = 0; i < 20; i++) await Promise.resolve();
  }
}

describe('the renewal loop', () => {
  it('renews every quarter of the TTL while held, and stops once released', async () => {
    const clock = new SteppedClock();
    const board = new Board(clock as unknown as ScriptedClock);
    const events: string[] = [];
    const lease = await acquireLease({ board, description: 'p', path: 'Share', owner: 'me', host: 'h', pid: 1, job: 'mirror', ttlMs: TTL, clock, onEvent: (e) => events.push(e.type) });
    lease.start();
    lease.start(); // once is enough: a second start starts nothing
    await clock.advance(TTL / 4 - 1);
    expect(events.filter((e) => e === 'renewed')).toHaveLength(0);
    await clock.advance(1);
    expect(events.filter((e) => e === 'renewed')).toHaveLength(1);
    await clock.advance(TTL / 4);
    expect(events.filter((e) => e === 'renewed')).toHaveLength(2);
    const creates = board.calls.create;
    await lease.release();
    await clock.advance(TTL);
    expect(board.calls.create).toBe(creates);
    expect(board.ofOwner('me')).toEqual([]);
  });

  it('stops renewing once the lease is lost', async () => {
    const clock = new SteppedClock();
    const board = new Board(clock as unknown as ScriptedClock);
    const lease = await acquireLease({ board, description: 'p', path: 'Share', owner: 'me', host: 'h', pid: 1, job: 'mirror', ttlMs: TTL, clock });
    lease.start();
    board.records.delete(board.ofOwner('me')[0]!.id);
    await clock.advance(TTL / 4);
    expect(lease.held).toBe(false);
    const creates = board.calls.create;
    await clock.advance(TTL);
    expect(board.calls.create).toBe(creates);
    // A renewal asked of a lost lease sends nothing.
    await lease.renew();
    expect(board.calls.create).toBe(creates);
  });
});

describe('what a holder tells', () => {
  it('each event with what it is about', async () => {
    const { board, take, events } = setup();
    const lease = await take();
    await lease.renew();
    expect(events).toContainEqual(['renewed', { at: expect.any(Number) }]);
    board.failCreates = true;
    await lease.renew().catch(() => undefined);
    expect(events).toContainEqual(['renewal-failed', { error: '503 from the service' }]);
    board.failCreates = false;
    board.records.delete(board.ofOwner('me').find((r) => r.body?.kind === 'claim')!.id);
    await lease.renew();
    expect(events).toContainEqual(['lost', { error: expect.objectContaining({ message: expect.stringMatching(/its claim was removed from the service \(another run takes it over once this one goes unrenewed past its TTL of 10 s/), reason: expect.objectContaining({ code: 'lost', how: 'broken' }) }) }]);
  });

  it('a successor is named only when its path conflicts and it is another run', async () => {
    const { board, take } = setup();
    const lease = await take();
    board.records.delete(board.ofOwner('me')[0]!.id);
    board.foreign('elsewhere-run', board.now, 'Other');
    await lease.renew();
    await expect(lease.assertHeld()).rejects.toThrow(/its claim was removed from the service \(another/);
  });

  it('retries a stale gate no faster than an eighth of a short TTL', async () => {
    const { clock, board, take } = setup({ ttlMs: 4_000 });
    const lease = await take();
    board.failCreates = true;
    clock.t = 2_000;
    await expect(lease.assertHeld()).rejects.toThrow(LeaseLostError);
    expect(new Set(clock.sleeps.slice(1))).toEqual(new Set([500]));
  });

  it('at its release, a beat still unlisted the bound later is a listing later than the bound, told', async () => {
    const watch = new ListingLagWatch(1_000);
    const { board, take } = setup({ lag: watch, wroteOwn: () => true });
    const lease = await take();
    board.hideNew = true;
    await lease.release();
    expect(watch.exceeded).toBeInstanceOf(ListingLagError);
    expect(board.ofOwner('me')).toEqual([]);
  });

  it('at its release, a listed beat beside an unlisted one: the unlisted one is still told', async () => {
    const watch = new ListingLagWatch(1_000);
    const { clock, board, take } = setup({ lag: watch, wroteOwn: () => true });
    const lease = await take();
    await lease.renew(); // listed
    clock.t += 10;
    board.hideNew = true;
    await lease.release();
    expect(watch.exceeded).toBeInstanceOf(ListingLagError);
  });

  it('a release whose last listing fails still removes its records', async () => {
    const again = setup({ lag: new ListingLagWatch(1_000), wroteOwn: () => true });
    const held = await again.take();
    again.board.failLists = true;
    await held.release();
    expect(again.board.ofOwner('me')).toEqual([]);
  });

  it('at its release, beats listed in time are no lag', async () => {
    const watch = new ListingLagWatch(1_000);
    const { board, take } = setup({ lag: watch, wroteOwn: () => true });
    board.lagMs = 900;
    const lease = await take();
    const lists = board.calls.list;
    await lease.release();
    expect(watch.exceeded).toBeUndefined();
    // One listing for the release's beat, one for the look after the wait.
    expect(board.calls.list - lists).toBe(2);
  });
});

describe('the counted board', () => {
  it('counts every request the lease makes; a removal that fails is left to expire, and said', async () => {
    const { board, take, events } = setup();
    const lease = await take();
    // claim, list (no lag: judged at once)
    expect(lease.report().requests).toBe(2);
    await lease.renew(); // beat, list
    expect(lease.report().requests).toBe(4);
    const remove = board.remove.bind(board);
    board.remove = async () => {
      throw new Error('503 from the service');
    };
    await lease.release(); // two removals, both failing
    expect(lease.report().requests).toBe(6);
    expect(events.filter(([e]) => e === 'remove-failed').map(([, d]) => d)).toEqual([
      { id: expect.any(String), error: '503 from the service' },
      { id: expect.any(String), error: '503 from the service' },
    ]);
    board.remove = remove;
    expect(board.ofOwner('me')).toHaveLength(2);
  });
});

describe('taking a lease', () => {
  it('waits the bound after its claim before it judges, then holds; the claim is listed by then', async () => {
    const { clock, board, take, events } = setup({ lag: new ListingLagWatch(800) });
    board.lagMs = 800;
    const lease = await take();
    expect(clock.sleeps[0]).toBe(800);
    expect(events.map(([e]) => e)).toContain('acquired');
    expect(lease.claimAt).toBe(0);
    expect(lease.report()).toMatchObject({ waitedMs: 800, since: new Date(0).toISOString() });
  });

  it('a claim not listed the bound after is a listing later than the bound; the claim is removed', async () => {
    const watch = new ListingLagWatch(800);
    const { board, take } = setup({ lag: watch });
    board.lagMs = 5_000;
    await expect(take()).rejects.toBeInstanceOf(ListingLagError);
    expect(board.ofOwner('me')).toEqual([]);
  });

  it('without a lag bound, a claim the listing misses cannot be decided', async () => {
    const { board, take } = setup();
    board.lagMs = 5;
    await expect(take()).rejects.toThrow(LeaseError);
    await expect(take()).rejects.toThrow(/did not list the lease record it had just created/);
  });

  it('held by another: refused at once with the holder named, its claim removed', async () => {
    const { board, take } = setup();
    board.foreign('holder', -100);
    const refused = await take().catch((e: unknown) => e as LeaseHeldError);
    expect(refused).toBeInstanceOf(LeaseHeldError);
    expect(refused.holder).toMatchObject({ run: 'holder', host: 'elsewhere', pid: 9, job: 'mirror', path: 'Share' });
    expect(refused.waitedMs).toBe(0);
    expect(refused.message).toMatch(/another run holds the lease on project p on the service: mirror run holder on host elsewhere \(pid 9\)/);
    expect(board.ofOwner('me')).toEqual([]);
  });

  it('with a wait: looks again as the holder would expire, and takes it over when it has', async () => {
    const { clock, board, take, events } = setup();
    board.foreign('stale', -100);
    const lease = await take({ waitMs: 60_000 });
    expect(events).toContainEqual(['waiting', { holder: expect.objectContaining({ job: 'mirror', run: 'stale', host: 'elsewhere', pid: 9, since: new Date(-100).toISOString() }) }]);
    // The first look again: when the holder would expire (its TTL after its latest record, +50 ms), random 0.5: the pause itself.
    expect(clock.sleeps[0]).toBe(Math.min(Math.max(-100 + TTL - 0 + 50, 250), TTL / 4, 60_000));
    // Waited from its first claim (at 0 on its clock) to the claim that won.
    expect(lease.report().waitedMs).toBe(clock.now());
    expect(clock.now()).toBeGreaterThanOrEqual(TTL - 100);
    expect(clock.now()).toBeLessThan(60_000);
    expect(lease.report().tookOverFrom?.map((h) => h.run)).toEqual(['stale']);
    expect(board.ofOwner('stale')).toEqual([]);
  });

  it('counts its wait from its own start, whatever its clock read then; tells nothing when no one listens', async () => {
    const clock = new ScriptedClock();
    clock.t = 100_000;
    const board = new Board(clock);
    board.foreign('stale', board.now - 100);
    const lease = await acquireLease({ board, description: 'p', path: 'Share', owner: 'me', host: 'h', pid: 1, job: 'mirror', ttlMs: TTL, clock, waitMs: 60_000, random: () => 0.5 });
    expect(lease.report().waitedMs).toBe(clock.now() - 100_000);
    expect(lease.report().tookOverFrom?.map((h) => h.run)).toEqual(['stale']);
  });

  it('a listing that shows other records but not its own claim is a listing later than the bound', async () => {
    const watch = new ListingLagWatch(500);
    const { board, take } = setup({ lag: watch });
    board.foreign('other', -50_000, 'Elsewhere');
    board.hideNew = true;
    await expect(take()).rejects.toBeInstanceOf(ListingLagError);
  });

  it('with a wait that runs out first: refused, saying how long it waited', async () => {
    const { clock, board, take } = setup();
    const holderClaim = board.foreign('holder', 0);
    // The holder renews: a fresh beat each time anyone looks.
    const list = board.list.bind(board);
    board.list = async () => {
      board.foreign('holder', board.now);
      return list();
    };
    const refused = await take({ waitMs: 3_000 }).catch((e: unknown) => e as LeaseHeldError);
    expect(refused).toBeInstanceOf(LeaseHeldError);
    expect(refused.waitedMs).toBeGreaterThanOrEqual(3_000);
    expect(clock.now()).toBeGreaterThanOrEqual(3_000);
    expect(holderClaim.id).toBeDefined();
  });

  it('a refusal under a lag is confirmed by a listing the bound later, which shows a release made meanwhile', async () => {
    const { clock, board, take } = setup({ lag: new ListingLagWatch(500) });
    board.lagMs = 500;
    const other = board.foreign('leaving', -1_000);
    // The holder releases while the contender waits for its confirming listing.
    let lists = 0;
    const list = board.list.bind(board);
    board.list = async () => {
      if (++lists === 1) {
        const seen = await list();
        board.records.delete(other.id);
        return seen;
      }
      return list();
    };
    const lease = await take();
    expect(lease.held).toBe(true);
    expect(clock.sleeps.filter((ms) => ms === 500).length).toBeGreaterThanOrEqual(2);
  });

  it('claims at the very same instant tie: both step back for a short random pause and try again', async () => {
    const { clock, board, take } = setup();
    let ties = 0;
    let twin: LeaseRecord | undefined;
    const create = board.create.bind(board);
    board.create = async (body) => {
      // The twin steps back too: its claim of the last tie is gone.
      if (twin) board.records.delete(twin.id);
      const made = await create(body);
      if (ties++ < 2) twin = board.foreign('twin', made.at);
      else twin = undefined;
      return made;
    };
    const lease = await take();
    expect(lease.held).toBe(true);
    // 20 + 0.5 * 200 ms, twice.
    expect(clock.sleeps.filter((ms) => ms === 120)).toHaveLength(2);
  });

  it('claims that keep tying (eight times) end in a refusal that says so', async () => {
    const { board, take } = setup();
    let twin: LeaseRecord | undefined;
    const create = board.create.bind(board);
    board.create = async (body) => {
      if (twin) board.records.delete(twin.id);
      const made = await create(body);
      twin = board.foreign('twin', made.at);
      return made;
    };
    const refused = await take({ waitMs: 60_000 }).catch((e: unknown) => e as LeaseHeldError);
    expect(refused).toBeInstanceOf(LeaseHeldError);
    expect(refused.holder).toMatchObject({ host: 'unknown', pid: 0, job: 'unknown', run: 'unknown', path: 'Share', ttlMs: TTL, note: 'claims made at the same instant kept tying' });
    // The first claim and eight more after a tie each.
    expect(board.calls.create).toBe(9);
  });

  it('a claim removed by another run before it was judged is made again; too often, it gives up', async () => {
    const { board, take } = setup();
    let creates = 0;
    const create = board.create.bind(board);
    board.create = async (body) => {
      const made = await create(body);
      if (++creates <= 2) board.records.delete(made.id);
      return made;
    };
    expect((await take()).held).toBe(true);
    const again = setup();
    const c2 = again.board.create.bind(again.board);
    again.board.create = async (body) => {
      const made = await c2(body);
      again.board.records.delete(made.id);
      return made;
    };
    await expect(again.take()).rejects.toThrow(/were removed by other runs before they could be judged, 5 times/);
  });

  it('refuses a TTL the protocol cannot renew within', async () => {
    const { take } = setup();
    await expect(take({ ttlMs: 1_000 })).rejects.toThrow(/a lease TTL of 1000 ms cannot be used: it must be between 2 s and 60 min/);
    await expect(take({ ttlMs: 4_000_000 })).rejects.toThrow(LeaseError);
  });

  it('stopped while it waits: says so', async () => {
    const { board, take } = setup();
    board.foreign('holder', 0);
    const stop = new AbortController();
    stop.abort();
    await expect(acquireLease({ board, description: 'project p', path: 'Share', owner: 'me', host: 'h', pid: 1, job: 'mirror', ttlMs: TTL, clock: new ScriptedClock(), waitMs: 60_000 }, stop.signal)).rejects.toThrow(/stopped while waiting for the lease on project p/);
    void take;
  });
});
