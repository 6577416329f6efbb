// The one wait for the service: asks until done, the waits doubling up to their cap; at the
// deadline it ends with the caller's error, quoting the last answer.
import { describe, expect, it } from 'vitest';
import { poll } from '../../src/runner/poll.js';

describe('poll', () => {
  it('returns the first answer that says done, after as many asks as it took', async () => {
    let asks = 0;
    const value = await poll(async () => (++asks === 4 ? 'done' : undefined), { firstMs: 1, maxMs: 2, timeoutMs: 60_000 }, () => new Error('timed out'));
    expect(value).toBe('done');
    expect(asks).toBe(4);
  });

  it('ends with the caller error when the next wait would pass the deadline, and on a stop', async () => {
    let last = 0;
    await expect(poll(async () => void last++, { firstMs: 5, maxMs: 5, timeoutMs: 12 }, () => new Error(`still waiting after ${last} asks`))).rejects.toThrow(/still waiting after [1-3] asks/);
    const stop = new AbortController();
    stop.abort(new Error('stopped'));
    await expect(poll(async () => undefined, { firstMs: 1, maxMs: 1, timeoutMs: 60_000, signal: stop.signal }, () => new Error('timed out'))).rejects.toThrow('stopped');
  });
});
