// The lease protocol (src/runner/lease.ts) raced against itself over a model of the service: its
// records, the order and time it gives them (a create is processed, then answered, each when the
// scheduler says), and every contender's own clock (its rate and offset its own). fast-check's
// scheduler picks the order of every request's processing, every answer and every wake-up, so a
// contender can be held back for any length of the service's time (a paused process, a slow
// network), crash for good (kill -9), tie with another on the same instant, or wait its turn.
// The property: never two holders that both write. Once a run has acquired a lease, no run that
// acquired a conflicting lease before it writes again.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { acquireLease, judge, LeaseHeldError, LeaseLostError, pathsConflict, type LeaseBoard, type LeaseBody, type Clock, type LeaseRecord } from '../../src/runner/lease.js';

/** The seed of the negative controls: each must find a schedule that breaks the protocol it weakens. */
const CONTROL_SEED = 1;
const TTL = 10_000;

interface Event {
  type: 'acquired' | 'write';
  who: number;
  path: string;
  /** The holder's place in the service's order: the time of the claim that won. */
  era: number;
}

interface Stats {
  /** Runs that stopped on a listing later than their bound (acquiring or renewing). */
  noticed?: number;
  schedules: number;
  tasks: number;
  writes: number;
  takeovers: number;
  lost: number;
  refused: number;
  crashed: number;
}

const never = new Promise<never>(() => undefined);

/**
 * The service as the protocol sees it: records, each given the service's time when it is processed,
 * and listed late: each record shows in lists only `delay` after it was made, and a removed one
 * stays listed `delay` after its removal (a delay per record, drawn from the seed, up to `lagMs`).
 * Reading by id is never late.
 */
class ModelService {
  now = 0;
  private seq = 0;
  readonly records = new Map<string, LeaseRecord>();
  private readonly removed = new Map<string, LeaseRecord>();
  /** When each record is listed from, and (removed) until. */
  private readonly shown = new Map<string, { from: number; until: number }>();

  constructor(
    private readonly lagMs = 0,
    private readonly seed = 0,
  ) {}

  private delay(id: string, salt: number): number {
    let h = (this.seed ^ salt) >>> 0;
    for (const ch of id) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
    h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d) >>> 0;
    return (((h ^ (h >>> 12)) >>> 0) / 4294967296) * this.lagMs;
  }

  /** A record's delay beyond `boundMs`, by how much (0 when listed within it). */
  lateBeyond(id: string, boundMs: number): number {
    return Math.max(0, this.delay(id, 1) - boundMs);
  }

  board(s: fc.Scheduler, who: number, crashed: () => boolean, stats: Stats): LeaseBoard {
    const call = async <R>(label: string, effect: () => R): Promise<R> => {
      if (crashed()) return never;
      stats.tasks += 2;
      // Sent: the service processes it when the scheduler says, then the answer arrives when it says.
      await s.schedule(Promise.resolve(), `${who} ${label} processed`);
      const result = effect();
      await s.schedule(Promise.resolve(), `${who} ${label} answered`);
      if (crashed()) return never;
      return result;
    };
    return {
      create: (body: LeaseBody) =>
        call('create', () => {
          const id = `r${++this.seq}`;
          this.records.set(id, { id, at: this.now, body: { ...body }, v: body.v });
          this.shown.set(id, { from: this.now + this.delay(id, 1), until: Infinity });
          return { id, at: this.now };
        }),
      list: () =>
        call('list', () =>
          [...this.shown.entries()]
            .filter(([, w]) => w.from <= this.now && this.now < w.until)
            .map(([id]) => ({ ...(this.records.get(id) ?? this.removed.get(id)) as LeaseRecord })),
        ),
      remove: (id: string) =>
        call('remove', () => {
          const r = this.records.get(id);
          if (!r) return;
          this.records.delete(id);
          this.removed.set(id, r);
          const w = this.shown.get(id);
          if (w) w.until = this.now + this.delay(id, 2);
        }),
      exists: (id: string) => call('get', () => this.records.has(id)),
    };
  }

  /** A contender's clock: its own rate and offset; sleeping lets the service's time run on. */
  clock(s: fc.Scheduler, rate: number, offset: number, crashed: () => boolean, stats: Stats): Clock {
    return {
      now: () => this.now * rate + offset,
      sleep: (ms, signal) =>
        new Promise<void>((resolve) => {
          if (signal?.aborted) return resolve();
          signal?.addEventListener('abort', () => resolve(), { once: true });
          const until = this.now + ms / rate;
          stats.tasks++;
          void s.schedule(Promise.resolve(), 'wake').then(() => {
            if (crashed()) return;
            this.now = Math.max(this.now, until);
            resolve();
          });
        }),
    };
  }
}

