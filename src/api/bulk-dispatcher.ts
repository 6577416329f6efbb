// A dispatcher for large bodies: over plain http (a document's content from the emulator, or from a
// service behind a proxy that ends TLS) the response is read from its socket straight into blocks
// of 1 MiB, with one buffer reused for every read (Node's `onread`), and handed on a block at a
// time; large uploads, over http or https, are sent from reused buffers (below).
//
// Why by hand: undici, like node:http, reads a socket 64 KiB at a time into a fresh buffer and
// passes each through its parser and its body stream. Measured here on one 512 MiB download over
// loopback: ~75 us of CPU per 64 KiB, 1.9-2.1 s for a bare undici pipe to a file, where the same
// socket read with `onread` takes 0.36-0.45 s and curl 0.8 s. No package on npm offers an HTTP
// client over `onread`, and Node's TLS does not honour it (measured: 16 KiB records either way), so
// https stays with undici, where decryption costs more than the reads.
//
// Its scope is narrow: GET over http, one connection per request (`connection: close`, so the body
// ends at Content-Length or with the connection), handed to the caller's undici handler exactly as
// undici's own client would (onConnect, onHeaders, onData with backpressure, onComplete, onError),
// with undici's own error classes so that retries and timeouts read the same. A GET answered with
// chunked transfer coding or a 1xx goes to the dispatcher it wraps; so does any other request.
//
// Uploads the same way: a POST or PUT whose body is a BulkBody (a multipart body whose files are on
// disk) is sent from three reused buffers filled by synchronous reads, each filled again once the
// socket has taken it. Measured on 1.5 GiB: undici writing a file stream's fresh 256 KiB buffers,
// read in the thread pool, took 3.4-3.9 s of CPU; this loop 2.0-2.1 s, its sha256 included (curl
// 1.0-1.5 s without one). Where cores are free the sha256 is taken on a thread of its own
// (content-hash.ts), reading the same buffers. Over https too, for a body of TLS_SEND_MIN or more
// (the real service's case), on a TLS connection verified as undici's is. Its answer is short: a
// 1xx is passed over and a chunked one decoded.
//
// A caller that writes the body at once (a file) can take it from the read buffer itself (a
// BulkTap given as the request's `opaque`, then `drain`): no block is made at all. Measured on one
// 1.5 GiB pull: a synchronous write from the reused read buffer took 0.6 s of system time where
// writes of fresh blocks from the thread pool took 1.9-3.2 s (and reused blocks written from it as
// much), as curl's loop of read and write does.
import { connect, isIP, type Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { connect as connectTls, type ConnectionOptions } from 'node:tls';
import type { Dispatcher } from 'undici';
import { Dispatcher as DispatcherBase, errors } from './undici.js';
import type { BodyReader } from './multipart.js';

const BLOCK = 1024 * 1024;
/**
 * Uploads over https from this size on go by the bulk sender too: a connection of its own costs a
 * TLS handshake (and, to a distant service, round trips) that only a large body repays. Measured
 * by hand, 1.5 GiB to a local https receiver from one core: undici with a file stream 3.2-4.0 s of
 * CPU, the same loop over TLS 2.7-3.0 s (curl -F 1.9-2.1 s, with no hash).
 */
const TLS_SEND_MIN = 8 * 1024 * 1024;
/** The most a response's status line and headers may take. */
const HEAD_MAX = 64 * 1024;
const HEAD_END = Buffer.from('\r\n\r\n');

type LegacyHandler = Dispatcher.DispatchHandler & {
  onConnect(abort: (err?: Error) => void): void;
  onHeaders(status: number, rawHeaders: Buffer[], resume: () => void, statusText: string): boolean | void;
  onData(chunk: Buffer): boolean | void;
  onComplete(trailers: Buffer[]): void;
  onError(err: Error): void;
};

function isLegacy(handler: Dispatcher.DispatchHandler): handler is LegacyHandler {
  const h = handler as Partial<LegacyHandler>;
  return typeof h.onConnect === 'function' && typeof h.onHeaders === 'function' && typeof h.onData === 'function' && typeof h.onComplete === 'function' && typeof h.onError === 'function';
}

/** Bytes of a body as they arrive, valid only during the call: written or copied before it returns. */
export type BodySink = (bytes: Buffer) => void;

/**
 * Given as a request's `opaque`: learns the bulk reader the request went to, so that the caller can
 * take the body from it (drain). A request that went elsewhere leaves it empty.
 */
export class BulkTap {
  reader: { drain(body: Readable, sink: BodySink): Promise<void> } | undefined;

  /**
   * The body's bytes handed to `sink` as they arrive, in order, instead of through `body`: what
   * `body` holds already first. Resolves when the body has ended; a sink that throws ends the request
   * with its error. Undefined when the request was not read by the bulk reader.
   */
  drainer(body: Readable): ((sink: BodySink) => Promise<void>) | undefined {
    const reader = this.reader;
    return reader ? (sink) => reader.drain(body, sink) : undefined;
  }
}

/**
 * A request body the bulk sender reads itself, synchronously into three reused buffers, each filled
 * again only once the socket has taken it (as curl's loop of read and write does); to any other
 * dispatcher (https, a method it does not send) a stream. Either way once: one per attempt.
 */
export class BulkBody {
  private stream: Readable | undefined;
  private reading: BodyReader | undefined;

  constructor(
    readonly length: number,
    private readonly makeReader: () => BodyReader,
    private readonly makeStream: () => Readable,
  ) {}

  reader(): BodyReader {
    this.reading = this.makeReader();
    return this.reading;
  }

  readable(): Readable {
    this.stream = this.makeStream();
    return this.stream;
  }

  /** What the attempt did not send is let go of: its file closed. */
  destroy(): void {
    this.stream?.destroy();
    this.reading?.close();
  }
}

/** What a TLS connection of the bulk sender's trusts: the CAs the client was given, else Node's. */
export interface BulkTls {
  ca?: string | Buffer | (string | Buffer)[] | undefined;
}

export class BulkDispatcher extends DispatcherBase {
  private readonly open = new Set<Socket>();

  constructor(
    private readonly inner: Dispatcher,
    private readonly tls: BulkTls = {},
  ) {
    super();
  }

  override dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const origin = new URL(String(opts.origin));
    const body = opts.body;
    if (body instanceof BulkBody) {
      const sends = origin.protocol === 'http:' || (origin.protocol === 'https:' && body.length >= TLS_SEND_MIN);
      if ((opts.method !== 'POST' && opts.method !== 'PUT') || !sends || !isLegacy(handler)) return this.inner.dispatch({ ...opts, body: body.readable() }, handler);
      new BulkExchange(origin, opts, handler, this.open, undefined, body, this.tls).start();
      return true;
    }
    if (opts.method !== 'GET' || origin.protocol !== 'http:' || (body !== undefined && body !== null) || !isLegacy(handler)) return this.inner.dispatch(opts, handler);
    new BulkExchange(origin, opts, handler, this.open, () => this.inner.dispatch(opts, handler)).start();
    return true;
  }

  override close(): Promise<void>;
  override close(callback: () => void): void;
  override close(callback?: () => void): Promise<void> | void {
    // Its connections end with their responses; the wrapped dispatcher is its owner's to close.
    if (callback) return callback();
    return Promise.resolve();
  }

  override destroy(): Promise<void>;
  override destroy(err: Error | null): Promise<void>;
  override destroy(callback: () => void): void;
  override destroy(err: Error | null, callback: () => void): void;
  override destroy(a?: Error | null | (() => void), b?: () => void): Promise<void> | void {
    for (const socket of this.open) socket.destroy();
    this.open.clear();
    const callback = typeof a === 'function' ? a : b;
    if (callback) return callback();
    return Promise.resolve();
  }
}

