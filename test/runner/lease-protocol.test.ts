// The lease's shared words (src/runner/lease/protocol.ts): what a refusal says, how each failure
// is marked, the TTLs a lease can have, and the clock a holder measures itself by.
import { describe, expect, it } from 'vitest';
import { checkLeaseTtl, LeaseError, LeaseHeldError, LeaseLostError, MAX_LEASE_TTL_MS, MIN_LEASE_TTL_MS, systemClock, DEFAULT_LEASE_TTL_MS, leaseTtlFor, LeaseTtlError, type LeaseHolder, type LeaseReason } from '../../src/runner/lease.js';
import { ConfigurationError } from '../../src/errors.js';
import { userMessage } from '../../src/cli/lease-words.js';

const holder: LeaseHolder = { host: 'box', pid: 42, job: 'mirror', run: 'r-1', path: 'Share', since: '2026-01-01T00:00:00.000Z', renewed: '2026-01-01T00:00:10.000Z', ttlMs: 30_000 };

describe('a refusal', () => {
  it('names the holder, how long it waited and when a holder that is gone stops holding it; the reason carries the facts', () => {
    const waited = new LeaseHeldError('project p', holder, 61_400, 'ferry lock break --project p');
    expect(waited.message).toBe(
      'another run holds the lease on project p on the service: mirror run r-1 on host box (pid 42), since 2026-01-01T00:00:00.000Z, last renewed 2026-01-01T00:00:10.000Z; ' +
        'waited 61 s; a holder that is gone stops holding it 30 s after its last renewal',
    );
    const at = new LeaseHeldError('project p', { ...holder, note: 'a lease of protocol 2' }, 0);
    expect(at.message).toBe(
      'another run holds the lease on project p on the service: mirror run r-1 on host box (pid 42), since 2026-01-01T00:00:00.000Z, last renewed 2026-01-01T00:00:10.000Z (a lease of protocol 2); ' +
        'not waiting; a holder that is gone stops holding it 30 s after its last renewal',
    );
    expect([waited.holder, waited.waitedMs, waited.breakHint, waited.on, waited.reason.code]).toEqual([holder, 61_400, 'ferry lock break --project p', 'project p', 'held']);
  });

  it('the CLI adds the flags and commands a person acts on, by the reason; the protocol names none', () => {
    expect(userMessage(new LeaseHeldError('project p', holder, 61_400, 'ferry lock break --project p'))).toMatch(/waited 61 s; .* after its last renewal \(a longer --wait-lock waits longer; to break it now: ferry lock break --project p\)$/);
    expect(userMessage(new LeaseHeldError('project p', holder, 0))).toMatch(/not waiting; .*\(--wait-lock DURATION waits for it\)$/);
    expect(userMessage(new LeaseLostError('p', { how: 'gap', gapMs: 40_000, ttlMs: 30_000 }))).toMatch(/not renewed for 40 s of the service's time \(its TTL is 30 s; .*\(--lock-ttl sets how long/);
    expect(userMessage(new LeaseLostError('p', { how: 'broken', ttlMs: 30_000 }))).toMatch(/its claim was removed from the service .*\(`ferry lock status` shows who holds it now; `ferry lock break`/);
    expect(userMessage(new LeaseLostError('p', { how: 'unrenewed', failingMs: 61_000, error: '503' }))).toBe('the lease on p could not be renewed for 61 s (503): this run writes nothing more');
    expect(userMessage(new LeaseError('p', { code: 'contended', times: 5, ttlMs: 30_000 }))).toMatch(/5 times: the service answers too slowly for a lease of 30 s \(raise --lock-ttl; --no-lock runs without a lease\)$/);
    expect(userMessage(new LeaseError('p', { code: 'unlisted' }))).toMatch(/\(--listing-lag sets how late the service may list; --no-lock runs without a lease\)$/);
    expect(userMessage(new LeaseError('p', { code: 'denied', said: 'no project x' }))).toBe('no project x');
    expect(userMessage(new Error('other'))).toBe('other');
    // No flag in what the protocol says of any reason.
    const reasons: LeaseReason[] = [
      { code: 'held', holder, waitedMs: 5_000, breakHint: undefined },
      { code: 'lost', how: 'gap', gapMs: 1, ttlMs: 1 },
      { code: 'lost', how: 'broken', ttlMs: 1, successor: holder },
      { code: 'lost', how: 'unrenewed', failingMs: 1, error: 'x' },
      { code: 'contended', times: 5, ttlMs: 1 },
      { code: 'unlisted' },
      { code: 'undated', record: 'r', value: 'v' },
      { code: 'ttl-range', ttlMs: 1, minMs: MIN_LEASE_TTL_MS, maxMs: MAX_LEASE_TTL_MS },
      { code: 'stopped' },
    ];
    for (const r of reasons) expect(new LeaseError('p', r).message).not.toMatch(/--|ferry /);
    expect(new LeaseError('p', { code: 'undated', record: 'r-1', value: 'soon' }).message).toBe('the service gave a lease record (r-1) no readable dateAdded ("soon"): a lease is decided by the service\'s order and time, and cannot be here');
    expect(userMessage(new LeaseError('p', { code: 'undated', record: 'r-1', value: 'soon' }))).toMatch(/\(--no-lock runs without a lease\)$/);
    expect(new LeaseError('project p', { code: 'stopped' }).message).toBe('stopped while waiting for the lease on project p');
  });

  it('every way a lease fails is fatal to the run: nothing is retried', () => {
    expect(new LeaseHeldError('p', holder, 0).mark).toBe('fatal');
    expect(new LeaseLostError('p', { how: 'gap', gapMs: 1, ttlMs: 1 }).mark).toBe('fatal');
    expect(new LeaseError('p', { code: 'unlisted' }).mark).toBe('fatal');
  });
});

describe('TTLs', () => {
  it('from 2 s to an hour, both ends included; a value that is no number is refused', () => {
    expect(checkLeaseTtl(MIN_LEASE_TTL_MS, 'p')).toBe(MIN_LEASE_TTL_MS);
    expect(checkLeaseTtl(MAX_LEASE_TTL_MS, 'p')).toBe(MAX_LEASE_TTL_MS);
    expect(() => checkLeaseTtl(MIN_LEASE_TTL_MS - 1, 'p')).toThrow(LeaseError);
    expect(() => checkLeaseTtl(MAX_LEASE_TTL_MS + 1, 'p')).toThrow(/it must be between 2 s and 60 min \(renewals come every quarter of it\)/);
    expect(() => checkLeaseTtl(Number.NaN, 'p')).toThrow(/a lease TTL of NaN ms cannot be used/);
  });

  it('under a listing lag: the default grows to three times the lag (to an hour at most); one asked for shorter is a setting refused, exit 2', () => {
    expect(leaseTtlFor(undefined, 0)).toBe(DEFAULT_LEASE_TTL_MS);
    expect(leaseTtlFor(undefined, 20_000)).toBe(60_000);
    expect(leaseTtlFor(undefined, 3_000_000)).toBe(MAX_LEASE_TTL_MS);
    expect(leaseTtlFor(12_000, 4_000)).toBe(12_000);
    const short = (() => {
      try {
        leaseTtlFor(11_999, 4_000);
      } catch (err) {
        return err;
      }
    })();
    expect(short).toBeInstanceOf(LeaseTtlError);
    expect(short).toBeInstanceOf(ConfigurationError);
    expect(userMessage(short)).toMatch(/^a lease TTL of 12 s is too short for a listing lag of 4\.0 s: .*at least 3 times the lag \(12 s\) \(give --lock-ttl 12 s or more, or leave --lock-ttl out; --listing-lag sets the lag\)$/);
  });
});

describe('the holder’s clock', () => {
  it('counts elapsed time, never backwards, from zero at its start', async () => {
    const a = systemClock.now();
    expect(a).toBeGreaterThanOrEqual(0);
    await systemClock.sleep(30);
    const b = systemClock.now();
    expect(b - a).toBeGreaterThanOrEqual(25);
    expect(systemClock.now()).toBeGreaterThanOrEqual(b);
    // Elapsed, not the wall clock's reading.
    expect(b).toBeLessThan(Date.now() - 1_000_000);
  });

  it('a sleep ends at once when its signal fires, and a signal already fired does not sleep at all', async () => {
    const stop = new AbortController();
    const before = systemClock.now();
    const sleeping = systemClock.sleep(60_000, stop.signal);
    stop.abort();
    await sleeping;
    await systemClock.sleep(60_000, stop.signal);
    expect(systemClock.now() - before).toBeLessThan(10_000);
  });
});
