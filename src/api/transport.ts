// The one transport core every API part goes through: addresses, auth, rate limit, retries,
// timeouts, error mapping and response decoding.
import type { Mark } from '../marks.js';
import type { Dispatcher } from 'undici';
import { Agent, EnvHttpProxyAgent, request } from './undici.js';
import PQueue from 'p-queue';
import { Pacer } from './pacing.js';
import { Readable } from 'node:stream';
import { isAscii } from 'node:buffer';
import type { Logger } from 'pino';
import { plainHttpHosts, resolveAddress, type AddressInput, type ResolvedAddress } from './addresses.js';
import { ConfigurationError } from './errors.js';
import { TokenProvider, type Credentials } from './auth.js';
import {
  AbortedError,
  ApiError,
  ConnectionError,
  FerryError,
  TimeoutError,
  markOfStatus,
  type ProblemDetails,
} from './errors.js';
import { Reachability } from './reachability.js';
import { listedAfter, listedInstant } from './listed.js';
import { SMALL_BODY, buildMultipart, type BodyReader, type MultipartBody, type MultipartPart } from './multipart.js';
import {
  DEFAULT_RETRY,
  RETRYABLE_STATUSES,
  errorCode,
  isIdempotentMethod,
  isTransientConnectionError,
  nextDelay,
  parseRetryAfter,
  provesNotSent,
  type RetryOptions,
} from './backoff.js';
import { sleep } from './sleep.js';
import { ListingLagWatch } from './listing-lag.js';
import { PageWatch } from './paging.js';
import { noteWaited, type Slot, waitOutsideSlot } from '../slots.js';
import { silentLogger } from '../log.js';
import { BulkBody, BulkDispatcher, BulkTap, type BodySink } from './bulk-dispatcher.js';

export type Host = 'base' | 'settings';
export type QueryValue = string | number | boolean | null | undefined | readonly (string | number | boolean)[];

/**
 * Where a service reads an upload's form fields: only before the file (`fields-first`: the safe
 * assumption, as S3's POST uploads do) or anywhere (`any`), which lets metadata naming the
 * content's sha256 follow the file, hashed as it is sent (documents.upload, metadataAfterFile).
 */
export const FORM_ORDERS = ['fields-first', 'any'] as const;
export type FormOrder = (typeof FORM_ORDERS)[number];

export interface ClientOptions {
  /** `{tenant, region, domain, authUrl?}` or explicit `{baseUrl, settingsUrl, authUrl}`. */
  address: AddressInput;
  credentials: Credentials;
  logger?: Logger;
  retry?: Partial<RetryOptions>;
  /** Per-attempt wait for response headers, and the longest silence inside a body (default 60 s). */
  timeoutMs?: number;
  /** Overall deadline of one call across all its attempts (default none). */
  deadlineMs?: number;
  /** Client-wide cap on requests per second, shared by all calls (default unlimited). */
  requestsPerSecond?: number;
  /**
   * Send the secret and tokens over plain http to a host that is not this machine (`--allow-http`).
   * Without it such an address is refused before any request: they would cross the network in clear.
   */
  allowPlainHttp?: boolean;
  /**
   * The longest the service takes to list a new item (default 0: at once). A look at the service
   * after an ambiguous failure (didItLand) begins no sooner than this after the failure.
   */
  listingLagMs?: number;
  /** The most items a page of this service holds (the profile's pageSize, measured by `ferry doctor --probe`): no list asks for more. */
  pageSize?: number;
  /** Where the service reads an upload's form fields (default fields-first; the profile's `formOrder`, found by `ferry doctor --probe`). */
  formOrder?: FormOrder;
  /** Keep-alive connections per host (default 32). */
  connectionsPerHost?: number;
  /** Extra CA certificates (PEM) for TLS; Node's NODE_EXTRA_CA_CERTS works too. */
  ca?: string | Buffer | (string | Buffer)[];
  /** Bring your own undici dispatcher (proxies are then yours to configure). */
  dispatcher?: Dispatcher;
  userAgent?: string;
  /** Told about every retry before its wait (for progress displays and adaptive concurrency). */
  onRetry?: (info: RetryInfo) => void;
  /** The profile these settings came from: only to name the tenant in summaries. */
  label?: string | undefined;
  /** Clock for token expiry (tests move it). */
  now?: () => number;
  /** Source of jitter (tests pin it). */
  random?: () => number;
}