const contenderArb = fc.record({
  path: fc.constantFrom('', 'a', 'a/b', 'c'),
  rate: fc.double({ min: 0.8, max: 1.25, noNaN: true }),
  offset: fc.integer({ min: -600_000, max: 600_000 }),
  startAfter: fc.integer({ min: 0, max: 2 * TTL }),
  waitMs: fc.constantFrom(0, TTL / 2, 3 * TTL),
  pauses: fc.array(fc.integer({ min: 0, max: 3 * TTL }), { minLength: 1, maxLength: 4 }),
  crashAt: fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined }),
});

/** The bound the contenders are given under a lag: less than half the TTL, more than a renewal's period. */
const BOUND = 4_000;

/** How late the model lists, against the bound the contenders honour. */
interface Lag {
  /** The longest a record takes to be listed (service time). */
  lagMs: number;
  /** The bound each contender is told (its own elapsed time). */
  boundMs: number;
  seed: number;
}

class LagNoticed extends Error {}

/**
 * Within the bound in every contender's clock: a contender's clock runs at up to 1.25 times the
 * service's, so its bound of 4 s may be 3.2 s of the service's time.
 */
const lagArb = fc.oneof(
  fc.constant<Lag>({ lagMs: 0, boundMs: 0, seed: 0 }),
  fc.integer({ min: 0, max: 2 ** 31 }).map((seed): Lag => ({ lagMs: BOUND / 1.25, boundMs: BOUND, seed })),
);

const debug: unknown[] = [];
async function race(s: fc.Scheduler, contenders: fc.infer<typeof contenderArb>[], stats: Stats, lag: Lag = { lagMs: 0, boundMs: 0, seed: 0 }): Promise<Event[]> {
  const service = new ModelService(lag.lagMs, lag.seed);
  const log: Event[] = [];
  debug.length = 0;
  const runs = contenders.map(async (c, who) => {
    let crashed = false;
    const isCrashed = () => crashed;
    const clock = service.clock(s, c.rate, c.offset, isCrashed, stats);
    await clock.sleep(c.startAfter);
    let lease;
    try {
      lease = await acquireLease({
        board: service.board(s, who, isCrashed, stats),
        clock,
        ttlMs: TTL,
        waitMs: c.waitMs,
        description: 'the model',
        path: c.path,
        owner: `run-${who}`,
        host: 'model',
        pid: who,
        job: 'mirror',
        random: () => 0.5,
        onEvent: (e) => debug.push([who, e.type, service.now, e]),
        lag: { boundMs: lag.boundMs, missing: (what, lateBy) => (lateBy >= lag.boundMs ? new LagNoticed(`${what} not listed ${lateBy} ms after it was made`) : undefined) },
      });
    } catch (err) {
      if (err instanceof LeaseHeldError) {
        stats.refused++;
        return;
      }
      if (err instanceof LagNoticed) {
        stats.noticed = (stats.noticed ?? 0) + 1;
        return;
      }
      throw err;
    }
    const era = lease.claimAt;
    log.push({ type: 'acquired', who, path: c.path, era });
    if (lease.report().tookOverFrom) stats.takeovers++;
    lease.start();
    for (let k = 0; k < c.pauses.length; k++) {
      if (c.crashAt === k) {
        crashed = true; // kill -9: nothing more is sent, nothing answered, nothing released
        stats.crashed++;
        return;
      }
      await clock.sleep(c.pauses[k] as number);
      try {
        await lease.assertHeld();
      } catch (err) {
        if (err instanceof LagNoticed) stats.noticed = (stats.noticed ?? 0) + 1;
        else if (err instanceof LeaseLostError) stats.lost++;
        else throw err;
        await lease.release();
        return;
      }
      // The write starts in the same turn as the check that allowed it.
      log.push({ type: 'write', who, path: c.path, era });
      stats.writes++;
    }
    await lease.release();
  });
  await s.waitFor(Promise.all(runs));
  return log;
}

/**
 * Two holders that both write: a write by a holder after a conflicting holder that comes later in
 * the service's order (a later winning claim) acquired. Holders of one lease follow each other;
 * an earlier one never writes once a later one holds.
 */