/** A response to a request with a body (which cannot go elsewhere) sent chunked: read whole, up to this. */
const CHUNKED_MAX = 16 * 1024 * 1024;

/**
 * One request on its own connection: its body sent (when it has one) from reused buffers, then the
 * response's head, body blocks and end.
 */
class BulkExchange {
  private socket: Socket | undefined;
  /** The request body's reader while it is being sent; its buffers free to fill. */
  private sending: BodyReader | undefined;
  private spare: Buffer[] = [];
  private sent = 0;
  /** A chunked response to a request with a body: its raw bytes, decoded at the end. */
  private chunked: Buffer[] | undefined;
  private chunkedBytes = 0;
  private head: Buffer = Buffer.alloc(0);
  private phase: 'head' | 'body' | 'done' = 'head';
  private block = Buffer.allocUnsafe(BLOCK);
  private filled = 0;
  /** Body bytes still to come; null: until the connection ends. */
  private remaining: number | null = null;
  private paused = false;
  /** Where the body goes once a caller drains it, instead of into blocks. */
  private sink: BodySink | undefined;
  private outcome: { error?: Error } | undefined;
  private drained: ((error?: Error) => void) | undefined;

  constructor(
    private readonly origin: URL,
    private readonly opts: Dispatcher.DispatchOptions,
    private readonly handler: LegacyHandler,
    private readonly open: Set<Socket>,
    /** The same request through the wrapped dispatcher; only for one without a body (safe to send again). */
    private readonly elsewhere: (() => void) | undefined,
    private readonly sendBody?: BulkBody,
    private readonly tls: BulkTls = {},
  ) {}

