// The lease's shared words (src/runner/lease/protocol.ts): what a refusal says, how each failure
// is marked, the TTLs a lease can have, and the clock a holder measures itself by.
import { describe, expect, it } from 'vitest';
import { checkLeaseTtl, LeaseError, LeaseHeldError, LeaseLostError, MAX_LEASE_TTL_MS, MIN_LEASE_TTL_MS, systemClock, type LeaseHolder } from '../../src/runner/lease.js';

const holder: LeaseHolder = { host: 'box', pid: 42, job: 'mirror', run: 'r-1', path: 'Share', since: '2026-01-01T00:00:00.000Z', renewed: '2026-01-01T00:00:10.000Z', ttlMs: 30_000 };

describe('a refusal', () => {
  it('names the holder, how long it waited, when a holder that is gone stops holding it, and how to break it', () => {
    const waited = new LeaseHeldError('project p', holder, 61_400, 'ferry lock break --project p');
    expect(waited.message).toBe(
      'another run holds the lease on project p on the service: mirror run r-1 on host box (pid 42), since 2026-01-01T00:00:00.000Z, last renewed 2026-01-01T00:00:10.000Z; ' +
        'waited 61 s (--wait-lock); a holder that is gone stops holding it 30 s after its last renewal; to break it now: ferry lock break --project p',
    );
    const at = new LeaseHeldError('project p', { ...holder, note: 'a lease of protocol 2' }, 0);
    expect(at.message).toBe(
      'another run holds the lease on project p on the service: mirror run r-1 on host box (pid 42), since 2026-01-01T00:00:00.000Z, last renewed 2026-01-01T00:00:10.000Z (a lease of protocol 2); ' +
        'not waiting (--wait-lock DURATION waits); a holder that is gone stops holding it 30 s after its last renewal',
    );
    expect([waited.holder, waited.waitedMs, waited.breakHint, waited.description]).toEqual([holder, 61_400, 'ferry lock break --project p', 'project p']);
  });

  it('every way a lease fails is fatal to the run: nothing is retried', () => {
    expect(new LeaseHeldError('p', holder, 0).mark).toBe('fatal');
    expect(new LeaseLostError('lost').mark).toBe('fatal');
    expect(new LeaseError('undecided').mark).toBe('fatal');
  });
});

describe('TTLs', () => {
  it('from 2 s to an hour, both ends included; a value that is no number is refused', () => {
    expect(checkLeaseTtl(MIN_LEASE_TTL_MS)).toBe(MIN_LEASE_TTL_MS);
    expect(checkLeaseTtl(MAX_LEASE_TTL_MS)).toBe(MAX_LEASE_TTL_MS);
    expect(() => checkLeaseTtl(MIN_LEASE_TTL_MS - 1)).toThrow(LeaseError);
    expect(() => checkLeaseTtl(MAX_LEASE_TTL_MS + 1)).toThrow(/it must be between 2 s and 60 min \(renewals come every quarter of it\)/);
    expect(() => checkLeaseTtl(Number.NaN, 'soon')).toThrow(/a lease TTL of soon cannot be used/);
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
