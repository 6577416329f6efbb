// --bwlimit: the most content bytes per second a run moves, all its transfers together (uploads
// of a mirror, downloads of a pull, copies of a migration), as rclone's --bwlimit. A token bucket
// holding at most one second's worth: a transfer takes what a chunk needs and, when the bucket is
// short, waits for the debt to be paid at the limit's rate. The wait holds the chunk back, so the
// stream's backpressure slows the read (or the download) behind it; nothing is buffered beyond a
// chunk. Small enough to write here: the stream throttles on npm are unmaintained or per stream,
// not one budget shared by every transfer of a run.
import { Transform, type Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';

export interface Clock {
  now(): number;
  sleep(ms: number): Promise<unknown>;
  /** Minutes since local midnight (a timetable's slots are in local time). */
  minuteOfDay?(): number;
}

const REAL: Clock = {
  now: () => performance.now(),
  sleep: (ms) => sleep(ms),
  minuteOfDay: () => {
    const d = new Date();
    return d.getHours() * 60 + d.getMinutes();
  },
};

/** One slot of a timetable: from `minute` (of the local day) on, `rate` bytes a second, or null for no limit. */
export interface BandwidthSlot {
  minute: number;
  rate: number | null;
}

/** rclone's `--bwlimit "08:00,512k 19:00,off"`: slots in order of their start; each holds until the next, the last until the first the next day. */
export interface BandwidthTimetable {
  slots: readonly BandwidthSlot[];
}

/** A plain rate (bytes a second), or a timetable. */
export type BandwidthLimit = number | BandwidthTimetable;

/**
 * Reads `HH:MM,RATE HH:MM,RATE …` (RATE a size such as 512k, or `off`); `size` reads a rate.
 * Throws a RangeError naming the token that is wrong: a bad time, a bad rate, slots out of order.
 */
export function parseTimetable(text: string, size: (rate: string) => number): BandwidthTimetable {
  const slots: BandwidthSlot[] = [];
  for (const token of text.trim().split(/\s+/)) {
    const m = /^(\d{1,2}):(\d{2}),(.+)$/.exec(token);
    if (!m) throw new RangeError(`"${token}" is not HH:MM,RATE`);
    const [hours, minutes] = [Number(m[1]), Number(m[2])];
    if (hours > 23 || minutes > 59) throw new RangeError(`"${token}": ${m[1]}:${m[2]} is not a time of day`);
    const rate = m[3]!.toLowerCase() === 'off' ? null : size(m[3]!);
    if (rate !== null && !(rate > 0)) throw new RangeError(`"${token}": ${m[3]} is not a rate above 0 (or off)`);
    const minute = hours * 60 + minutes;
    const last = slots[slots.length - 1];
    if (last && minute <= last.minute) throw new RangeError(`"${token}" comes after a slot that starts later or at the same time: give the slots in the order of the day`);
    slots.push({ minute, rate });
  }
  return { slots };
}

/**
 * A `--bwlimit` value as the command line and job files give it: a rate above 0, or a timetable
 * (it holds a comma). Throws a RangeError naming what is wrong.
 */
export function parseBandwidthLimit(text: string, size: (rate: string) => number): BandwidthLimit {
  if (text.includes(',')) return parseTimetable(text, size);
  const rate = size(text);
  if (!(rate > 0)) throw new RangeError(`${text} is not a rate above 0 like 500K or 10M (or a timetable, "08:00,512K 19:00,off")`);
  return rate;
}

/** The rate in force at `minute` of the day: the latest slot begun, else (before the first) the day's last. */
export function rateAt(table: BandwidthTimetable, minute: number): number | null {
  let current = table.slots[table.slots.length - 1]!;
  for (const slot of table.slots) if (slot.minute <= minute) current = slot;
  return current.rate;
}

export class Bandwidth {
  private tokens: number;
  private last: number;
  private rateNow: number | null;

  constructor(
    /** Bytes per second, or a timetable of them. */
    readonly limit: BandwidthLimit,
    private readonly clock: Clock = REAL,
  ) {
    if (typeof limit === 'number' && !(limit > 0)) throw new RangeError('a bandwidth limit is a number of bytes per second above 0');
    this.rateNow = this.rateInForce();
    this.tokens = this.rateNow ?? 0;
    this.last = clock.now();
  }

  /** The limit in force now, bytes a second; null for none (a timetable's `off`). */
  get rate(): number | null {
    return this.rateInForce();
  }

  private rateInForce(): number | null {
    if (typeof this.limit === 'number') return this.limit;
    return rateAt(this.limit, this.clock.minuteOfDay?.() ?? REAL.minuteOfDay!());
  }

  /** Takes `bytes` from the budget; returns how long the caller must wait before sending them (ms). */
  reserve(bytes: number): number {
    const now = this.clock.now();
    const rate = this.rateInForce();
    if (rate !== this.rateNow) {
      // A slot's boundary: the bucket holds at most a second of the new rate, and starts from there.
      this.rateNow = rate;
      this.tokens = rate === null ? 0 : Math.min(Math.max(this.tokens, 0), rate);
      this.last = now;
    }
    if (rate === null) return 0;
    this.tokens = Math.min(rate, this.tokens + ((now - this.last) * rate) / 1000);
    this.last = now;
    this.tokens -= bytes;
    return this.tokens >= 0 ? 0 : (-this.tokens * 1000) / rate;
  }

  /** The stream, passed on no faster than the budget allows (shared with every other stream given here). */
  throttle(stream: Readable): Readable {
    const limiter = new Transform({
      transform: (chunk: Buffer, _enc, done) => {
        const wait = this.reserve(chunk.length);
        if (wait <= 0) return done(null, chunk);
        void this.clock.sleep(wait).then(() => done(null, chunk));
      },
    });
    // An error of the source reaches the reader; a reader that stops early stops the source.
    stream.once('error', (err) => limiter.destroy(err));
    limiter.once('close', () => stream.destroy());
    return stream.pipe(limiter);
  }
}
