// --bwlimit's budget on an injected clock: no timed assertions, the waits it asks for are read.
import { describe, expect, it } from 'vitest';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { Bandwidth, type Clock } from '../../src/sync/bandwidth.js';

function fakeClock(): Clock & { t: number; slept: number[] } {
  const c = {
    t: 0,
    slept: [] as number[],
    now: () => c.t,
    sleep: async (ms: number) => {
      c.slept.push(ms);
      c.t += ms;
    },
  };
  return c;
}

describe('bandwidth budget', () => {
  it('lets a second through at once, then makes every byte wait its turn; idle time refills at most a second', () => {
    const clock = fakeClock();
    const b = new Bandwidth(1000, clock);
    expect(b.reserve(1000)).toBe(0);
    expect(b.reserve(1000)).toBe(1000);
    expect(b.reserve(500)).toBe(1500);
    clock.t = 10_000; // long idle: the bucket holds one second, not ten
    expect(b.reserve(1000)).toBe(0);
    expect(b.reserve(1)).toBeCloseTo(1, 5);
  });

  it('is one budget for every stream: two streams of 3,000 bytes at 1,000 B/s wait 5 s between them, and arrive whole', async () => {
    const clock = fakeClock();
    const b = new Bandwidth(1000, clock);
    const chunks = (tag: string) => Readable.from(Array.from({ length: 3 }, (_, i) => Buffer.from(`${tag}${i}`.padEnd(1000, '.'))));
    const [x, y] = await Promise.all([text(b.throttle(chunks('x'))), text(b.throttle(chunks('y')))]);
    expect(x).toBe(['x0', 'x1', 'x2'].map((s) => s.padEnd(1000, '.')).join(''));
    expect(y).toBe(['y0', 'y1', 'y2'].map((s) => s.padEnd(1000, '.')).join(''));
    // 6,000 bytes, 1,000 of them free: the clock moved at least 5 s.
    expect(clock.t).toBeGreaterThanOrEqual(5000);
    expect(clock.t).toBeLessThan(6000);
  });

  it('passes an error of the source on to the reader', async () => {
    const b = new Bandwidth(1000, fakeClock());
    const failing = new Readable({ read() { this.destroy(new Error('disk gone')); } });
    await expect(text(b.throttle(failing))).rejects.toThrow('disk gone');
  });
});
