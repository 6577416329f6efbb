// Adaptive concurrency, additive-increase / multiplicative-decrease (the TCP congestion rule):
// a throttling signal (429, 503 with Retry-After, or a latency far above the running norm)
// halves the limit at once; every `increaseEvery` clean completions add one back, up to the max.
// So the job backs off within one round trip of the service saying "too much", and returns to
// full speed over a few hundred requests once the pressure is gone.

import type { Mark } from '../marks.js';

export interface AdaptiveOptions {
  max: number;
  min?: number;
  /** Clean completions per step up (default: the current limit, i.e. about one step per "round"). */
  increaseEvery?: number;
  /** A completion slower than this multiple of the smoothed latency counts as a slowdown (default 4). */
  slowFactor?: number;
}

/** Most writes (uploads, downloads, copies) at once unless told otherwise: the one default. */
export const DEFAULT_CONCURRENCY = 8;

/** Hands the client's retries to the limiter: a `throttled` one (429, 503) halves it. */
export function throttleListener(concurrency: AdaptiveConcurrency): (info: { mark: Mark }) => void {
  return (info) => {
    if (info.mark === 'throttled') concurrency.throttled();
  };
}

export class AdaptiveConcurrency {
  private current: number;
  private readonly min: number;
  private readonly max: number;
  private readonly slowFactor: number;
  private readonly increaseEvery: number | undefined;
  private streak = 0;
  private smoothedMs: number | undefined;
  /** No second cut until the requests started before the first one have drained. */
  private cooldown = 0;
  decreases = 0;

  constructor(opts: AdaptiveOptions) {
    if (!(opts.max >= 1)) throw new RangeError('concurrency must be at least 1');
    this.max = Math.floor(opts.max);
    this.min = Math.max(1, Math.floor(opts.min ?? 1));
    this.current = this.max;
    this.slowFactor = opts.slowFactor ?? 4;
    this.increaseEvery = opts.increaseEvery;
  }

  get limit(): number {
    return this.current;
  }

  /** The service pushed back (429 or 503). */
  throttled(): void {
    this.streak = 0;
    if (this.cooldown > 0) return;
    const next = Math.max(this.min, Math.floor(this.current / 2));
    if (next < this.current) this.decreases++;
    this.current = next;
    this.cooldown = this.current;
  }

  /** A request finished without pushback, taking `ms`. */
  succeeded(ms: number): void {
    if (this.cooldown > 0) this.cooldown--;
    const norm = this.smoothedMs;
    this.smoothedMs = norm === undefined ? ms : norm * 0.9 + ms * 0.1;
    if (norm !== undefined && ms > norm * this.slowFactor && ms > 50) {
      this.throttled();
      return;
    }
    this.streak++;
    if (this.streak >= (this.increaseEvery ?? this.current) && this.current < this.max) {
      this.current++;
      this.streak = 0;
    }
  }
}
