// Per-client token buckets: each request takes a token; tokens refill at `rps`.
export interface RateLimitSettings {
  rps: number;
  burst: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; atMs: number }>();

  constructor(private readonly settings: RateLimitSettings) {}

  /** 0 when allowed, otherwise the seconds to wait (for Retry-After). */
  take(key: string, nowMs: number): number {
    const bucket = this.buckets.get(key) ?? { tokens: this.settings.burst, atMs: nowMs };
    bucket.tokens = Math.min(this.settings.burst, bucket.tokens + ((nowMs - bucket.atMs) / 1000) * this.settings.rps);
    bucket.atMs = nowMs;
    this.buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.settings.rps));
  }
}
