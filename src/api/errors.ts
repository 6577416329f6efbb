// One error hierarchy for everything the client can fail with, each error carrying its mark (see
// ../marks.ts): the one place where a status or a network failure is given its meaning.
// Messages say what failed in words a user can act on; they never carry secrets or tokens.
import type { Mark } from '../marks.js';
import { FerryError } from '../errors.js';

export interface ProblemDetails {
  type?: string | null;
  title?: string | null;
  status?: number | null;
  detail?: string | null;
  instance?: string | null;
  [extra: string]: unknown;
}

/** The mark of an HTTP status, as the errors below carry it. */
export function markOfStatus(status: number): Mark {
  if (status === 429 || status === 503) return 'throttled';
  if (status === 401 || status === 403) return 'fatal';
  if (status === 404) return 'gone';
  if (status === 409) return 'conflict';
  return status >= 500 ? 'transient' : 'item';
}

export { FerryError, ConfigurationError } from '../errors.js';

export interface ApiErrorInit {
  status: number;
  method: string;
  path: string;
  problem?: ProblemDetails | undefined;
  /** The raw body when it was not a ProblemDetails (truncated). */
  body?: string | undefined;
  requestId?: string | undefined;
  /** Seconds the server asked us to wait (429/503). */
  retryAfterMs?: number | undefined;
}

/** The service answered with a non-success status. */
export class ApiError extends FerryError {
  readonly status: number;
  readonly method: string;
  readonly path: string;
  readonly problem: ProblemDetails | undefined;
  readonly body: string | undefined;
  readonly requestId: string | undefined;
  readonly retryAfterMs: number | undefined;

  constructor(init: ApiErrorInit, hint?: string) {
    super(describe(init, hint));
    this.status = init.status;
    this.method = init.method;
    this.path = init.path;
    this.problem = init.problem;
    this.body = init.body;
    this.requestId = init.requestId;
    this.retryAfterMs = init.retryAfterMs;
  }

  override get mark(): Mark {
    return markOfStatus(this.status);
  }

  /** Builds the subclass that matches the status. */
  static from(init: ApiErrorInit): ApiError {
    const s = init.status;
    if (s === 400) return new BadRequestError(init);
    if (s === 401) return new AuthenticationError(init);
    if (s === 403) return new PermissionDeniedError(init);
    if (s === 404) return new NotFoundError(init);
    if (s === 409) return new ConflictError(init);
    if (s === 429) return new RateLimitError(init);
    if (s >= 500) return new ServerError(init);
    return new ApiError(init);
  }
}

export class BadRequestError extends ApiError {
  constructor(init: ApiErrorInit) {
    super(init, 'the service rejected the request as malformed or invalid');
  }
}
export class AuthenticationError extends ApiError {
  constructor(init: ApiErrorInit) {
    super(init, 'the credentials or token were not accepted; check the client id, secret, audience and auth URL');
  }
}
export class PermissionDeniedError extends ApiError {
  constructor(init: ApiErrorInit) {
    super(init, 'the application lacks the permission or access this call needs');
  }
}
export class NotFoundError extends ApiError {
  constructor(init: ApiErrorInit) {
    super(init, 'the resource does not exist or is not visible to this tenant');
  }
}
export class ConflictError extends ApiError {
  constructor(init: ApiErrorInit) {
    super(init, 'the resource is in a state that does not allow this');
  }
}
export class RateLimitError extends ApiError {
  constructor(init: ApiErrorInit) {
    super(init, 'the service is rate limiting this client; lower --rps or --concurrency');
  }
}
export class ServerError extends ApiError {
  constructor(init: ApiErrorInit) {
    super(init, 'the service failed; retrying later may help');
  }
}

/** No HTTP answer: DNS, refused or reset connections, TLS failures, proxies. */
export class ConnectionError extends FerryError {
  constructor(
    readonly method: string,
    readonly url: string,
    cause: unknown,
    /** True when the request may have reached the service before the failure. */
    readonly maybeDelivered: boolean,
  ) {
    super(`${method} ${url} failed: ${causeText(cause)}`, { cause });
  }

  override get mark(): Mark {
    return 'transient';
  }
}

/** A per-request timeout or the overall deadline passed. */
export class TimeoutError extends FerryError {
  constructor(
    readonly method: string,
    readonly url: string,
    readonly timeoutMs: number,
    readonly kind: 'request' | 'deadline',
    cause?: unknown,
  ) {
    super(
      kind === 'deadline'
        ? `${method} ${url} did not finish within the overall deadline of ${timeoutMs} ms`
        : `${method} ${url} timed out after ${timeoutMs} ms without an answer`,
      { cause },
    );
  }

  override get mark(): Mark {
    return 'transient';
  }
}

/** The caller's AbortSignal fired. */
export class AbortedError extends FerryError {}

function describe(init: ApiErrorInit, hint?: string): string {
  const detail = init.problem?.detail ?? init.problem?.title ?? init.body?.trim();
  const parts = [`${init.method} ${init.path} answered ${init.status}`];
  if (detail) parts.push(`: ${detail}`);
  if (hint) parts.push(` (${hint})`);
  if (init.requestId) parts.push(` [request id ${init.requestId}]`);
  return parts.join('');
}

function causeText(cause: unknown): string {
  if (cause instanceof Error) {
    const code = (cause as { code?: string }).code;
    return code ? `${code} ${cause.message}` : cause.message;
  }
  return String(cause);
}

/** The call's result, or undefined when the service answered 404 (for "does it exist" reads). */
export async function unlessNotFound<T>(promise: Promise<T>): Promise<T | undefined> {
  try {
    return await promise;
  } catch (err) {
    if (err instanceof NotFoundError) return undefined;
    throw err;
  }
}
