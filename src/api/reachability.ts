// "Cannot reach HOST" said once, at the first connection that fails, not after the retries have
// run out 10 to 20 silent seconds later: a newcomer with a wrong port or host name learns it at
// once, and how long ferry will go on trying. One per client (the token endpoint and the service
// may be two hosts): each host said once. A host that neither answers nor refuses (a firewall
// that drops packets, a wrong address) is said too, once, when its first contact has gone
// SILENT_MS without an answer, rather than when the connection times out.
import type { Logger } from 'pino';
import { errorCode, type RetryOptions } from './backoff.js';

/** How long a first contact with a host may go unanswered before it is said. */
export const SILENT_MS = 1_500;

export class Reachability {
  private readonly said = new Set<string>();
  /** Hosts that have answered once in this process, and hosts whose silence was said. */
  private readonly known = new Set<string>();
  private readonly silenceSaid = new Set<string>();

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

  /**
   * An attempt to `url` begins: until its host has answered once, silence past SILENT_MS is said
   * (once per host). Returns the end of the attempt, answered or failed.
   */
  begin(url: string): () => void {
    const host = new URL(url).host;
    if (this.known.has(host) || this.silenceSaid.has(host)) return () => undefined;
    const timer = setTimeout(() => {
      if (this.known.has(host) || this.silenceSaid.has(host)) return;
      this.silenceSaid.add(host);
      this.logger.warn({ host }, `no answer from ${host} after ${SILENT_MS / 1000} s; still trying (a wrong address, or a firewall that drops the connection, looks like this)`);
    }, SILENT_MS);
    timer.unref();
    return () => clearTimeout(timer);
  }

  /** An answer came: a later failure is news again. */
  answered(url: string): void {
    const host = new URL(url).host;
    this.known.add(host);
    if (this.said.size) this.said.delete(host);
  }
}

/** The longest the backoff waits over every retry (each wait at its ceiling). */
export function retryBudgetMs(retry: RetryOptions): number {
  let total = 0;
  for (let i = 0; i < retry.maxRetries; i++) total += Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** i);
  return total;
}
