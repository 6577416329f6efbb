// The lease's decision, pure (src/runner/lease/judge.ts), and the operator's view of a scope
// (operator.ts): records in, a verdict out, case by case as docs/scale-out.md states the rules.
import { describe, expect, it } from 'vitest';
import { judge, leaseEntries, pathsConflict, LEASE_PROTOCOL, type LeaseBody, type LeaseRecord } from '../../src/runner/lease.js';
import { MAX_LEASE_TTL_MS } from '../../src/runner/lease/protocol.js';

const TTL = 10_000;

function record(id: string, at: number, owner: string, kind: 'claim' | 'beat' = 'claim', path = 'Share', ttlMs = TTL): LeaseRecord {
  const body: LeaseBody = { v: LEASE_PROTOCOL, kind, owner, path, ttlMs, host: `host-${owner}`, pid: 7, job: 'mirror' };
  return { id, at, body, v: LEASE_PROTOCOL };
}

/** My claim, made at `at`. */
const mine = (at = 100_000, path = 'Share') => record('mine', at, 'me', 'claim', path);

describe('judge', () => {
  it('an empty scope: held, nothing to remove', () => {
    expect(judge([mine()], mine(), 'me', 'Share', TTL)).toEqual({ held: true, tie: false, expired: [], tookOverFrom: [] });
  });

  it('an earlier claim renewed within its TTL before mine blocks; its latest record decides, not its claim', () => {
    const records = [record('c', 50_000, 'other'), record('b', 95_000, 'other', 'beat'), mine()];
    const v = judge(records, mine(), 'me', 'Share', TTL);
    expect(v.held).toBe(false);
    expect(v.blocker?.owner).toBe('other');
    expect(v.blocker?.latest).toBe(95_000);
    expect(v.expired).toEqual([]);
  });

  it('exactly its TTL since its latest record: still alive; a millisecond more: expired, removed and taken over', () => {
    expect(judge([record('c', 90_000, 'other'), mine()], mine(), 'me', 'Share', TTL).held).toBe(false);
    const v = judge([record('c', 89_999, 'other'), record('b', 89_000, 'other', 'beat'), mine()], mine(), 'me', 'Share', TTL);
    expect(v.held).toBe(true);
    expect(v.expired.map((r) => r.id).sort()).toEqual(['b', 'c']);
    expect(v.tookOverFrom).toEqual([expect.objectContaining({ run: 'other', host: 'host-other', pid: 7, job: 'mirror', path: 'Share', ttlMs: TTL, since: new Date(89_999).toISOString(), renewed: new Date(89_999).toISOString() })]);
  });

  it("each claimant's own TTL counts, not the judge's", () => {
    const long = record('c', 50_000, 'other', 'claim', 'Share', 60_000);
    expect(judge([long, mine()], mine(), 'me', 'Share', TTL).held).toBe(false);
  });

  it('a TTL above the ceiling (10^15 ms, written by anyone who can write the folder) is held to it, and named as out of range', () => {
    const forever = record('c', 100_000 - MAX_LEASE_TTL_MS - 1, 'squatter', 'claim', 'Share', 1e15);
    const at = mine(100_000);
    const v = judge([forever, at], at, 'me', 'Share', TTL);
    expect(v.held).toBe(true);
    expect(v.tookOverFrom).toEqual([expect.objectContaining({ run: 'squatter', ttlMs: MAX_LEASE_TTL_MS, note: expect.stringMatching(/declares a TTL of 1000000000000000 ms, out of range \(at most 3600 s\): judged as 3600 s/) })]);
    // Within the ceiling it still blocks: judged as an hour, not as nothing.
    const recent = record('c', 100_000 - MAX_LEASE_TTL_MS + 1, 'squatter', 'claim', 'Share', 1e15);
    expect(judge([recent, at], at, 'me', 'Share', TTL).blocker?.ttlMs).toBe(MAX_LEASE_TTL_MS);
  });

  it('a record made after my claim means the holder was renewing meanwhile: alive, however old its claim', () => {
    const records = [record('c', 10_000, 'other'), record('b', 100_500, 'other', 'beat'), mine()];
    const v = judge(records, mine(), 'me', 'Share', TTL);
    expect(v.held).toBe(false);
    expect(v.blocker?.renewedSince).toBe(true);
  });

  it('an owner proved dead by my store is expired at once', () => {
    const v = judge([record('c', 99_000, 'ghost'), mine()], mine(), 'me', 'Share', TTL, ['ghost']);
    expect(v.held).toBe(true);
    expect(v.expired.map((r) => r.id)).toEqual(['c']);
    expect(v.tookOverFrom.map((h) => h.run)).toEqual(['ghost']);
  });

  it('a dead owner whose claim came after mine is removed, but not taken over from', () => {
    const v = judge([record('c', 100_100, 'ghost'), mine()], mine(), 'me', 'Share', TTL, ['ghost']);
    expect(v.held).toBe(true);
    expect(v.expired.map((r) => r.id)).toEqual(['c']);
    expect(v.tookOverFrom).toEqual([]);
  });

  it('a later claim yields to mine; a claim at the very same instant ties, and no one holds', () => {
    expect(judge([record('c', 100_001, 'other'), mine()], mine(), 'me', 'Share', TTL)).toMatchObject({ held: true, tie: false });
    const tie = judge([record('c', 100_000, 'other'), mine()], mine(), 'me', 'Share', TTL);
    expect(tie).toMatchObject({ held: false, tie: true });
    expect(tie.blocker).toBeUndefined();
  });

  it('of several earlier live claims, the earliest blocks', () => {
    const v = judge([record('c2', 97_000, 'second'), record('c1', 96_000, 'first'), mine()], mine(), 'me', 'Share', TTL);
    expect(v.blocker?.owner).toBe('first');
  });

  it('claims on paths that do not overlap do not block; the root overlaps everything', () => {
    expect(judge([record('c', 99_000, 'other', 'claim', 'Other'), mine()], mine(), 'me', 'Share', TTL).held).toBe(true);
    expect(judge([record('c', 99_000, 'other', 'claim', 'Share/Sub'), mine()], mine(), 'me', 'Share', TTL).held).toBe(false);
    expect(judge([record('c', 99_000, 'other', 'claim', ''), mine()], mine(), 'me', 'Share', TTL).held).toBe(false);
    // An expired holder of another path is removed, yet not taken over from.
    const v = judge([record('c', 1_000, 'other', 'claim', 'Other'), mine()], mine(), 'me', 'Share', TTL);
    expect(v.expired.map((r) => r.id)).toEqual(['c']);
    expect(v.tookOverFrom).toEqual([]);
  });

  it('beats whose claim is gone are nobody’s: removed once older than my TTL, left while younger', () => {
    const old = record('b1', 89_000, 'released', 'beat');
    const young = record('b2', 95_000, 'released2', 'beat');
    const v = judge([old, young, mine()], mine(), 'me', 'Share', TTL);
    expect(v.held).toBe(true);
    expect(v.expired.map((r) => r.id)).toEqual(['b1']);
    expect(v.tookOverFrom).toEqual([]);
  });

  it('an unreadable record is a claim alive for one TTL from its making, then expired', () => {
    const garbage = (at: number): LeaseRecord => ({ id: 'g', at, body: undefined });
    const alive = judge([garbage(95_000), mine()], mine(), 'me', 'Share', TTL);
    expect(alive.held).toBe(false);
    expect(alive.blocker?.unreadable).toBe(true);
    const gone = judge([garbage(80_000), mine()], mine(), 'me', 'Share', TTL);
    expect(gone.held).toBe(true);
    expect(gone.expired.map((r) => r.id)).toEqual(['g']);
  });

  it('a record of a newer protocol never expires: it blocks, saying why', () => {
    const newer: LeaseRecord = { id: 'n', at: 1_000, body: undefined, v: LEASE_PROTOCOL + 1 };
    const v = judge([newer, mine()], mine(), 'me', 'Share', TTL);
    expect(v.held).toBe(false);
    expect(v.blocker?.unjudgeable).toMatch(/newer ferry/);
    // The same version as mine, unreadable: judged as garbage.
    expect(judge([{ ...newer, v: LEASE_PROTOCOL }, mine()], mine(), 'me', 'Share', TTL).held).toBe(true);
  });

  it('an unreadable holder is named as such: unknown host and job, no path, a note of its TTL', () => {
    const v = judge([{ id: 'g', at: 95_000, body: undefined }, mine()], mine(), 'me', 'Share', TTL);
    expect(v.blocker).toBeDefined();
    const refused = leaseEntries([{ id: 'g', at: 95_000, body: undefined }]);
    expect(refused[0]!.holder).toMatchObject({ host: 'unknown', pid: 0, job: 'unknown', run: 'g', path: '', note: 'an unreadable lease record (g), taken for a claim that expires 30 s after it was made' });
    // Two unreadable records are two owners, each with its own record.
    expect(leaseEntries([{ id: 'g1', at: 1, body: undefined }, { id: 'g2', at: 2, body: undefined }]).map((e) => e.records)).toEqual([['g1'], ['g2']]);
  });

  it('a record at the very instant of my claim is its latest, not a renewal since it', () => {
    const records = [record('c', 10_000, 'other'), record('b', 100_000, 'other', 'beat'), mine()];
    const v = judge(records, mine(), 'me', 'Share', TTL);
    expect(v.blocker).toMatchObject({ owner: 'other', latest: 100_000, renewedSince: false });
    expect(v.held).toBe(false);
  });

  it('a dead owner whose claim came at the same instant as mine is removed, not taken over from', () => {
    const v = judge([record('c', 100_000, 'ghost'), mine()], mine(), 'me', 'Share', TTL, ['ghost']);
    expect(v).toMatchObject({ held: true, tie: false, tookOverFrom: [] });
    expect(v.expired.map((r) => r.id)).toEqual(['c']);
  });

  it('of two earlier claims at one instant, the first listed blocks; an owner is ranked by its earliest claim, not a beat', () => {
    const v = judge([record('c1', 96_000, 'first'), record('c2', 96_000, 'second'), mine()], mine(), 'me', 'Share', TTL);
    expect(v.blocker?.owner).toBe('first');
    const ranked = judge([record('b', 91_000, 'early', 'beat'), record('c', 97_000, 'early'), record('c3', 96_000, 'other'), mine()], mine(), 'me', 'Share', TTL);
    expect(ranked.blocker?.owner).toBe('other');
    expect(ranked.blocker?.claim.id).toBe('c3');
  });

  it('two unreadable records are two claimants: the old one expires, the young one blocks', () => {
    const v = judge([{ id: 'old', at: 10_000, body: undefined }, { id: 'young', at: 99_000, body: undefined }, mine()], mine(), 'me', 'Share', TTL);
    expect(v.expired.map((r) => r.id)).toEqual(['old']);
    expect(v.blocker?.claim.id).toBe('young');
  });

  it("an owner's claims listed out of order: its earliest ranks it", () => {
    const v = judge([record('late', 98_000, 'first'), record('early', 96_000, 'first'), record('c', 97_000, 'second'), mine()], mine(), 'me', 'Share', TTL);
    expect(v.blocker?.owner).toBe('first');
    expect(v.blocker?.claim.id).toBe('early');
  });

  it('the operator sees a record of a newer protocol with why it cannot be judged', () => {
    const entries = leaseEntries([{ id: 'n', at: 1, body: undefined, v: LEASE_PROTOCOL + 1 }]);
    expect(entries[0]!.holder?.note).toMatch(/a lease of protocol 2, written by a newer ferry: upgrade, or break it/);
  });

  it('my own records are never judged', () => {
    expect(judge([record('old', 1, 'me'), mine()], mine(), 'me', 'Share', TTL)).toMatchObject({ held: true, expired: [] });
  });
});

describe('pathsConflict', () => {
  it.each([
    ['', 'A', true],
    ['A', '', true],
    ['A', 'A', true],
    ['A', 'A/B', true],
    ['A/B', 'A', true],
    ['A', 'AB', false],
    ['A/B', 'A/C', false],
  ])('%s and %s: %s', (a, b, conflict) => {
    expect(pathsConflict(a, b)).toBe(conflict);
  });
});

describe('the operator’s view', () => {
  it('each owner with its records, the holders by their claim, oldest first; released beats without a holder', () => {
    const entries = leaseEntries([record('b', 30_000, 'late', 'beat'), record('c2', 20_000, 'late'), record('c1', 10_000, 'early'), record('x', 5_000, 'gone', 'beat')]);
    expect(entries.map((e) => [e.holder?.run, e.records])).toEqual([
      [undefined, ['x']],
      ['early', ['c1']],
      ['late', ['b', 'c2']],
    ]);
    expect(entries[2]!.holder).toMatchObject({ since: new Date(20_000).toISOString(), renewed: new Date(30_000).toISOString() });
  });
});