export interface RetryInfo {
  method: string;
  path: string;
  /** 0 for the first retry. */
  attempt: number;
  delayMs: number;
  status?: number;
  code?: string;
  /** What the failure means: `throttled` (429, 503) or `transient` (see ../marks.ts). */
  mark: Mark;
  /** True when the wait is the one the server asked for (Retry-After, honoured when refusals persist). */
  serverAsked: boolean;
}

export type ResponseKind = 'json' | 'stream' | 'text';

const everyStats = new Set<TransportStats>();

/** Every client of this process, its calls added up (a migration has two). */
export function transportTotals(): TransportStats {
  const total: TransportStats = { responses: { '1xx': 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 }, unanswered: 0, retries: 0, throttleWaitMs: 0 };
  for (const s of everyStats) {
    for (const k of Object.keys(total.responses) as (keyof TransportStats['responses'])[]) total.responses[k] += s.responses[k];
    total.unanswered += s.unanswered;
    total.retries += s.retries;
    total.throttleWaitMs += s.throttleWaitMs;
  }
  return total;
}

/** A client's calls, counted: what a run's metrics report (src/runner/metrics.ts). */
export interface TransportStats {
  responses: { '1xx': number; '2xx': number; '3xx': number; '4xx': number; '5xx': number };
  /** Attempts that got no answer (a reset, a timeout). */
  unanswered: number;
  /** Attempts made again after a failure. */
  retries: number;
  /** Time spent waiting because the service pushed back (429, 503, and the pace learned from them). */
  throttleWaitMs: number;
}

export interface CallOptions<T = never> {
  signal?: AbortSignal;
  timeoutMs?: number;
  deadlineMs?: number;
  /** Declares a non-idempotent call safe to repeat (for example a search POST). */
  idempotent?: boolean;
  /**
   * For non-idempotent calls: asked after an ambiguous failure (reset, 502/503/504, timeout) and
   * its wait, whether the request took effect. Return the result if it did, undefined if it did
   * not. `since` (performance.now() at the failure): a look at the service begun after it sees
   * the request's effect, if it had one; a look begun before may not.
   */
  didItLand?: (since: number) => Promise<T | undefined>;
  /**
   * A job that is stopping (first Ctrl-C): once this fires, no attempt is sent any more and no
   * retry is waited for, while an attempt already on the wire is let finish (unlike `signal`). An
   * ambiguous failure is then not settled here: the caller's journal settles it on the next run.
   */
  stopBeforeSend?: AbortSignal;
  /**
   * Awaited right before every attempt goes on the wire (a retry's too): a write that may no
   * longer be made (its run lost its lease on the service) throws here and is not sent.
   */
  beforeSend?: () => Promise<void>;
  /**
   * Asked synchronously at the last moment, as the request is handed to its socket (undici's
   * onConnect): false stops it unwritten, and the attempt goes back through `beforeSend`. What
   * `beforeSend` allowed may have waited since for a connection, or for a process that was stopped.
   * Asked again before each block of a large body while more is to come: false cuts the body short.
   */
  fence?: () => boolean;
  headers?: Record<string, string>;
  /** A large body to read (a big document's content): over plain http it is read from its socket in blocks (bulk-dispatcher.ts). */
  bulk?: boolean;
  /** The pool slot of the work item making the call: given to another item while a retry is waited for. */
  slot?: Slot;
}

export interface RequestSpec {
  method: string;
  path: string;
  host?: Host;
  query?: Record<string, QueryValue>;
  json?: unknown;
  /** Multipart parts; file parts are streamed. */
  multipart?: readonly MultipartPart[];
  /** Absolute URL instead of host + path (document content URLs). */
  url?: string;
}

export interface StreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Readable;
  /**
   * A large body over plain http read by the bulk reader (bulk-dispatcher.ts): its bytes handed to
   * `sink` from the read buffer as they arrive, instead of through `body`; each is valid only during
   * the call. Resolves when the body has ended. For a caller that writes at once (a file).
   */
  drain?: (sink: BodySink) => Promise<void>;
}

