// "Cannot reach HOST" said once, at the first connection that fails, not after the retries have
// run out 10 to 20 silent seconds later: a newcomer with a wrong port or host name learns it at
// once, and how long ferry will go on trying. One per client (the token endpoint and the service
// may be two hosts): each host said once.
import type { Logger } from 'pino';
import { errorCode, type RetryOptions } from './backoff.js';

export class Reachability {
  private readonly said = new Set<string>();

  constructor(
    private readonly logger: Logger,
    private readonly retry: RetryOptions,
  ) {}

  /** A request to `url` failed without an answer and will be tried again. */
  failed(url: string, err: unknown): void {
    const host = new URL(url).host;
    if (this.said.has(host)) return;
    this.said.add(host);
    const code = errorCode(err) ?? (err as Error).message;
    this.logger.warn({ host, code }, `cannot reach ${host}: ${code}; retrying for up to ${Math.ceil(retryBudgetMs(this.retry) / 1000)} s`);
  }

  /** An answer came: a later failure is news again. */
  answered(url: string): void {
    if (this.said.size) this.said.delete(new URL(url).host);
  }
}

/** The longest the backoff waits over every retry (each wait at its ceiling). */
export function retryBudgetMs(retry: RetryOptions): number {
  let total = 0;
  for (let i = 0; i < retry.maxRetries; i++) total += Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** i);
  return total;
}
