// --notify URL: a ping when a run starts and when it ends, as healthchecks.io takes them (also
// Cronitor's and Better Stack's heartbeat URLs, and any webhook receiver that takes a POST):
// POST URL/start at the start; at the end, POST URL with the run's JSON summary on success (a
// limit stop, exit 8, is a success: the next run carries on), POST URL/fail with it otherwise.
// A ping URL is a secret (whoever has it can report for the job): only its scheme and host are
// ever said. A receiver that is down or slow never changes the run's result: each ping gives up
// after a few seconds, and the first failure is one warning.
import { request } from '../api/undici.js';

/** How long one ping may take before it is given up. */
export const PING_TIMEOUT_MS = 5_000;

/** A URL as it may be said: scheme and host, never the path, query or credentials. */
export function saidUrl(url: URL): string {
  return `${url.protocol}//${url.host}`;
}

export class Notifier {
  private warned = false;
  readonly warnings: string[] = [];

  constructor(
    private readonly url: URL,
    private readonly timeoutMs = PING_TIMEOUT_MS,
  ) {}

  start(): Promise<void> {
    return this.ping('start', '/start', undefined);
  }

  /** The end: success (exit 0, or 8 at a limit) to the URL itself, anything else to /fail. */
  finish(exitCode: number, body: unknown): Promise<void> {
    const ok = exitCode === 0 || exitCode === 8;
    return this.ping(ok ? 'success' : 'fail', ok ? '' : '/fail', body);
  }

  private async ping(what: string, suffix: string, body: unknown): Promise<void> {
    const target = new URL(this.url.href);
    target.pathname = `${target.pathname.replace(/\/$/, '')}${suffix}`;
    try {
      const res = await request(target, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'ferry (--notify)' },
        body: body === undefined ? '' : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
      });
      await res.body.dump();
      if (res.statusCode >= 400) this.warn(`the ${what} ping to ${saidUrl(this.url)} was answered ${res.statusCode}`);
    } catch (err) {
      const why = (err as Error).name === 'TimeoutError' || (err as Error).name === 'AbortError' ? `no answer within ${this.timeoutMs / 1000} s` : ((err as NodeJS.ErrnoException).code ?? 'failed');
      this.warn(`the ${what} ping to ${saidUrl(this.url)} did not go through (${why}): the run's result is not changed by it`);
    }
  }

  private warn(message: string): void {
    // One warning: a receiver that is down fails every ping the same way.
    if (this.warned) return;
    this.warned = true;
    this.warnings.push(message);
  }
}