  start(): void {
    let request: string;
    try {
      request = this.requestHead();
    } catch (err) {
      this.handler.onError(err as Error);
      return;
    }
    const host = this.origin.hostname.replace(/^\[|\]$/g, '');
    const secure = this.origin.protocol === 'https:';
    const socket = secure
      ? this.connectTls(host)
      : connect({
          host,
          port: Number(this.origin.port || 80),
          // A request with a body has a short answer: its reads need no block of their own.
          onread: { buffer: Buffer.allocUnsafe(this.sendBody ? HEAD_MAX : BLOCK), callback: (n: number, buf: Buffer) => this.read(buf.subarray(0, n)) },
        });
    this.socket = socket;
    this.open.add(socket);
    socket.setNoDelay(true);
    socket.setTimeout(this.opts.headersTimeout ?? 300_000);
    socket.on('timeout', () => this.fail(this.phase === 'head' ? new errors.HeadersTimeoutError() : new errors.BodyTimeoutError()));
    socket.on('error', (err) => this.fail(err));
    socket.on('end', () => this.ended());
    socket.on('close', () => {
      this.open.delete(socket);
      this.ended();
      this.fail(new errors.SocketError('other side closed'));
    });
    // Flowing, so that the end of the connection is told ('end') although no byte is read through the stream.
    socket.resume();
    // Told once connected (over TLS, once the handshake has verified the service), as undici tells
    // it: a write's fence (transport.ts) is asked with nothing left to wait for but the write itself.
    socket.once(secure ? 'secureConnect' : 'connect', () => {
      this.handler.onConnect((err) => this.fail(err ?? new errors.RequestAbortedError()));
      if (this.phase === 'done') return;
      socket.write(request);
      if (!this.sendBody) return;
      const size = Math.max(1, Math.min(BLOCK, this.sendBody.length));
      try {
        this.sending = this.sendBody.reader();
      } catch (err) {
        this.fail(err as Error);
        return;
      }
      const reader = this.sending;
      this.spare = [reader.allocate(size), reader.allocate(size), reader.allocate(size)];
      this.pump();
    });
  }