const USER_AGENT = 'ferry/0.1 (+undici)';

/**
 * What a large body's stream holds before its socket is paused: one block. With more, a reader's
 * read() joins the blocks held into one new buffer (Node's Readable does), a copy of every byte
 * (measured: a third of a pull's CPU time).
 */
const BULK_BUFFERED = 1024 * 1024;

/**
 * A request stopped by its fence: as it was handed to its socket (never written), or before a
 * block of its body while more was still to come (never whole, so the service made nothing of it).
 */
class FenceClosed extends Error {}

/**
 * A large body's blocks, each asked to the fence before it is written: a process stopped mid-body
 * (SIGSTOP, a frozen machine) and continued past its lease cuts the body instead of finishing it.
 * The last block is never followed by a question: a body once whole is not cut.
 */
async function* fencedBlocks(blocks: AsyncIterable<Uint8Array>, fence: () => boolean): AsyncIterable<Uint8Array> {
  for await (const block of blocks) {
    if (!fence()) throw new FenceClosed('fence closed mid-body');
    yield block;
  }
}

/** The bulk sender's reader, asked to the fence the same way while bytes of `length` remain. */
function fencedReader(reader: BodyReader, length: number, fence: () => boolean): BodyReader {
  let read = 0;
  return {
    allocate: (size) => reader.allocate(size),
    ready: (then) => reader.ready(then),
    read(into) {
      if (read < length && !fence()) throw new FenceClosed('fence closed mid-body');
      const n = reader.read(into);
      read += n;
      return n;
    },
    reusable: (into, then) => reader.reusable(into, then),
    close: () => reader.close(),
  };
}

/** Whether the environment names a proxy, as EnvHttpProxyAgent reads it. */
function proxyConfigured(): boolean {
  const env = process.env;
  return Boolean(env.http_proxy || env.HTTP_PROXY || env.https_proxy || env.HTTPS_PROXY);
}

/**
 * The dispatcher with the request's handler asked to the fence as undici hands it to a socket
 * (onConnect, or onRequestStart for handlers of the newer shape), right before it is written.
 */
function fencedDispatcher(dispatcher: Dispatcher, fence: () => boolean): Dispatcher {
  return dispatcher.compose((dispatch) => (options, handler) => {
    const guarded = new Proxy(handler, {
      get(target, prop, receiver) {
        const original = Reflect.get(target, prop, receiver) as unknown;
        if (prop === 'onConnect' && typeof original === 'function') {
          return (abort: (err?: Error) => void, context: unknown) => (fence() ? (original as (...a: unknown[]) => unknown).call(target, abort, context) : abort(new FenceClosed('fence closed')));
        }
        if (prop === 'onRequestStart' && typeof original === 'function') {
          return (controller: { abort(err: Error): void }, context: unknown) => (fence() ? (original as (...a: unknown[]) => unknown).call(target, controller, context) : controller.abort(new FenceClosed('fence closed')));
        }
        return typeof original === 'function' ? (original as (...a: unknown[]) => unknown).bind(target) : original;
      },
    });
    return dispatch(options, guarded);
  });
}

/** What `beforeSend` threw: passed on as it is, never taken for a failure of the request. */
class Withheld {
  constructor(readonly reason: unknown) {}
}
const RETRY = Symbol('retry');
const GIVE_UP = Symbol('give up');

