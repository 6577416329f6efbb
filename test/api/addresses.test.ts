import { describe, expect, it } from 'vitest';
import { backoffDelay, DEFAULT_RETRY, nextDelay, parseRetryAfter } from '../../src/api/backoff.js';
import { resolveAddress } from '../../src/api/addresses.js';
import { ConfigurationError } from '../../src/api/errors.js';
import { toAccessToken } from '../../src/api/auth.js';

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
