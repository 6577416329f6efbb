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
}

const REAL: Clock = { now: () => performance.now(), sleep: (ms) => sleep(ms) };

export class Bandwidth {
  private tokens: number;
  private last: number;

  constructor(
    /** Bytes per second. */
    readonly rate: number,
    private readonly clock: Clock = REAL,
  ) {
    if (!(rate > 0)) throw new RangeError('a bandwidth limit is a number of bytes per second above 0');
    this.tokens = rate;
    this.last = clock.now();
  }

  /** Takes `bytes` from the budget; returns how long the caller must wait before sending them (ms). */
  reserve(bytes: number): number {
    const now = this.clock.now();
    this.tokens = Math.min(this.rate, this.tokens + ((now - this.last) * this.rate) / 1000);
    this.last = now;
    this.tokens -= bytes;
    return this.tokens >= 0 ? 0 : (-this.tokens * 1000) / this.rate;
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
