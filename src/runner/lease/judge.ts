// The decision, pure: from one listing taken after a contender's claim was created, whether it
// holds the lease, and which records are of holders gone (expired by the service's time, or
// proved dead by the contender's store). No clock, no board: records in, a verdict out.
import { LEASE_PROTOCOL, MAX_LEASE_TTL_MS, type LeaseHolder, type LeaseRecord } from './protocol.js';

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
  /** The TTL its record declared, when above the ceiling (it is judged at the ceiling). */
  declaredTtlMs?: number;
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

export function claimantOf(owner: string, list: LeaseRecord[], judgeAt: number, ownTtlMs: number): Claimant | undefined {
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
  // A record's TTL is held to the ceiling any ferry may write: anyone who can write to the folder
  // could otherwise declare one of 10^15 ms and keep every run out for good.
  const declared = claim.body.ttlMs;
  const ttlMs = Number.isFinite(declared) && declared <= MAX_LEASE_TTL_MS ? declared : MAX_LEASE_TTL_MS;
  return { owner, claim, latest, renewedSince, ttlMs, path: claim.body.path, ...(ttlMs !== declared ? { declaredTtlMs: declared } : {}) };
}

export function holderOf(c: Claimant): LeaseHolder {
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
    ...(c.unjudgeable
      ? { note: c.unjudgeable }
      : c.unreadable
        ? { note: `an unreadable lease record (${c.claim.id}), taken for a claim that expires ${Math.round(c.ttlMs / 1000)} s after it was made` }
        : c.declaredTtlMs !== undefined
          ? { note: `its record declares a TTL of ${c.declaredTtlMs} ms, out of range (at most ${MAX_LEASE_TTL_MS / 1000} s): judged as ${MAX_LEASE_TTL_MS / 1000} s` }
          : {}),
  };
}