  /**
   * A TLS connection verified as undici's would be: the CAs given or Node's, the name checked
   * against the certificate, SNI for a name (never an address). Node's TLS does not honour
   * `onread`: its reads come as data events.
   */
  private connectTls(host: string): Socket {
    const options: ConnectionOptions = { host, port: Number(this.origin.port || 443), ALPNProtocols: ['http/1.1'], ...(isIP(host) ? {} : { servername: host }), ...(this.tls.ca ? { ca: this.tls.ca } : {}) };
    const socket = connectTls(options);
    socket.on('data', (bytes: Buffer) => {
      if (!this.read(bytes)) socket.pause();
    });
    return socket;
  }

  private requestHead(): string {
    if (/[\s]/.test(this.opts.path)) throw new errors.InvalidArgumentError('invalid request path');
    const lines = [`${this.opts.method} ${this.opts.path} HTTP/1.1`, `host: ${this.origin.host}`, 'connection: close'];
    if (this.sendBody) lines.push(`content-length: ${this.sendBody.length}`);
    for (const [name, value] of headerPairs(this.opts.headers)) {
      const lower = name.toLowerCase();
      if (lower === 'host' || lower === 'connection' || lower === 'content-length' || lower === 'transfer-encoding' || lower === 'expect') continue;
      if (/[\r\n]/.test(name) || /[\r\n]/.test(value)) throw new errors.InvalidArgumentError(`invalid ${name} header`);
      lines.push(`${name}: ${value}`);
    }
    return `${lines.join('\r\n')}\r\n\r\n`;
  }

  /**
   * The request body's next buffers read and written, each filled again once the socket has taken
   * it and the reader has let go of it (a sha256 taken on another thread); ends when the body is
   * whole, or when the answer comes first (a refusal before the end).
   */
  private pump(): void {
    const reader = this.sending;
    const socket = this.socket;
    const length = (this.sendBody as BulkBody).length;
    while (reader && socket && this.sending === reader && this.phase === 'head') {
      if (this.spare.length === 0 || !reader.ready(() => this.pump())) return;
      const buffer = this.spare.pop() as Buffer;
      let n: number;
      try {
        n = reader.read(buffer);
      } catch (err) {
        this.fail(err as Error);
        return;
      }
      this.sent += n;
      if (n === 0 || this.sent > length) {
        this.stopSending();
        if (this.sent !== length) this.fail(new errors.RequestContentLengthMismatchError());
        return;
      }
      // Filled again once both the socket and the reader are done with it.
      let holders = 2;
      const free = () => {
        if (--holders > 0) return;
        this.spare.push(buffer);
        this.pump();
      };
      socket.write(n === buffer.length ? buffer : buffer.subarray(0, n), (err) => {
        if (!err) free();
      });
      reader.reusable(buffer, free);
      if (this.sent === length) {
        this.stopSending();
        return;
      }
    }
  }

  private stopSending(): void {
    const reader = this.sending;
    this.sending = undefined;
    reader?.close();
  }

  /** One read from the socket (its buffer is reused after this returns); false pauses the socket. */
  private read(bytes: Buffer): boolean {
    if (this.phase === 'done') return false;
    if (this.phase === 'head') {
      this.head = Buffer.concat([this.head, bytes]);
      for (;;) {
        const end = this.head.indexOf(HEAD_END);
        if (end < 0) {
          if (this.head.length > HEAD_MAX) this.fail(new errors.HeadersOverflowError());
          return true;
        }
        const rest = this.head.subarray(end + HEAD_END.length);
        const read = this.headers(this.head.subarray(0, end));
        if (read === 'interim') {
          this.head = Buffer.from(rest);
          continue;
        }
        if (!read) return false;
        this.head = Buffer.alloc(0);
        return this.body(rest);
      }
    }
    return this.body(bytes);
  }