function violation(log: readonly Event[]): string | undefined {
  for (let i = 0; i < log.length; i++) {
    const w = log[i] as Event;
    if (w.type !== 'write') continue;
    for (let j = 0; j < i; j++) {
      const a = log[j] as Event;
      if (a.type === 'acquired' && a.who !== w.who && a.era > w.era && pathsConflict(a.path, w.path)) {
        return `run ${w.who} (path "${w.path}", claim at ${w.era}) wrote at event ${i} after run ${a.who} (path "${a.path}", claim at ${a.era}) acquired at event ${j}`;
      }
    }
  }
  return undefined;
}

describe('the lease protocol under every interleaving the scheduler finds', () => {
  it('never lets two holders of conflicting leases both write: contenders, renewals, expiries, pauses, crashes and ties, with records listed at once or late within the bound', async () => {
    const stats: Stats = { schedules: 0, tasks: 0, writes: 0, takeovers: 0, lost: 0, refused: 0, crashed: 0, noticed: 0 };
    let lagging = 0;
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.array(contenderArb, { minLength: 2, maxLength: 4 }), lagArb, async (s, contenders, lag) => {
        stats.schedules++;
        if (lag.lagMs > 0) lagging++;
        const log = await race(s, contenders, stats, lag);
        const found = violation(log);
        if (found) throw new Error(`${found}\n${JSON.stringify(lag)}\n${JSON.stringify(log)}\n${JSON.stringify(debug)}`);
        // A lag within the bound is never taken for one beyond it.
        if (stats.noticed) throw new Error(`a run stopped on a listing lag within its bound\n${JSON.stringify(lag)}\n${JSON.stringify(debug)}`);
      }),
      { numRuns: Number(process.env.LEASE_SCHEDULES ?? 5_000) },
    );
    // Not vacuous: leases were held and written under, taken over from crashed or paused holders,
    // lost by holders held back past their TTL, and refused while held.
    expect(stats.writes).toBeGreaterThan(1_000);
    expect(stats.takeovers).toBeGreaterThan(10);
    expect(stats.lost).toBeGreaterThan(10);
    expect(stats.refused).toBeGreaterThan(10);
    expect(stats.crashed).toBeGreaterThan(10);
    expect(lagging).toBeGreaterThan(1_000);
    console.info(`lease interleavings: ${stats.schedules} schedules (${lagging} listing late within the bound), ${stats.tasks} scheduled steps, ${stats.writes} writes, ${stats.takeovers} take-overs, ${stats.lost} leases lost, ${stats.refused} refused, ${stats.crashed} holders killed`);
  }, Math.max(120_000, 3 * Number(process.env.LEASE_SCHEDULES ?? 0)));

  it('the property is not one the protocol passes by luck: a holder that never checks its lease again writes after its successor took over', async () => {
    // The same acquisition, with assertHeld (renewals and the gap check) left out: the holder
    // trusts its first listing for ever, and the scheduler finds a schedule where it writes after
    // another run acquired.
    const found = await fc.check(
      fc.asyncProperty(fc.scheduler(), fc.array(contenderArb, { minLength: 2, maxLength: 3 }), async (s, contenders) => {
        const service = new ModelService();
        const log: Event[] = [];
        const stats: Stats = { schedules: 0, tasks: 0, writes: 0, takeovers: 0, lost: 0, refused: 0, crashed: 0 };
        await s.waitFor(
          Promise.all(
            contenders.map(async (c, who) => {
              const clock = service.clock(s, c.rate, c.offset, () => false, stats);
              await clock.sleep(c.startAfter);
              try {
                const lease = await acquireLease({ board: service.board(s, who, () => false, stats), clock, ttlMs: TTL, description: 'm', path: c.path, owner: `run-${who}`, host: 'm', pid: who, job: 'mirror', random: () => 0.5 });
                log.push({ type: 'acquired', who, path: c.path, era: lease.claimAt });
                for (const pause of c.pauses) {
                  await clock.sleep(pause);
                  log.push({ type: 'write', who, path: c.path, era: lease.claimAt });
                }
                await lease.release();
              } catch (err) {
                if (!(err instanceof LeaseHeldError)) throw err;
              }
            }),
          ),
        );
        return violation(log) === undefined;
      }),
      // The first schedule that breaks it is enough: no shrinking (slow with a scheduler). A fixed
      // seed: a control that must find a breaking schedule, not one that usually does.
      { numRuns: 1_500, endOnFailure: true, seed: CONTROL_SEED },
    );
    expect(found.failed).toBe(true);
    // Failed by a write after a successor acquired, not by an error.
    expect(String(found.errorInstance)).toMatch(/returning false/);
  }, 120_000);
});