export class Transport {
  readonly address: ResolvedAddress;
  /** The addresses that are plain http to another machine (allowed by --allow-http), as shown: said in every summary. */
  readonly plainHttp: string[];
  readonly logger: Logger;
  /** Where the service reads an upload's form fields (ClientOptions.formOrder). */
  readonly formOrder: FormOrder;
  private readonly reachability: Reachability;
  readonly tokens: TokenProvider;
  private readonly dispatcher: Dispatcher;
  /** Large bodies over plain http, where no proxy or dispatcher of the caller's stands between (bulk-dispatcher.ts). */
  private readonly bulk: Dispatcher | undefined;
  private readonly ownsDispatcher: boolean;
  private readonly retry: RetryOptions;
  private readonly timeoutMs: number;
  private readonly deadlineMs: number | undefined;
  private readonly limiter: PQueue | undefined;
  /** The client-wide cap on requests per second, when one is set. */
  readonly requestsPerSecond: number | undefined;
  /** The request rate learned from 429s and 503s (src/api/pacing.ts). */
  private readonly pacer = new Pacer();
  private readonly userAgent: string;
  private readonly onRetry: ((info: RetryInfo) => void) | undefined;
  private readonly random: () => number;
  private readonly ownOrigins: string[];
  /**
   * Requests sent that may change the service (any method but GET and HEAD, answered or not): what
   * a lease's release asks to know whether the run wrote, and must wait for its writes to be listed.
   */
  writesSent = 0;
  /** The service's listing lag as bounded for this client, and what was seen of it (./listing-lag.ts). */
  readonly listingLag: ListingLagWatch;
  /** The service's page cap as recorded for this client, and the capped pages its lists met (./paging.ts). */
  readonly pages: PageWatch;
  /** What this client's calls came to, for a run's metrics: answers by status class, retries, waits. */
  readonly stats: TransportStats = { responses: { '1xx': 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 }, unanswered: 0, retries: 0, throttleWaitMs: 0 };

  constructor(opts: ClientOptions) {
    everyStats.add(this.stats);
    this.address = resolveAddress(opts.address);
    this.plainHttp = plainHttpHosts(this.address);
    if (this.plainHttp.length > 0 && !opts.allowPlainHttp) {
      throw new ConfigurationError(`${this.plainHttp.join(', ')}: plain http to a host that is not this machine, which would send the client secret and tokens in clear; use https, or give --allow-http (FERRY_ALLOW_HTTP=1) to send them anyway`);
    }
    this.logger = opts.logger ?? silentLogger();
    this.formOrder = opts.formOrder ?? 'fields-first';
    this.retry = { ...DEFAULT_RETRY, ...opts.retry };
    this.timeoutMs = opts.timeoutMs ?? 60_000;
    this.deadlineMs = opts.deadlineMs;
    this.userAgent = opts.userAgent ?? USER_AGENT;
    this.onRetry = opts.onRetry;
    this.random = opts.random ?? Math.random;
    this.ownOrigins = [new URL(this.address.baseUrl).origin, new URL(this.address.settingsUrl).origin];
    this.ownsDispatcher = !opts.dispatcher;
    // A keep-alive pool per origin; EnvHttpProxyAgent when HTTP(S)_PROXY names a proxy (it honours
    // NO_PROXY too). Without one, a plain Agent: the proxy agent reads NO_PROXY from the
    // environment on every request (1% of a migration's time in a profile), to reach the same Agent.
    const pool = { connections: opts.connectionsPerHost ?? 32, keepAliveTimeout: 30_000, ...(opts.ca ? { connect: { ca: opts.ca } } : {}) };
    const proxied = proxyConfigured();
    this.dispatcher = opts.dispatcher ?? (proxied ? new EnvHttpProxyAgent(pool) : new Agent(pool));
    this.bulk = opts.dispatcher || proxied ? undefined : new BulkDispatcher(this.dispatcher, { ca: opts.ca });
    this.requestsPerSecond = opts.requestsPerSecond;
    this.listingLag = new ListingLagWatch(opts.listingLagMs ?? 0);
    this.pages = new PageWatch(new URL(this.address.baseUrl).host, opts.pageSize);
    if (opts.requestsPerSecond !== undefined) {
      if (!(opts.requestsPerSecond > 0)) throw new FerryError('requestsPerSecond must be a positive number');
      // One start per interval: a smooth rate rather than bursts at each second boundary.
      this.limiter = new PQueue({ concurrency: Infinity, intervalCap: 1, interval: 1000 / opts.requestsPerSecond });
    }
    this.reachability = new Reachability(this.logger, this.retry);
    this.tokens = new TokenProvider({
      authUrl: this.address.authUrl,
      credentials: opts.credentials,
      dispatcher: this.dispatcher,
      logger: this.logger,
      retry: this.retry,
      reachability: this.reachability,
      ...(opts.now ? { now: opts.now } : {}),
    });
  }