  /**
   * The status and headers parsed and handed on; false when the request went elsewhere or failed;
   * 'interim' for a 1xx to a request with a body, passed over.
   */
  private headers(head: Buffer): boolean | 'interim' {
    const lines = head.toString('latin1').split('\r\n');
    const status = /^HTTP\/1\.[01] (\d{3})(?: (.*))?$/.exec(lines[0] ?? '');
    if (!status) {
      this.fail(new errors.ResponseError('not an HTTP/1.1 status line', 0, { headers: {}, body: null }));
      return false;
    }
    const code = Number(status[1]);
    const raw: Buffer[] = [];
    let length: string | undefined;
    let coded = false;
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      const name = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      const lower = name.toLowerCase();
      if (lower === 'content-length') length = value;
      if (lower === 'transfer-encoding') coded = true;
      raw.push(Buffer.from(name, 'latin1'), Buffer.from(value, 'latin1'));
    }
    if ((code < 200 || coded) && this.elsewhere) {
      // Not what this reader reads: the same GET through the wrapped dispatcher (safe to send again).
      this.phase = 'done';
      this.socket?.destroy();
      this.elsewhere();
      return false;
    }
    // A request with a body is never sent twice: a 1xx (100 Continue) is passed over, a chunked answer read whole.
    if (code < 200) return 'interim';
    // The answer ends the sending: the service has decided (a refusal before the end of the body).
    this.stopSending();
    if (coded) {
      this.chunked = [];
      length = undefined;
    }
    if (length !== undefined) {
      if (!/^\d+$/.test(length)) {
        this.fail(new errors.ResponseError(`invalid content-length ${length}`, code, { headers: {}, body: null }));
        return false;
      }
      this.remaining = Number(length);
    }
    this.phase = 'body';
    const tap = (this.opts as { opaque?: unknown }).opaque;
    if (tap instanceof BulkTap) tap.reader = this;
    this.socket?.setTimeout(this.opts.bodyTimeout ?? 300_000);
    this.handler.onHeaders(code, raw, () => this.resume(), status[2] ?? '');
    if (this.remaining === 0) this.complete();
    return this.phase === 'body';
  }

  /** Body bytes copied into the block; each full block handed on. */
  private body(bytes: Buffer): boolean {
    if (this.sink) return this.toSink(bytes);
    if (this.chunked) {
      this.chunkedBytes += bytes.length;
      if (this.chunkedBytes > CHUNKED_MAX) {
        this.fail(new errors.ResponseError(`a chunked answer of more than ${CHUNKED_MAX} bytes to a ${this.opts.method}`, 0, { headers: {}, body: null }));
        return false;
      }
      this.chunked.push(Buffer.from(bytes));
      return true;
    }
    let at = 0;
    while (at < bytes.length && this.phase === 'body') {
      const want = this.remaining === null ? BLOCK - this.filled : Math.min(BLOCK - this.filled, this.remaining);
      const n = Math.min(want, bytes.length - at);
      bytes.copy(this.block, this.filled, at, at + n);
      this.filled += n;
      at += n;
      if (this.remaining !== null) this.remaining -= n;
      if (this.remaining === 0) {
        this.flush();
        this.complete();
        return false;
      }
      if (this.filled === BLOCK && !this.flush()) {
        this.paused = true;
        // The reader's wait is no silence of the service's (a slow disk, --bwlimit).
        this.socket?.setTimeout(0);
      }
    }
    // Bytes past the body's length on a connection that closes after it: none are expected; dropped.
    return !this.paused;
  }

  /** Body bytes handed to the sink from the read buffer itself; false once the body is whole or failed. */
  private toSink(bytes: Buffer): boolean {
    const n = this.remaining === null ? bytes.length : Math.min(bytes.length, this.remaining);
    try {
      if (n > 0) (this.sink as BodySink)(n === bytes.length ? bytes : bytes.subarray(0, n));
    } catch (err) {
      this.fail(err as Error);
      return false;
    }
    if (this.remaining !== null) this.remaining -= n;
    if (this.remaining === 0) {
      this.complete();
      return false;
    }
    return true;
  }

  /** See BulkTap.drainer. */
  drain(body: Readable, sink: BodySink): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const finish = (error?: Error) => (error ? reject(error) : resolve());
      if (this.sink) return reject(new Error('this body is drained already'));
      // Its failure is this promise's; the stream, read by nobody now, must not throw it again.
      body.on('error', () => undefined);
      try {
        // Blocks handed on before the caller asked, then the one being filled, then every read.
        for (let held = body.read() as Buffer | null; held !== null; held = body.read() as Buffer | null) sink(held);
        this.sink = sink;
        if (this.phase === 'body' && this.filled > 0) sink(this.block.subarray(0, this.filled));
      } catch (err) {
        this.fail(err as Error);
        return reject(err as Error);
      }
      this.filled = 0;
      if (this.outcome) return finish(this.outcome.error);
      this.drained = finish;
      this.resume();
    });
  }

  /** The block handed on; false when the reader asks for a pause. */
  private flush(): boolean {
    if (this.filled === 0) return true;
    const full = this.filled === BLOCK ? this.block : this.block.subarray(0, this.filled);
    this.block = Buffer.allocUnsafe(BLOCK);
    this.filled = 0;
    return this.handler.onData(full) !== false;
  }

  private resume(): void {
    if (!this.paused || this.phase !== 'body') return;
    this.paused = false;
    this.socket?.setTimeout(this.opts.bodyTimeout ?? 300_000);
    this.socket?.resume();
  }

  private ended(): void {
    if (this.phase !== 'body') return;
    if (this.chunked) {
      const decoded = dechunk(Buffer.concat(this.chunked));
      if (!decoded) {
        this.fail(new errors.ResponseError('a chunked answer cut short or malformed', 0, { headers: {}, body: null }));
        return;
      }
      this.chunked = undefined;
      if (decoded.length > 0) this.handler.onData(decoded);
      this.complete();
      return;
    }
    if (this.remaining !== null) {
      this.fail(new errors.SocketError('other side closed'));
      return;
    }
    this.flush();
    this.complete();
  }

  private complete(): void {
    if (this.phase === 'done') return;
    this.phase = 'done';
    this.stopSending();
    this.socket?.destroy();
    this.outcome = {};
    this.drained?.();
    this.handler.onComplete([]);
  }

  private fail(err: Error): void {
    if (this.phase === 'done') return;
    this.phase = 'done';
    this.stopSending();
    this.socket?.destroy();
    this.outcome = { error: err };
    this.drained?.(err);
    this.handler.onError(err);
  }
}

