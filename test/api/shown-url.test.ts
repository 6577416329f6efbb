// The one rule for showing a URL: credentials as ***, query values as …, a path hidden on request.
import { describe, expect, it } from 'vitest';
import { redactUrls, shownUrl } from '../../src/api/addresses.js';

describe('shownUrl', () => {
  it('hides credentials and query values, keeps host and path', () => {
    expect(shownUrl('http://pguser:PGPASSWORD@gateway.example:9091/metrics')).toBe('http://***@gateway.example:9091/metrics');
    expect(shownUrl('https://user@host.example/')).toBe('https://***@host.example/');
    expect(shownUrl('https://host.example/a?token=SECRET&x=1')).toBe('https://host.example/a?token=…&x=…');
    expect(shownUrl('https://hc-ping.example/0f3a-secret-uuid', { path: false })).toBe('https://hc-ping.example/…');
    expect(shownUrl('not a url')).toBe('(not a URL)');
  });

  it('redacts every URL inside a message', () => {
    expect(redactUrls('connect ECONNREFUSED for http://u:PW@127.0.0.1:1/x and https://h.example/?k=v.')).toBe('connect ECONNREFUSED for http://***@127.0.0.1:1/x and https://h.example/?k=….');
  });
});