  /** What the pacer has learned so far: the rate (undefined while unpaced), its cuts, the noise. */
  get pacing(): { rate: number | undefined; cuts: number; undone: number; noiseFloor: number } {
    return { rate: this.pacer.currentRate, cuts: this.pacer.cuts, undone: this.pacer.undone, noiseFloor: this.pacer.noiseFloor };
  }

  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  /** A JSON call: resolves to the decoded body (undefined for an empty body). */
  json<T>(spec: RequestSpec, opts: CallOptions<NoInfer<T>> = {}): Promise<T> {
    return this.call(spec, 'json', opts) as Promise<T>;
  }

  /** A call whose body the caller reads as a stream (downloads, server-sent events). */
  stream(spec: RequestSpec, opts: CallOptions<StreamResponse> = {}): Promise<StreamResponse> {
    return this.call(spec, 'stream', opts) as Promise<StreamResponse>;
  }

  urlFor(spec: RequestSpec): string {
    if (spec.url) return spec.url;
    const root = spec.host === 'settings' ? this.address.settingsUrl : this.address.baseUrl;
    const url = new URL(root + spec.path);
    for (const [key, value] of Object.entries(spec.query ?? {})) {
      if (value === undefined || value === null) continue;
      if (Array.isArray(value)) for (const v of value) url.searchParams.append(key, String(v));
      else url.searchParams.set(key, String(value));
    }
    return url.href;
  }

  /** Only our own hosts ever see the bearer token. */
  private ownsUrl(url: string): boolean {
    return this.ownOrigins.some((origin) => url === origin || url.startsWith(`${origin}/`));
  }

