// The vocabulary of marks: every failure the client, the file system or a source raises reads as
// one mark, given where it arises; the engine and the jobs read nothing else.
import { describe, expect, it } from 'vitest';
import { markOf, isRetryable } from '../../src/marks.js';
import { ApiError, AbortedError, ConfigurationError, ConnectionError, TimeoutError } from '../../src/api/errors.js';
import { SourceGoneError } from '../../src/sync/types.js';

const api = (status: number) => ApiError.from({ status, method: 'GET', path: '/x' });

describe('marks', () => {
  it('gives each status its meaning', () => {
    expect([400, 401, 403, 404, 409, 422, 429, 500, 502, 503, 504].map((s) => markOf(api(s)))).toEqual([
      'item', 'fatal', 'fatal', 'gone', 'conflict', 'item', 'throttled', 'transient', 'transient', 'throttled', 'transient',
    ]);
  });

  it('marks the network transient, the item at fault otherwise, busy files transient', () => {
    expect(markOf(new ConnectionError('GET', 'http://x', new Error('reset'), true))).toBe('transient');
    expect(markOf(new TimeoutError('GET', 'http://x', 10, 'request'))).toBe('transient');
    expect(markOf(new ConfigurationError('bad'))).toBe('item');
    expect(markOf(new AbortedError('stopped'))).toBe('item');
    expect(markOf(Object.assign(new Error('busy'), { code: 'EBUSY' }))).toBe('transient');
    expect(markOf(Object.assign(new Error('gone'), { code: 'ENOENT' }))).toBe('item');
    expect(markOf(new SourceGoneError('deleted since listed'))).toBe('gone');
    expect(markOf('a string')).toBe('item');
    expect(markOf(undefined)).toBe('item');
  });

  it('retries transient and throttled only', () => {
    expect(['transient', 'throttled', 'fatal', 'gone', 'conflict', 'item'].map((m) => isRetryable(m as never))).toEqual([true, true, false, false, false, false]);
  });
});
