import { describe, expect, it } from 'vitest';
import { backoffDelay, DEFAULT_RETRY, nextDelay, parseRetryAfter } from '../../src/api/backoff.js';
import { resolveAddress } from '../../src/api/addresses.js';
import { ConfigurationError } from '../../src/api/errors.js';
import { toAccessToken } from '../../src/api/auth.js';

describe('token lifetime', () => {
  const jwt = (claims: object) => `e30.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.sig`;
  it('comes from exp, with expires_in only as a fallback', () => {
    expect(toAccessToken(jwt({ exp: 2_000, iat: 1_000 }), 999_999, 0)).toEqual({ value: jwt({ exp: 2_000, iat: 1_000 }), expiresAt: 2_000_000, issuedAt: 1_000_000 });
    expect(toAccessToken('opaque', 60, 5_000).expiresAt).toBe(65_000);
  });
});
