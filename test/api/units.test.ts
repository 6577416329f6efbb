import { describe, expect, it } from 'vitest';
import { backoffDelay, DEFAULT_RETRY, nextDelay, parseRetryAfter } from '../../src/api/retry.js';
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

describe('addresses', () => {
  it('builds the three hosts from tenant, region and domain', () => {
    expect(resolveAddress({ tenant: 'contoso', region: 'uk', domain: 'example.com' })).toEqual({
      baseUrl: 'https://api.contoso.uk.example.com',
      settingsUrl: 'https://settings.contoso.uk.example.com',
      authUrl: 'https://auth.uk.example.com',
    });
  });

  it('requires an explicit auth URL for au and jp', () => {
    expect(() => resolveAddress({ tenant: 't', region: 'jp', domain: 'example.com' })).toThrow(/region "jp" has no known token endpoint/);
    expect(resolveAddress({ tenant: 't', region: 'au', domain: 'example.com', authUrl: 'https://login.example.au/' }).authUrl).toBe('https://login.example.au');
  });

  it('names an unknown region', () => {
    expect(() => resolveAddress({ tenant: 't', region: 'fr', domain: 'example.com' })).toThrow(ConfigurationError);
    expect(() => resolveAddress({ tenant: 't', region: 'fr', domain: 'example.com' })).toThrow('unknown region "fr": expected one of uk, us, eu, au, jp');
  });

  it('accepts explicit URLs and rejects bad ones', () => {
    expect(resolveAddress({ baseUrl: 'http://127.0.0.1:4000/', settingsUrl: 'http://127.0.0.1:4000/settings', authUrl: 'http://127.0.0.1:4000/auth' }).baseUrl).toBe('http://127.0.0.1:4000');
    expect(() => resolveAddress({ baseUrl: 'ftp://x', settingsUrl: 'http://a', authUrl: 'http://a' })).toThrow(/baseUrl "ftp:\/\/x" must use https/);
  });
});

describe('token lifetime', () => {
  const jwt = (claims: object) => `e30.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.sig`;
  it('comes from exp, with expires_in only as a fallback', () => {
    expect(toAccessToken(jwt({ exp: 2_000, iat: 1_000 }), 999_999, 0)).toEqual({ value: jwt({ exp: 2_000, iat: 1_000 }), expiresAt: 2_000_000, issuedAt: 1_000_000 });
    expect(toAccessToken('opaque', 60, 5_000).expiresAt).toBe(65_000);
  });
});