describe('the lease protocol when the service lists later than the bound', () => {
  it('a run whose own claim or renewal is listed later than its bound stops and says so, never loops', async () => {
    const stats: Stats = { schedules: 0, tasks: 0, writes: 0, takeovers: 0, lost: 0, refused: 0, crashed: 0, noticed: 0 };
    let violations = 0;
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.array(contenderArb, { minLength: 2, maxLength: 3 }), fc.integer({ min: 0, max: 2 ** 31 }), async (s, contenders, seed) => {
        stats.schedules++;
        // Up to three times the bound: most records are listed within it, some far beyond.
        const log = await race(s, contenders, stats, { lagMs: 3 * BOUND, boundMs: BOUND, seed });
        if (violation(log)) violations++;
      }),
      { numRuns: Number(process.env.LEASE_LAG_SCHEDULES ?? 1_000) },
    );
    // Every schedule ended (no run waits for ever on a claim that is not listed), and runs noticed.
    expect(stats.noticed).toBeGreaterThan(50);
    console.info(`lease beyond the bound: ${stats.schedules} schedules, ${stats.noticed} runs stopped on a late listing, ${stats.writes} writes, ${violations} schedules with two writing holders (records later than the bound, not noticed by the run that trusted the listing)`);
  }, 120_000);

  it('the lag is not one the protocol survives by luck: contenders that ignore it (no wait, their own records merged into what is listed) let two holders write', async () => {
    const found = await fc.check(
      fc.asyncProperty(fc.scheduler(), fc.array(contenderArb, { minLength: 2, maxLength: 3 }), fc.integer({ min: 0, max: 2 ** 31 }), async (s, contenders, seed) => {
        const stats: Stats = { schedules: 0, tasks: 0, writes: 0, takeovers: 0, lost: 0, refused: 0, crashed: 0 };
        const service = new ModelService(BOUND, seed);
        const log: Event[] = [];
        const ignoring = { boundMs: 0, missing: () => undefined };
        await s.waitFor(
          Promise.all(
            contenders.map(async (c, who) => {
              const clock = service.clock(s, c.rate, c.offset, () => false, stats);
              await clock.sleep(c.startAfter);
              // A protocol that knows its own writes (as kopia's journal of them) and trusts the listing for the rest.
              const board = service.board(s, who, () => false, stats);
              const own = new Map<string, LeaseRecord>();
              const merging: LeaseBoard = {
                ...board,
                create: async (body) => {
                  const r = await board.create(body);
                  own.set(r.id, { ...r, body, v: body.v });
                  return r;
                },
                list: async () => {
                  const listed = await board.list();
                  const ids = new Set(listed.map((r) => r.id));
                  return [...listed, ...[...own.values()].filter((r) => !ids.has(r.id))];
                },
                remove: async (id) => {
                  own.delete(id);
                  await board.remove(id);
                },
              };
              try {
                const lease = await acquireLease({ board: merging, clock, ttlMs: TTL, description: 'm', path: c.path, owner: `run-${who}`, host: 'm', pid: who, job: 'mirror', random: () => 0.5, lag: ignoring });
                log.push({ type: 'acquired', who, path: c.path, era: lease.claimAt });
                lease.start();
                for (const pause of c.pauses) {
                  await clock.sleep(pause);
                  await lease.assertHeld();
                  log.push({ type: 'write', who, path: c.path, era: lease.claimAt });
                }
                await lease.release();
              } catch (err) {
                if (!(err instanceof LeaseHeldError || err instanceof LeaseLostError || /did not list/.test(String(err)))) throw err;
              }
            }),
          ),
        );
        return violation(log) === undefined;
      }),
      // Fixed, as the control above: with a fresh seed each run, 2,000 schedules once found none (CI, 2026-11-28).
      { numRuns: 2_000, endOnFailure: true, seed: CONTROL_SEED },
    );
    expect(found.failed).toBe(true);
    expect(String(found.errorInstance)).toMatch(/returning false/);
  }, 120_000);
});