  private async call(spec: RequestSpec, kind: ResponseKind, opts: CallOptions<unknown>): Promise<unknown> {
    const method = spec.method.toUpperCase();
    const url = this.urlFor(spec);
    const path = spec.url ? new URL(spec.url).pathname : spec.path;
    const idempotent = opts.idempotent ?? isIdempotentMethod(method);
    const deadlineMs = opts.deadlineMs ?? this.deadlineMs;
    const timeoutMs = opts.timeoutMs ?? this.timeoutMs;
    const deadline = deadlineMs !== undefined ? AbortSignal.timeout(deadlineMs) : undefined;
    const signal = anySignal(opts.signal, deadline);
    const multipart = spec.multipart ? await buildMultipart(spec.multipart) : undefined;
    // A small body is read once and can then be sent again, whatever its source.
    const smallBody = multipart && multipart.length <= SMALL_BODY ? await multipart.materialize() : undefined;
    const canResend = !multipart || smallBody !== undefined || multipart.replayable;
    const sendToken = this.ownsUrl(url);

    let refreshedAfter401 = false;
    let attempt = 0;
    let fenced = 0;
    // A big body from files on disk is sent by the bulk sender, as a big content is read by it.
    const sendable = multipart && !smallBody && multipart.reader && this.bulk ? multipart : undefined;
    const base = (opts.bulk || sendable) && this.bulk ? this.bulk : this.dispatcher;
    const dispatcher = opts.fence ? fencedDispatcher(base, opts.fence) : base;
    for (;;) {
      const started = Date.now();
      let token: string | undefined;
      let res: Dispatcher.ResponseData<unknown>;
      let tap: BulkTap | undefined;
      let onWire = false;
      // Waits before sending end when the job stops; a request once sent is let finish.
      const beforeSend = anySignal(signal, opts.stopBeforeSend);
      try {
        if (this.limiter) await this.limiter.add(() => undefined, { signal: beforeSend });
        const pause = this.pacer.delay();
        if (pause > 0) {
          this.stats.throttleWaitMs += pause;
          noteWaited(opts.slot, pause);
          await sleep(pause, beforeSend);
        }
        token = sendToken ? (await this.tokens.token(signal)).value : undefined;
        if (opts.stopBeforeSend?.aborted) throw new AbortedError(`${method} ${path} was not sent: the job is stopping`);
        if (opts.beforeSend) {
          try {
            await opts.beforeSend();
          } catch (err) {
            throw new Withheld(err);
          }
        }
        onWire = true;
        if (method !== 'GET' && method !== 'HEAD') this.writesSent++;
        const fence = opts.fence;
        const blocks = (body: MultipartBody) => (fence ? fencedBlocks(body.open(), fence) : body.open());
        const bulkBody = sendable
          ? new BulkBody(
              sendable.length,
              () => {
                const reader = (sendable.reader as () => BodyReader)();
                return fence ? fencedReader(reader, sendable.length, fence) : reader;
              },
              () => Readable.from(blocks(sendable), { objectMode: false }),
            )
          : undefined;
        const streamed = !bulkBody && spec.json === undefined && !smallBody && multipart ? Readable.from(blocks(multipart), { objectMode: false }) : undefined;
        const ended = this.reachability.begin(url);
        tap = dispatcher === this.bulk ? new BulkTap() : undefined;
        try {
          res = await request(url, {
            method: method as Dispatcher.HttpMethod,
            dispatcher,
            headers: this.headers(token, spec, multipart, kind, opts.headers),
            // A BulkBody is the bulk dispatcher's to read (undici's request hands a body on as it is); it gives any other a stream.
            body: spec.json !== undefined ? JSON.stringify(spec.json) : (smallBody ?? (bulkBody as unknown as Readable | undefined) ?? streamed),
            signal,
            headersTimeout: timeoutMs,
            bodyTimeout: timeoutMs,
            ...(opts.bulk ? { highWaterMark: BULK_BUFFERED } : {}),
            ...(tap ? { opaque: tap } : {}),
          });
        } finally {
          ended();
          // Answered or failed, the attempt is over: what it did not send of a streamed body is let go (multipart.ts, exactly).
          streamed?.destroy();
          bulkBody?.destroy();
        }
      } catch (err) {
        if (err instanceof Withheld) throw err.reason;
        // Stopped by the fence before a byte was written: ask beforeSend again (a few times at most).
        if (err instanceof FenceClosed && ++fenced <= 5) continue;
        if (err instanceof FenceClosed) throw new FerryError(`${method} ${path} was not sent: the run could not confirm it may still write (its lease), ${fenced} times`);
        if (!onWire && opts.stopBeforeSend?.aborted) throw new AbortedError(`${method} ${path} was not sent: the job is stopping`);
        if (onWire) this.stats.unanswered++;
        const failure = this.classify(err, method, url, timeoutMs, deadlineMs, opts.signal, deadline);
        if (failure instanceof AbortedError || (failure instanceof TimeoutError && failure.kind === 'deadline')) throw failure;
        if (failure instanceof FerryError && !(failure instanceof ConnectionError) && !(failure instanceof TimeoutError)) throw failure;
        // Failed before the request went out: the token endpoint, whose own retries are spent.
        // Trying again here would retry each of its retries (a refused port took 13 s to say so).
        if (!onWire && failure instanceof ConnectionError) throw failure;
        const notSent = provesNotSent(err);
        const transient = failure instanceof TimeoutError || isTransientConnectionError(err);
        this.logger.debug({ method, path, attempt, code: errorCode(err) }, 'request failed without a response');
        if (transient && canResend && attempt < this.retry.maxRetries) {
          if (!onWire || notSent) this.reachability.failed(url, err);
          const next = await this.again({ method, path, attempt, code: errorCode(err) }, notSent || idempotent, undefined, opts, signal);
          if (next === RETRY) {
            attempt++;
            continue;
          }
          if (next !== GIVE_UP) return next.landed;
        }
        throw failure;
      }

      const status = res.statusCode;
      this.reachability.answered(url);
      this.logger.debug({ method, path, status, attempt, ms: Date.now() - started }, 'response');
      // The pacer counts refusals against answers, window by window, to tell a limit from noise.
      this.stats.responses[`${Math.min(5, Math.max(1, Math.floor(status / 100)))}xx` as keyof TransportStats['responses']]++;
      if (status === 429 || status === 503) this.pacer.throttled(status === 503);
      else if (status < 500) this.pacer.ok();
      if (status >= 200 && status < 300) return this.decode(res, kind, method, path, tap);

      const bodyText = await readSmall(res.body);
      const requestId = header(res.headers, 'x-request-id') ?? header(res.headers, 'request-id') ?? header(res.headers, 'x-correlation-id');
      const retryAfterMs = parseRetryAfter(res.headers['retry-after']);

      // A 401 means the request was not processed: renew the token once and try again.
      if (status === 401 && token && !refreshedAfter401 && canResend) {
        refreshedAfter401 = true;
        this.tokens.invalidate(token);
        continue;
      }
      if (RETRYABLE_STATUSES.has(status) && canResend && attempt < this.retry.maxRetries) {
        // 429 was refused before any work; 502/503/504 may or may not have done the work.
        const next = await this.again({ method, path, attempt, status }, status === 429 || idempotent, retryAfterMs, opts, signal);
        if (next === RETRY) {
          attempt++;
          continue;
        }
        if (next !== GIVE_UP) return next.landed;
      }
      const problem = parseProblem(bodyText);
      throw ApiError.from({ status, method, path, problem, body: problem ? undefined : bodyText.slice(0, 500) || undefined, requestId, retryAfterMs });
    }
  }