/**
 * A chunked body decoded (RFC 9112 7.1): the chunks' data joined, extensions and trailers passed
 * over; undefined when it is malformed or ends before its last chunk.
 */
export function dechunk(raw: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = raw.indexOf('\r\n', at);
    if (eol < 0) return undefined;
    const size = /^([0-9a-fA-F]+)[ \t]*(?:;.*)?$/.exec(raw.toString('latin1', at, eol));
    if (!size) return undefined;
    const n = parseInt(size[1] as string, 16);
    at = eol + 2;
    if (n === 0) return Buffer.concat(parts);
    if (at + n + 2 > raw.length || raw[at + n] !== 13 || raw[at + n + 1] !== 10) return undefined;
    parts.push(raw.subarray(at, at + n));
    at += n + 2;
  }
}

/** The request's headers as name and value pairs, whichever of undici's shapes they come in. */
function* headerPairs(headers: Dispatcher.DispatchOptions['headers']): Iterable<[string, string]> {
  if (!headers) return;
  if (Array.isArray(headers)) {
    for (let i = 0; i + 1 < headers.length; i += 2) yield [String(headers[i]), String(headers[i + 1])];
    return;
  }
  const entries = typeof (headers as Iterable<unknown>)[Symbol.iterator] === 'function' ? (headers as Iterable<[string, string | string[] | undefined]>) : Object.entries(headers as Record<string, string | string[] | undefined>);
  for (const [name, value] of entries) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) yield [name, String(v)];
  }
}