describe('judge: the decision from one listing', () => {
  const body = (owner: string, kind: LeaseBody['kind'], path = '', ttlMs = J): LeaseBody => ({ v: 1, kind, owner, path, ttlMs, host: 'h', pid: 1, job: 'mirror' });
  const J = 1_000;
  const rec = (id: string, at: number, b: LeaseBody | undefined, v?: number): LeaseRecord => ({ id, at, body: b, ...(v !== undefined ? { v } : {}) });

  it('the earliest live conflicting claim blocks; a later one yields; a same-instant one ties', () => {
    const mine = rec('m', 5_000, body('me', 'claim'));
    expect(judge([rec('a', 4_500, body('A', 'claim')), mine], mine, 'me', '', J)).toMatchObject({ held: false, blocker: { owner: 'A' } });
    expect(judge([mine, rec('b', 5_001, body('B', 'claim'))], mine, 'me', '', J).held).toBe(true);
    expect(judge([mine, rec('t', 5_000, body('T', 'claim'))], mine, 'me', '', J)).toMatchObject({ held: false, tie: true });
  });

  it('a claim renewed within its TTL before mine lives; one older than its TTL is taken over and removed', () => {
    const mine = rec('m', 10_000, body('me', 'claim'));
    const live = [rec('a', 1_000, body('A', 'claim')), rec('a2', 9_500, body('A', 'beat'))];
    expect(judge([...live, mine], mine, 'me', '', J).held).toBe(false);
    const dead = [rec('a', 1_000, body('A', 'claim')), rec('a2', 8_000, body('A', 'beat'))];
    const v = judge([...dead, mine], mine, 'me', '', J);
    expect(v.held).toBe(true);
    expect(v.expired.map((r) => r.id).sort()).toEqual(['a', 'a2']);
    expect(v.tookOverFrom[0]).toMatchObject({ run: 'A', since: new Date(1_000).toISOString(), renewed: new Date(8_000).toISOString() });
  });

  it('a renewal made after my claim counts as alive: the beat that kept the holder alive at my claim may be removed by the time I list', () => {
    const mine = rec('m', 10_000, body('me', 'claim'));
    expect(judge([rec('a', 8_000, body('A', 'claim')), rec('a2', 10_500, body('A', 'beat')), mine], mine, 'me', '', J).held).toBe(false);
  });

  it('paths that do not hold one another do not conflict', () => {
    const mine = rec('m', 5_000, body('me', 'claim', 'x'));
    expect(judge([rec('a', 4_900, body('A', 'claim', 'y')), mine], mine, 'me', 'x', J).held).toBe(true);
    expect(judge([rec('a', 4_900, body('A', 'claim', 'x/deeper')), mine], mine, 'me', 'x', J).held).toBe(false);
    expect(judge([rec('a', 4_900, body('A', 'claim', '')), mine], mine, 'me', 'x', J).held).toBe(false);
  });

  it('the holder TTL written in its claim decides its life, not the judge\'s', () => {
    const mine = rec('m', 10_000, body('me', 'claim', '', 2_000));
    expect(judge([rec('a', 5_000, body('A', 'claim', '', 60_000)), mine], mine, 'me', '', 2_000).held).toBe(false);
  });

  it('garbage under the lease name is a claim that blocks for one TTL from its making; a newer protocol blocks until broken', () => {
    const mine = rec('m', 5_000, body('me', 'claim'));
    expect(judge([rec('g', 4_500, undefined), mine], mine, 'me', '', J)).toMatchObject({ held: false, blocker: { unreadable: true } });
    expect(judge([rec('g', 3_000, undefined), mine], mine, 'me', '', J).held).toBe(true);
    const newer = judge([rec('n', 100, undefined, 2), mine], mine, 'me', '', J);
    expect(newer.held).toBe(false);
    expect(newer.blocker?.unjudgeable).toMatch(/protocol 2/);
  });

  it('an owner the checkpoint store proved dead (its process gone) is taken over at once, not a TTL later', () => {
    const mine = rec('m', 5_000, body('me', 'claim'));
    const records = [rec('a', 4_900, body('A', 'claim')), mine];
    expect(judge(records, mine, 'me', '', J).held).toBe(false);
    const v = judge(records, mine, 'me', '', J, ['A']);
    expect(v.held).toBe(true);
    expect(v.expired.map((r) => r.id)).toEqual(['a']);
  });

  it('beats whose claim is gone block nothing and are removed once old', () => {
    const mine = rec('m', 5_000, body('me', 'claim'));
    const v = judge([rec('b1', 4_900, body('A', 'beat')), rec('b0', 1_000, body('B', 'beat')), mine], mine, 'me', '', J);
    expect(v.held).toBe(true);
    expect(v.expired.map((r) => r.id)).toEqual(['b0']);
  });
});
