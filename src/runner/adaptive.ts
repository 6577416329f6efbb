// Adaptive concurrency, additive-increase / multiplicative-decrease (the TCP congestion rule):
// an item still refused after its request retries (a persistent 429 or 503), or a latency far
// above the running norm, halves the limit at once; every `increaseEvery` clean completions add
// one back, up to the max. A single refusal does not: the pace of requests is the pacer's
// (src/api/pacing.ts), which tells a rate limit from random refusals; halving workers for each
// 429 was what cut throughput 70-fold under 12 % random faults (issue 21).
// A cut for latency is a trial, as the pacer's cuts are: one stall (a pause of either process on
// a busy machine) makes every request in flight slow at once, and is over by the next round.
// When the round after the cut is back near the norm of before it, the cut is undone; on a
// loaded 2-core machine a 2,000-document migration took 1-4 such cuts a run, climbing back one
// step per round each time (at 16: 92 completions below the limit after one cut).

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
  /** A cut for latency on trial: the limit before it, the norm before it, slow completions since. */
  private trial: { before: number; norm: number; inFlight: number; round: number; slow: number; seen: number } | undefined;
  decreases = 0;
  /** Cuts for latency undone after a round back near the norm. */
  undone = 0;
  /** Latency samples so far: none is judged slow until the norm has two rounds at the max behind it. */
  private samples = 0;

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
    // A new cut: one on trial stands.
    this.trial = undefined;
    const next = Math.max(this.min, Math.floor(this.current / 2));
    if (next < this.current) this.decreases++;
    // As many completions as there may be requests in flight at the cut: the limit before it (the
    // new limit was too few: a stall's stragglers cut twice, 16 -> 8 -> 4, in a migration's timeline).
    this.cooldown = this.current;
    this.current = next;
  }

  /** An item was written, the service taking `ms` (undefined: not a latency sample, e.g. it was retried). */
  succeeded(ms?: number): void {
    if (this.cooldown > 0) this.cooldown--;
    if (ms !== undefined) {
      const norm = this.smoothedMs;
      this.smoothedMs = norm === undefined ? ms : norm * 0.9 + ms * 0.1;
      if (this.trial && this.judge(ms)) return;
      // The first rounds fill the pipeline: latency grows with the queue the run itself makes
      // at the service, not with a slower service (in a migration, the first cut came there).
      if (norm !== undefined && ++this.samples > 2 * this.max && ms > norm * this.slowFactor && ms > 50) {
        const before = this.current;
        this.throttled();
        if (this.current < before) this.trial = { before, norm, inFlight: before, round: this.current, slow: 0, seen: 0 };
        return;
      }
    }
    this.streak++;
    if (this.streak >= (this.increaseEvery ?? this.current) && this.current < this.max) {
      this.current++;
      this.streak = 0;
    }
  }

  /**
   * One completion after a cut for latency. Once the requests that were in flight at the cut have
   * drained (as many completions as the limit was) and a round more has completed: undone when at
   * most a quarter of that round was slow against the norm of before the cut; else it stands.
   * True when the completion ended the trial by undoing the cut.
   */
  private judge(ms: number): boolean {
    const trial = this.trial as NonNullable<typeof this.trial>;
    if (trial.inFlight > 0) {
      trial.inFlight--;
      return false;
    }
    trial.seen++;
    if (ms > trial.norm * this.slowFactor && ms > 50) trial.slow++;
    if (trial.seen < trial.round) return false;
    this.trial = undefined;
    if (trial.slow * 4 > trial.seen || this.current >= trial.before) return false;
    this.current = trial.before;
    this.streak = 0;
    this.undone++;
    return true;
  }
}
