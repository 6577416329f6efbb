// Taking the lease, as named steps: claim, wait until a listing shows every record made before
// the claim, judge, confirm a refusal a bound later, then hold, or pause and try again within the
// wait, or say who holds it.
import { awaitListed, listsAtOnce, listedAfter } from '../../api/listed.js';
import { checkLeaseTtl, DEFAULT_LEASE_TTL_MS, LEASE_PROTOCOL, LeaseError, LeaseHeldError, NO_LAG, systemClock, type LagBound, type LeaseBody, type Clock, type LeaseHolder, type LeaseOptions } from './protocol.js';
import { holderOf, judge, type Verdict } from './judge.js';
import { HeldLease } from './held.js';
import { CountedBoard } from './counted.js';

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
  const ttlMs = checkLeaseTtl(opts.ttlMs ?? DEFAULT_LEASE_TTL_MS, opts.description);
  const clock = opts.clock ?? systemClock;
  const random = opts.random ?? Math.random;
  const lag = opts.lag ?? NO_LAG;
  const started = clock.now();
  const board = new CountedBoard(opts.board, opts.onEvent);
  const base = { description: opts.description, path: opts.path, owner: opts.owner, host: opts.host, pid: opts.pid, job: opts.job, clock, ...(opts.onEvent ? { onEvent: opts.onEvent } : {}) };
  const body: LeaseBody = { v: LEASE_PROTOCOL, kind: 'claim', owner: opts.owner, path: opts.path, ttlMs, host: opts.host, pid: opts.pid, job: opts.job };
  let ties = 0;
  let removed = 0;
  for (;;) {
    if (signal?.aborted) throw new LeaseError(opts.description, { code: 'stopped' });
    const sentAt = clock.now();
    const mine = await board.create(body);
    const returnedAt = clock.now();
    let verdict: Verdict;
    try {
      const decided = await claimAndJudge(opts, board, lag, mine, returnedAt, ttlMs, clock, signal);
      if (decided === 'removed') {
        // Removed already: its answer came so late that another run judged it expired. Again, a few times.
        if (++removed > MAX_CLAIMS_REMOVED) throw new LeaseError(opts.description, { code: 'contended', times: removed, ttlMs });
        continue;
      }
      verdict = decided;
    } catch (err) {
      await board.removeQuietly(mine.id);
      throw err;
    }
    if (verdict.held) {
      // The claim was judged from a listing begun the bound after it: listings show every earlier
      // holder's writes now (each waited the bound before its release). The proof of it, at once.
      const listed = await awaitListed(lag, returnedAt, clock);
      const held = new HeldLease({ opts: base, board, ttlMs, claim: mine, sentAt, waitedMs: clock.now() - started, tookOverFrom: verdict.tookOverFrom, lag, wroteOwn: opts.wroteOwn, listed });
      for (const r of verdict.expired) await board.removeQuietly(r.id);
      opts.onEvent?.({ type: 'acquired', at: mine.at });
      return held;
    }
    await board.removeQuietly(mine.id);
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
    opts.onEvent?.({ type: 'waiting', holder: holderOf(blocker) });
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
  board: CountedBoard,
  lag: LagBound,
  mine: { id: string; at: number },
  returnedAt: number,
  ttlMs: number,
  clock: Clock,
  signal: AbortSignal | undefined,
): Promise<Verdict | 'removed'> {
  await listedAfter(lag, returnedAt, clock, signal);
  const judgeListing = async (): Promise<Verdict | 'removed'> => {
    const listedAt = clock.now();
    const records = await board.list();
    const own = records.find((r) => r.id === mine.id);
    if (!own) {
      if (!(await board.exists(mine.id))) return 'removed';
      // There, and not listed a bound after it was made: the service lists later than the bound.
      // (Begun the bound after the create returned, or later: at least the bound, whatever a clock's rounding says.)
      throw lag.missing(`the lease claim on ${opts.description}`, Math.max(listedAt - returnedAt, lag.boundMs)) ?? new LeaseError(opts.description, { code: 'unlisted' });
    }
    return judge(records, { ...own, at: mine.at }, opts.owner, opts.path, ttlMs, opts.deadOwners);
  };
  const first = await judgeListing();
  if (first === 'removed' || first.held || !first.blocker || listsAtOnce(lag)) return first;
  // The holder may have released meanwhile, its removal not yet listed: a listing the bound later shows it.
  await listedAfter(lag, clock.now(), clock, signal);
  return judgeListing();
}