  /**
   * After a retryable failure: wait and go again when repeating is safe; otherwise ask the
   * caller's didItLand first (and return what landed); give up when neither applies.
   */
  private async again(
    retry: { method: string; path: string; attempt: number; status?: number; code?: string | undefined },
    safeToRepeat: boolean,
    retryAfterMs: number | undefined,
    opts: CallOptions<unknown>,
    signal: AbortSignal | undefined,
  ): Promise<typeof RETRY | typeof GIVE_UP | { landed: unknown }> {
    // Stopping: neither another attempt nor a question to the service; the failure stands.
    if (opts.stopBeforeSend?.aborted) return GIVE_UP;
    if (safeToRepeat) {
      await this.wait(retry, retryAfterMs, anySignal(signal, opts.stopBeforeSend), opts.slot);
      return RETRY;
    }
    if (!opts.didItLand) return GIVE_UP;
    // The wait first, then the question: the service had the time it asked for, and the uploads
    // refused together meanwhile can be settled by one look (src/backends/project/landed.ts).
    const since = performance.now();
    await this.wait(retry, retryAfterMs, anySignal(signal, opts.stopBeforeSend), opts.slot);
    const landed = await this.askIfLanded(opts.didItLand, since, retry.method, retry.path, opts.slot);
    return landed !== undefined ? { landed } : RETRY;
  }

  private async wait(
    retry: { method: string; path: string; attempt: number; status?: number; code?: string | undefined },
    retryAfterMs: number | undefined,
    signal: AbortSignal | undefined,
    slot: Slot | undefined,
  ): Promise<void> {
    // Retry-After is waited in full when refusals persist (a limit is paced, or the last four
    // answers were all refusals); a refusal amid answers looks like the noise of a busy service,
    // and the ordinary backoff, growing with each attempt, serves it (src/api/pacing.ts).
    const persisting = !this.pacer.unlimited;
    const delayMs = nextDelay(retry.attempt, persisting ? retryAfterMs : undefined, this.retry, this.random, retry.status === 429);
    const info: RetryInfo = { method: retry.method, path: retry.path, attempt: retry.attempt, delayMs, mark: retry.status !== undefined ? markOfStatus(retry.status) : 'transient', serverAsked: persisting && retryAfterMs !== undefined };
    if (retry.status !== undefined) info.status = retry.status;
    if (retry.code !== undefined) info.code = retry.code;
    this.logger.debug(info, 'retrying');
    this.onRetry?.(info);
    this.stats.retries++;
    if (info.mark === 'throttled') this.stats.throttleWaitMs += delayMs;
    // The wait needs no worker: the slot goes to another item meanwhile.
    await waitOutsideSlot(slot, () => sleep(delayMs, signal));
  }

