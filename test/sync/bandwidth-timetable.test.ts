// --bwlimit as a timetable (rclone's "08:00,512k 19:00,off"): parsed with the token that is wrong
// named, the rate in force by the local time of day, and a run that crosses a slot's boundary
// paced at the low rate before it and not at all after, on an injected clock.
import { describe, expect, it } from 'vitest';
import { Readable } from 'node:stream';
import { Bandwidth, parseTimetable, rateAt, type Clock } from '../../src/sync/bandwidth.js';
import { describeProgress } from '../../src/runner/progress.js';

const size = (rate: string) => ({ '512k': 512 * 1024, '1m': 1024 * 1024, '10k': 10 * 1024 })[rate.toLowerCase()] ?? Number.NaN;

describe('the timetable', () => {
  it('reads HH:MM,RATE slots in order of the day, `off` for none; refuses a bad time, a bad rate, slots out of order', () => {
    const t = parseTimetable('08:00,512k 12:30,1M 19:00,off', size);
    expect(t.slots).toEqual([
      { minute: 480, rate: 512 * 1024 },
      { minute: 750, rate: 1024 * 1024 },
      { minute: 1140, rate: null },
    ]);
    expect(rateAt(t, 479)).toBeNull(); // before the first slot: the day's last, from the night before
    expect(rateAt(t, 480)).toBe(512 * 1024);
    expect(rateAt(t, 800)).toBe(1024 * 1024);
    expect(rateAt(t, 1439)).toBeNull();
    expect(() => parseTimetable('19:00,off 08:00,512k', size)).toThrow('"08:00,512k" comes after a slot that starts later or at the same time');
    expect(() => parseTimetable('08:00,512k 08:00,1M', size)).toThrow(/"08:00,1M" comes after/);
    expect(() => parseTimetable('24:00,512k', size)).toThrow('"24:00,512k": 24:00 is not a time of day');
    expect(() => parseTimetable('08:61,512k', size)).toThrow(/is not a time of day/);
    expect(() => parseTimetable('08:00,fast', size)).toThrow('"08:00,fast": fast is not a rate above 0 (or off)');
    expect(() => parseTimetable('0800,512k', size)).toThrow('"0800,512k" is not HH:MM,RATE');
  });

  it('a run across a boundary: paced at the low slot, then not at all once the slot is off; the progress line says the limit in force', async () => {
    let minute = 8 * 60 + 59; // 08:59, in the 10 KiB/s slot; 09:00 starts the off slot
    let now = 0;
    const waits: number[] = [];
    const clock: Clock = {
      now: () => now,
      minuteOfDay: () => minute,
      sleep: async (ms) => {
        waits.push(ms);
        now += ms;
      },
    };
    const bw = new Bandwidth(parseTimetable('08:00,10k 09:00,off', size), clock);
    const chunk = Buffer.alloc(5 * 1024);
    const read = async (n: number) => {
      const out = bw.throttle(Readable.from(Array.from({ length: n }, () => chunk)));
      let bytes = 0;
      for await (const c of out) bytes += (c as Buffer).length;
      return bytes;
    };
    const state = { counts: { discovered: 0, uploaded: 0, unchanged: 0, skipped: 0, failed: 0, reconciled: 0 }, bytes: 0, bytesPlanned: 0, itemsPlanned: 0, discovering: false, bwlimit: () => bw.rate };
    expect(describeProgress(state, 1_000)).toContain('limit 10.0 KiB/s');
    expect(await read(8)).toBe(40 * 1024);
    // 40 KiB at 10 KiB/s, a second's worth in the bucket at the start: 3 s of waits.
    const paced = waits.reduce((a, b) => a + b, 0);
    expect(paced).toBeCloseTo(3_000, -1);
    minute = 9 * 60; // the boundary
    waits.length = 0;
    expect(await read(40)).toBe(200 * 1024);
    expect(waits).toEqual([]);
    expect(describeProgress(state, 1_000)).toContain('limit off');
    // And back into a limited slot: paced again.
    minute = 8 * 60;
    expect(await read(4)).toBe(20 * 1024);
    expect(waits.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
  });

  it('a plain rate keeps working as before', () => {
    const bw = new Bandwidth(1_000, { now: () => 0, sleep: async () => undefined });
    expect(bw.rate).toBe(1_000);
    expect(bw.reserve(500)).toBe(0);
    expect(bw.reserve(1_000)).toBe(500);
    expect(() => new Bandwidth(0)).toThrow(RangeError);
  });
});
