// OAuth 2.0 client-credentials tokens: cached, renewed ahead of expiry, one refresh in flight.
import { createHash } from 'node:crypto';
import type { Dispatcher } from 'undici';
import { request } from './undici.js';
import type { Logger } from 'pino';
import { ApiError, AuthenticationError, ConnectionError, FerryError } from './errors.js';
import { DEFAULT_RETRY, RETRYABLE_STATUSES, isTransientConnectionError, nextDelay, parseRetryAfter, type RetryOptions } from './backoff.js';
import { sleep } from './sleep.js';
import type { Reachability } from './reachability.js';

export interface Credentials {
  clientId: string;
  clientSecret: string;
  audience: string;
}

export interface AccessToken {
  value: string;
  /** Epoch ms at which the token expires. */
  expiresAt: number;
  /** Epoch ms the token says it was issued at, when it says so (for clock-skew checks). */
  issuedAt: number | undefined;
}

export interface TokenProviderOptions {
  authUrl: string;
  credentials: Credentials;
  dispatcher: Dispatcher;
  logger: Logger;
  /** Renew this long before expiry (default: 60 s, or a tenth of a short token's life). */
  refreshAheadMs?: number;
  now?: () => number;
  retry?: RetryOptions;
  /** Told of a connection that failed and will be tried again (the first one is said). */
  reachability?: Reachability;
}

export class TokenProvider {
  private current: AccessToken | undefined;
  private inflight: Promise<AccessToken> | undefined;
  private readonly now: () => number;

  constructor(private readonly opts: TokenProviderOptions) {
    this.now = opts.now ?? Date.now;
  }

  /**
   * Which application this is, without its secret: a digest of the client id and audience (two
   * tenants on one address have different ones). For job keys and reports.
   */
  get identity(): string {
    return createHash('sha256').update(`${this.opts.credentials.clientId}\u0000${this.opts.credentials.audience ?? ''}`).digest('hex').slice(0, 16);
  }

  /** A valid token, fetching one if the cached one is missing or about to expire. */
  async token(signal?: AbortSignal): Promise<AccessToken> {
    const cached = this.current;
    if (cached && !this.dueForRenewal(cached)) return cached;
    return this.refresh(signal);
  }

  /** Drops `rejected` if it is still the cached token (a 401 said it is no good). */
  invalidate(rejected: string): void {
    if (this.current?.value === rejected) this.current = undefined;
  }

  private dueForRenewal(t: AccessToken): boolean {
    const life = t.expiresAt - (t.issuedAt ?? t.expiresAt - 3_600_000);
    const ahead = this.opts.refreshAheadMs ?? Math.min(60_000, Math.max(0, life) / 10);
    return this.now() >= t.expiresAt - ahead;
  }

  private refresh(signal?: AbortSignal): Promise<AccessToken> {
    // However many calls wait, only one token request is in flight.
    this.inflight ??= this.fetchToken(signal).then(
      (t) => {
        this.current = t;
        this.inflight = undefined;
        return t;
      },
      (err: unknown) => {
        this.inflight = undefined;
        throw err;
      },
    );
    return this.inflight;
  }

  private async fetchToken(signal?: AbortSignal): Promise<AccessToken> {
    const { authUrl, credentials, dispatcher, logger } = this.opts;
    const retry = this.opts.retry ?? DEFAULT_RETRY;
    const url = `${authUrl}/oauth/token`;
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: credentials.clientId,
      client_secret: credentials.clientSecret,
      audience: credentials.audience,
    }).toString();

    for (let attempt = 0; ; attempt++) {
      let res: Dispatcher.ResponseData;
      const ended = this.opts.reachability?.begin(url);
      try {
        res = await request(url, {
          method: 'POST',
          dispatcher,
          headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
          body: form,
          signal,
          headersTimeout: 30_000,
          bodyTimeout: 30_000,
        });
      } catch (err) {
        // Asking for a token twice is harmless, so every transient failure is retried.
        if (attempt < retry.maxRetries && isTransientConnectionError(err)) {
          this.opts.reachability?.failed(url, err);
          await sleep(nextDelay(attempt, undefined, retry), signal);
          continue;
        }
        throw new ConnectionError('POST', url, err, true);
      } finally {
        ended?.();
      }
      this.opts.reachability?.answered(url);
      const text = await res.body.text();
      if (RETRYABLE_STATUSES.has(res.statusCode) && attempt < retry.maxRetries) {
        await sleep(nextDelay(attempt, parseRetryAfter(res.headers['retry-after']), retry, Math.random, res.statusCode === 429), signal);
        continue;
      }
      if (res.statusCode !== 200) {
        const oauth = safeJson(text) as { error?: string; error_description?: string } | undefined;
        const reason = [oauth?.error, oauth?.error_description].filter(Boolean).join(': ') || `status ${res.statusCode}`;
        const init = { status: res.statusCode, method: 'POST', path: '/oauth/token', body: reason };
        if (res.statusCode === 400 || res.statusCode === 401 || res.statusCode === 403) {
          logger.warn({ status: res.statusCode, clientId: credentials.clientId }, 'token request refused');
          throw new AuthenticationError(init);
        }
        throw ApiError.from(init);
      }
      const body = safeJson(text) as { access_token?: unknown; expires_in?: unknown } | undefined;
      if (!body || typeof body.access_token !== 'string' || body.access_token === '') {
        throw new FerryError(`the token endpoint ${url} answered 200 without an access_token`);
      }
      const token = toAccessToken(body.access_token, body.expires_in, this.now());
      logger.debug(
        { clientId: credentials.clientId, expiresAt: new Date(token.expiresAt).toISOString() },
        'obtained access token',
      );
      return token;
    }
  }
}

/** Lifetime comes from the JWT `exp` claim (the spec's rule); `expires_in` is only a fallback. */
export function toAccessToken(value: string, expiresIn: unknown, now: number): AccessToken {
  const claims = decodeJwtClaims(value);
  let expiresAt: number;
  if (claims && typeof claims.exp === 'number') expiresAt = claims.exp * 1000;
  else if (typeof expiresIn === 'number' && expiresIn > 0) expiresAt = now + expiresIn * 1000;
  else expiresAt = now + 5 * 60_000;
  const issuedAt = claims && typeof claims.iat === 'number' ? claims.iat * 1000 : undefined;
  return { value, expiresAt, issuedAt };
}

/** The JWT payload, unverified: the client only reads timing claims, the service verifies. */
export function decodeJwtClaims(token: string): Record<string, unknown> | undefined {
  const parts = token.split('.');
  if (parts.length !== 3 || !parts[1]) return undefined;
  try {
    const json = Buffer.from(parts[1], 'base64url').toString('utf8');
    const claims: unknown = JSON.parse(json);
    return claims && typeof claims === 'object' ? (claims as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
