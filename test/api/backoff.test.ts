import { describe, expect, it } from 'vitest';
import { backoffDelay, DEFAULT_RETRY, nextDelay, parseRetryAfter } from '../../src/api/backoff.js';
import { resolveAddress } from '../../src/api/addresses.js';
import { ConfigurationError } from '../../src/api/errors.js';
import { toAccessToken } from '../../src/api/auth.js';

describe('backoff', () => {
  it('stays within [0, min(max, base * 2^attempt)] (full jitter)', () => {
    const opts = { ...DEFAULT_RETRY, baseDelayMs: 100, maxDelayMs: 1_000 };
    expect(backoffDelay(0, opts, () => 0.999)).toBe(99);
    expect(backoffDelay(3, opts, () => 0.999)).toBe(799);
    expect(backoffDelay(10, opts, () => 0.999)).toBe(999);
    expect(backoffDelay(10, opts, () => 0)).toBe(0);
  });

  it('backs off a refusal (429) from a longer base than a transient failure', () => {
    const almostOne = () => 0.999;
    // 100 ms for a reset or a 5xx; 2.5 x that for a 429, unless set apart.
    expect(nextDelay(0, undefined, DEFAULT_RETRY, almostOne)).toBe(99);
    expect(nextDelay(0, undefined, DEFAULT_RETRY, almostOne, true)).toBe(249);
    expect(nextDelay(2, undefined, DEFAULT_RETRY, almostOne, true)).toBe(999);
    expect(nextDelay(0, undefined, { ...DEFAULT_RETRY, throttledBaseDelayMs: 40 }, almostOne, true)).toBe(39);
  });

  it('prefers Retry-After, within the cap', () => {
    const opts = { ...DEFAULT_RETRY, maxRetryAfterMs: 5_000 };
    expect(nextDelay(0, 2_000, opts)).toBe(2_000);
    expect(nextDelay(0, 60_000, opts)).toBe(5_000);
  });

  it('parses Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('3', now)).toBe(3_000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:10 GMT', now)).toBe(10_000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 00:00:10 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});
