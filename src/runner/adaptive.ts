// Adaptive concurrency, additive-increase / multiplicative-decrease (the TCP congestion rule):
// an item still refused after its request retries (a persistent 429 or 503), or a latency far
// above the running norm, halves the limit at once; every `increaseEvery` clean completions add
// one back, up to the max. A single refusal does not: the pace of requests is the pacer's
// (src/api/pacing.ts), which tells a rate limit from random refusals; halving workers for each
// 429 was what cut throughput 70-fold under 12 % random faults (issue 21).

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

  /** The service kept pushing back (an item's 429 or 503 after its request retries), or was far slower than its norm. */
  throttled(): void {
    this.streak = 0;
    if (this.cooldown > 0) return;
    const next = Math.max(this.min, Math.floor(this.current / 2));
    if (next < this.current) this.decreases++;
    this.current = next;
    this.cooldown = this.current;
  }

  /** An item was written, the service taking `ms` (undefined: not a latency sample, e.g. it was retried). */
  succeeded(ms?: number): void {
    if (this.cooldown > 0) this.cooldown--;
    if (ms !== undefined) {
      const norm = this.smoothedMs;
      this.smoothedMs = norm === undefined ? ms : norm * 0.9 + ms * 0.1;
      if (norm !== undefined && ms > norm * this.slowFactor && ms > 50) {
        this.throttled();
        return;
      }
    }
    this.streak++;
    if (this.streak >= (this.increaseEvery ?? this.current) && this.current < this.max) {
      this.current++;
      this.streak = 0;
    }
  }
}