  private async askIfLanded<T>(didItLand: (since: number) => Promise<T | undefined>, failedAt: number, method: string, path: string, slot: Slot | undefined): Promise<T | undefined> {
    // A request that took effect shows in lists only up to the listing lag later: the look that
    // decides "it did not land" begins no sooner than that after the failure (src/api/listed.ts).
    const since = listedInstant(this.listingLag, failedAt);
    if (since > performance.now()) await waitOutsideSlot(slot, () => listedAfter(this.listingLag, failedAt));
    const landed = await didItLand(since);
    this.logger.info({ method, path, landed: landed !== undefined }, 'checked whether an interrupted request took effect');
    return landed;
  }

  private headers(
    token: string | undefined,
    spec: RequestSpec,
    multipart: MultipartBody | undefined,
    kind: ResponseKind,
    extra: Record<string, string> | undefined,
  ): Record<string, string> {
    const h: Record<string, string> = {
      'user-agent': this.userAgent,
      accept: kind === 'json' ? 'application/json' : '*/*',
      ...extra,
    };
    if (token) h.authorization = `Bearer ${token}`;
    if (spec.json !== undefined) h['content-type'] = 'application/json';
    if (multipart) {
      h['content-type'] = multipart.contentType;
      h['content-length'] = String(multipart.length);
    }
    return h;
  }

  private async decode(res: Dispatcher.ResponseData<unknown>, kind: ResponseKind, method: string, path: string, tap?: BulkTap): Promise<unknown> {
    if (kind === 'stream') {
      const drain = tap?.drainer(res.body);
      return { status: res.statusCode, headers: res.headers, body: res.body, ...(drain ? { drain } : {}) };
    }
    const text = await bodyText(res.body);
    if (kind === 'text') return text;
    if (text.trim() === '') return undefined;
    try {
      return JSON.parse(text);
    } catch {
      // The document endpoints may answer text/plain; it still holds JSON when it is a resource.
      throw new FerryError(`${method} ${path} answered ${res.statusCode} with a body that is not JSON: ${text.slice(0, 200)}`);
    }
  }

  private classify(
    err: unknown,
    method: string,
    url: string,
    timeoutMs: number,
    deadlineMs: number | undefined,
    callerSignal: AbortSignal | undefined,
    deadline: AbortSignal | undefined,
  ): Error {
    if (err instanceof FerryError) return err;
    if (callerSignal?.aborted) return new AbortedError(`${method} ${url} was cancelled`, { cause: err });
    if (deadline?.aborted) return new TimeoutError(method, url, deadlineMs ?? 0, 'deadline', err);
    const code = errorCode(err);
    if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
      return new TimeoutError(method, url, timeoutMs, 'request', err);
    }
    return new ConnectionError(method, url, err, !provesNotSent(err));
  }
}

function anySignal(...signals: (AbortSignal | undefined)[]): AbortSignal | undefined {
  const present = signals.filter((s): s is AbortSignal => s !== undefined);
  if (present.length <= 1) return present[0];
  return AbortSignal.any(present);
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * A whole answer's text. One made of ASCII alone (most JSON answers: a page whose names are all
 * ASCII) is read as one-byte text, which takes about half the time of
 * UTF-8 decoding (a listing page of 1,000 documents, 1.7 MB: 2.7 against 6.3 ms); any other as
 * UTF-8, a leading byte-order mark dropped, as undici's text() does.
 */
async function bodyText(body: Dispatcher.ResponseData['body']): Promise<string> {
  const bytes = Buffer.from(await body.arrayBuffer());
  if (isAscii(bytes)) return bytes.toString('latin1');
  const text = bytes.toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** Error bodies are small; anything past 64 KiB is dropped rather than buffered. */
async function readSmall(body: Readable & { text(): Promise<string> }): Promise<string> {
  let out = '';
  for await (const chunk of body) {
    if (out.length < 65_536) out += (chunk as Buffer).toString('utf8');
  }
  return out;
}

function parseProblem(text: string): ProblemDetails | undefined {
  if (!text.trim().startsWith('{')) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && ('title' in parsed || 'detail' in parsed || 'status' in parsed || 'type' in parsed)) {
      return parsed as ProblemDetails;
    }
  } catch {
    /* not JSON: reported as the raw body */
  }
  return undefined;
}

