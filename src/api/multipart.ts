// multipart/form-data bodies streamed from disk or from a Readable, never held in memory.
// Written by hand rather than with undici's FormData because uploads need a known
// Content-Length up front, a body that can be re-opened for a retry when it comes from a
// path, and Readable sources that FormData (Blob-only) cannot take without buffering.
import { closeSync, createReadStream, openSync, readSync } from 'node:fs';
import { open as openFile, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { contentHash, hashableBuffer, hashesElsewhere, type ContentHash } from './content-hash.js';
import { FerryError } from './errors.js';

/**
 * A file to upload: a path on disk, a function that opens the content afresh (both can be sent
 * again on a retry), or a one-shot Readable. Sizes must be known in advance.
 */
export type FileInput =
  | { path: string; filename?: string; contentType?: string; /** Known size: saves a stat; a changed file is still caught. */ size?: number }
  | { open: () => Readable; size: number; filename: string; contentType?: string }
  | { stream: Readable; size: number; filename: string; contentType?: string };

export type MultipartPart =
  | { name: string; value: string }
  | { name: string; file: FileInput }
  /**
   * A text field made from the sha256 of the file part before it, hashed as it goes by: the file
   * is read once. Its text must be as long for any digest (the body's length is sent first).
   */
  | { name: string; fromSha256: (sha256: string) => string };

export interface MultipartBody {
  contentType: string;
  length: number;
  /** False when a part is a one-shot Readable: such a body cannot be sent twice. */
  replayable: boolean;
  /** A fresh stream of the whole body; call once per attempt. */
  open(): AsyncIterable<Uint8Array>;
  /** The whole body as one buffer: only for bodies up to SMALL_BODY bytes (one read chunk's worth). */
  materialize(): Promise<Buffer>;
  /**
   * The whole body read synchronously into the caller's buffers (the bulk sender's, bulk-dispatcher.ts);
   * undefined unless every file part is a path on disk. Like `open`, once per attempt. A file's
   * sha256 is taken on a thread of its own where `hashElsewhere` (content-hash.ts decides by default).
   */
  reader?(hashElsewhere?: boolean): BodyReader;
}

/**
 * A body read synchronously, on the calling thread, into buffers its caller reuses. A file's sha256
 * may be taken on another thread (content-hash.ts): a buffer read into is then written again only
 * once `reusable` says so, and a field made from the digest waits for it (`ready`).
 */
export interface BodyReader {
  /** A buffer of `size` bytes to read into: shared memory where another thread hashes it. */
  allocate(size: number): Buffer;
  /** Calls `then` when the next bytes can be read: true if they can now (then is not called). */
  ready(then: () => void): boolean;
  /** Fills `into` from its start with the next bytes; 0 once the body is whole. Throws what `open` would. */
  read(into: Buffer): number;
  /** Calls `then` once `into`, just read into, may be written again. */
  reusable(into: Buffer, then: () => void): void;
  /** Lets go of what it holds open; safe to call twice. */
  close(): void;
}

/**
 * Bodies up to this size are read whole, like a single stream chunk: many small files are the
 * common bulk case, and one buffer per request is far cheaper than stream machinery per file.
 */
export const SMALL_BODY = 256 * 1024;

interface PreparedFile {
  header: Buffer;
  size: number;
  /** Set for a file on disk: what a synchronous reader reads. */
  path?: string;
  open(): AsyncIterable<Uint8Array>;
  read(): Promise<Buffer>;
  /** A field after it is made from its sha256. */
  hashed?: boolean;
}

/** The digest a field made from the content's sha256 is first called with: its length measured, before the content is read. */
export const MEASURING_DIGEST = '0'.repeat(64);

/** A field made from the sha256 of the file before it. */
interface DigestField {
  head: Buffer;
  make: (sha256: string) => string;
  /** The bytes of its text, the same for any digest. */
  textLength: number;
}

type Chunk = Buffer | PreparedFile | DigestField;

const isFile = (c: Chunk): c is PreparedFile => !Buffer.isBuffer(c) && 'open' in c;

/** The text of a field made from a digest, held to the length its body was counted at. */
function digestText(field: DigestField, sha256: string): Buffer {
  const text = Buffer.from(field.make(sha256));
  if (text.length !== field.textLength) throw new FerryError(`a field made from the content's sha256 is ${text.length} bytes, not the ${field.textLength} counted`);
  return text;
}

const CRLF = '\r\n';
// Unique per body without a random draw per request: a random prefix per process and a counter.
// As long as RFC 2046 allows (70; ASP.NET Core refuses more than 128): a server finds the
// delimiter with a skip search (Boyer-Moore-Horspool in busboy, through Node's indexOf), whose
// steps through random content are as long as the delimiter. At 26 characters, that search took
// 0.29 s of the emulator's CPU per 1.5 GiB received (perf; with curl's 40, 0.15 s).
const BOUNDARY_LENGTH = 70;
const BOUNDARY_COUNTER_DIGITS = 8;
const BOUNDARY_PREFIX = `ferry${randomBytes(16).toString('hex')}`.padStart(BOUNDARY_LENGTH - BOUNDARY_COUNTER_DIGITS, '-');
let boundaryCounter = 0;

/** The next body's boundary, BOUNDARY_LENGTH characters (the counter wraps after 36^8 bodies). */
function nextBoundary(): string {
  const counter = (boundaryCounter++ % 36 ** BOUNDARY_COUNTER_DIGITS).toString(36).padStart(BOUNDARY_COUNTER_DIGITS, '0');
  return `${BOUNDARY_PREFIX}${counter}`;
}

export async function buildMultipart(parts: readonly MultipartPart[]): Promise<MultipartBody> {
  const boundary = nextBoundary();
  const chunks: Chunk[] = [];
  let replayable = true;
  for (const part of parts) {
    if ('fromSha256' in part) {
      const file = chunks.at(-2);
      if (!file || !isFile(file)) throw new FerryError(`the field ${part.name} is made from a file's sha256, and no file part comes before it`);
      file.hashed = true;
      const textLength = Buffer.byteLength(part.fromSha256(MEASURING_DIGEST));
      chunks.push({ head: Buffer.from(`--${boundary}${CRLF}Content-Disposition: form-data; name="${quoteParameter(part.name)}"${CRLF}${CRLF}`), make: part.fromSha256, textLength }, Buffer.from(CRLF));
      continue;
    }
    if ('value' in part) {
      chunks.push(
        Buffer.from(`--${boundary}${CRLF}Content-Disposition: form-data; name="${quoteParameter(part.name)}"${CRLF}${CRLF}${part.value}${CRLF}`),
      );
      continue;
    }
    const prepared = await prepareFile(part.name, part.file, boundary);
    if ('stream' in part.file) replayable = false;
    chunks.push(prepared, Buffer.from(CRLF));
  }
  chunks.push(Buffer.from(`--${boundary}--${CRLF}`));

  const length = chunks.reduce((n, c) => n + (Buffer.isBuffer(c) ? c.length : isFile(c) ? c.header.length + c.size : c.head.length + c.textLength), 0);
  let opened = false;
  const claim = () => {
    if (opened && !replayable) throw new FerryError('this upload body came from a stream and was already sent once');
    opened = true;
  };
  const fromDisk = chunks.every((c) => !isFile(c) || c.path !== undefined);
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    length,
    replayable,
    open() {
      claim();
      return concat(chunks);
    },
    ...(fromDisk
      ? {
          reader(hashElsewhere = hashesElsewhere()) {
            claim();
            return new SyncBody(chunks, hashElsewhere);
          },
        }
      : {}),
    async materialize() {
      if (length > SMALL_BODY) throw new FerryError(`a ${length}-byte body is streamed, not read whole`);
      claim();
      const parts: Buffer[] = [];
      let sha256 = '';
      for (const c of chunks) {
        if (Buffer.isBuffer(c)) parts.push(c);
        else if (isFile(c)) {
          const content = await c.read();
          if (c.hashed) sha256 = createHash('sha256').update(content).digest('hex');
          parts.push(c.header, content);
        } else parts.push(c.head, digestText(c, sha256));
      }
      return Buffer.concat(parts, length);
    },
  };
}

/** The body of one attempt: a file hashed for a field after it is hashed afresh each time. */
async function* concat(chunks: readonly Chunk[]): AsyncIterable<Uint8Array> {
  let sha256 = '';
  for (const c of chunks) {
    if (Buffer.isBuffer(c)) {
      yield c;
    } else if (isFile(c)) {
      yield c.header;
      if (!c.hashed) {
        yield* c.open();
        continue;
      }
      const hash = createHash('sha256');
      for await (const chunk of c.open()) {
        hash.update(chunk);
        yield chunk;
      }
      sha256 = hash.digest('hex');
    } else {
      yield c.head;
      yield digestText(c, sha256);
    }
  }
}

/**
 * The body of one attempt read with synchronous reads into the caller's buffers: what `concat`
 * yields, byte for byte, for a body whose files are all on disk. Reading on the sending thread into
 * reused buffers is what makes a big upload cheap: measured on 1.5 GiB, a file stream's fresh
 * buffers read in the thread pool and written through undici took 3.4-3.9 s of CPU, synchronous
 * reads into three reused buffers 2.0-2.1 s (sha256 included), curl 1.0-1.5 s.
 */
class SyncBody implements BodyReader {
  /** The body in order: a file's header is a segment of its own, before its content. */
  private readonly segments: Chunk[];
  private index = 0;
  /** Bytes of the current segment already given. */
  private at = 0;
  /** The current digest field's bytes, once made. */
  private text: Buffer | undefined;
  private fd: number | undefined;
  private hash: ContentHash | undefined;
  /** The last hashed file's digest; undefined while it is being taken. */
  private sha256: string | undefined = '';
  private failure: Error | undefined;
  private waiting: (() => void) | undefined;
  /** Buffers just read into: the bytes of each given to the hash, and whether it has let go. */
  private readonly hashing = new Map<Buffer, { pending: number; then?: () => void }>();
  private readonly shared: boolean;

  constructor(chunks: readonly Chunk[], hashElsewhere: boolean) {
    this.segments = chunks.flatMap((c): Chunk[] => (isFile(c) ? [c.header, c] : [c]));
    this.shared = hashElsewhere && this.segments.some((c) => !Buffer.isBuffer(c) && isFile(c) && c.hashed);
  }

  allocate(size: number): Buffer {
    return hashableBuffer(size, this.shared);
  }

  ready(then: () => void): boolean {
    if (this.failure || this.sha256 !== undefined || !this.atDigestField()) return true;
    this.waiting = then;
    return false;
  }

  read(into: Buffer): number {
    if (this.failure) throw this.failure;
    let filled = 0;
    while (filled < into.length && this.index < this.segments.length) {
      const segment = this.segments[this.index] as Chunk;
      if (!Buffer.isBuffer(segment) && isFile(segment)) {
        filled += this.fromFile(segment, into, filled);
        continue;
      }
      // A field made from a digest still being taken: the bytes before it go now, it when ready.
      if (!Buffer.isBuffer(segment) && this.sha256 === undefined) {
        if (filled === 0) throw new FerryError('a body was read before its digest was ready');
        break;
      }
      const bytes = Buffer.isBuffer(segment) ? segment : (this.text ??= Buffer.concat([segment.head, digestText(segment, this.sha256 as string)]));
      const n = bytes.copy(into, filled, this.at);
      filled += n;
      this.at += n;
      if (this.at === bytes.length) this.nextSegment();
    }
    return filled;
  }

  reusable(into: Buffer, then: () => void): void {
    const held = this.hashing.get(into);
    if (!held || held.pending === 0) {
      this.hashing.delete(into);
      return then();
    }
    held.then = then;
  }

  private atDigestField(): boolean {
    const segment = this.segments[this.index];
    return segment !== undefined && !Buffer.isBuffer(segment) && !isFile(segment);
  }

  private nextSegment(): void {
    this.index++;
    this.at = 0;
    this.text = undefined;
  }

  /** The next bytes of a file on disk, hashed as they go by when a field after it is made from its sha256. */
  private fromFile(file: PreparedFile, into: Buffer, offset: number): number {
    const path = file.path as string;
    try {
      if (this.fd === undefined) {
        this.fd = openSync(path, 'r');
        if (file.hashed) this.hash = contentHash(this.shared);
      }
      const want = Math.min(into.length - offset, file.size - this.at);
      const n = want > 0 ? readSync(this.fd, into, offset, want, this.at) : 0;
      if (n === 0 && this.at < file.size) throw new ContentChangedError(`${path} shrank while it was being uploaded (expected ${file.size} bytes, read ${this.at})`);
      if (this.hash && n > 0) this.hashFrom(into, offset, n);
      this.at += n;
      if (this.at === file.size) {
        if (readSync(this.fd, Buffer.allocUnsafe(1), 0, 1, file.size) > 0) throw new ContentChangedError(`${path} grew while it was being uploaded (expected ${file.size} bytes)`);
        if (this.hash) this.digestOf(this.hash);
        this.hash = undefined;
        this.closeFile();
        this.nextSegment();
      }
      return n;
    } catch (err) {
      this.close();
      if (err instanceof FerryError) throw err;
      throw new SourceReadError(path, err);
    }
  }

  private hashFrom(into: Buffer, offset: number, n: number): void {
    let held = this.hashing.get(into);
    if (!held) this.hashing.set(into, (held = { pending: 0 }));
    const h = held;
    h.pending++;
    (this.hash as ContentHash).update(into.subarray(offset, offset + n), () => {
      if (--h.pending > 0 || !h.then) return;
      this.hashing.delete(into);
      const then = h.then;
      h.then = undefined;
      then();
    });
  }

  private digestOf(hash: ContentHash): void {
    this.sha256 = undefined;
    hash.digest((result) => {
      if (typeof result === 'string') this.sha256 = result;
      else this.failure = result;
      const waiting = this.waiting;
      this.waiting = undefined;
      waiting?.();
    });
  }

  private closeFile(): void {
    if (this.fd === undefined) return;
    const fd = this.fd;
    this.fd = undefined;
    closeSync(fd);
  }

  close(): void {
    this.hash?.abandon();
    this.hash = undefined;
    this.closeFile();
  }
}

async function prepareFile(field: string, file: FileInput, boundary: string): Promise<PreparedFile> {
  const filename = file.filename ?? ('path' in file ? basename(file.path) : 'file');
  const type = file.contentType ?? 'application/octet-stream';
  const header = Buffer.from(
    `--${boundary}${CRLF}Content-Disposition: form-data; name="${quoteParameter(field)}"; filename="${quoteParameter(filename)}"${CRLF}` +
      `Content-Type: ${type}${CRLF}${CRLF}`,
  );
  if ('path' in file) {
    const { path } = file;
    const size = file.size ?? (await stat(path)).size;
    return {
      header,
      size,
      path,
      open: () => exactly(createReadStream(path, { end: Math.max(0, size - 1), highWaterMark: 256 * 1024 }), size, path, size === 0),
      read: () => readExactly(path, size),
    };
  }
  if ('open' in file) {
    const { open, size } = file;
    return { header, size, open: () => exactly(open(), size, filename, size === 0), read: () => collect(exactly(open(), size, filename, size === 0), size) };
  }
  const { stream, size } = file;
  return { header, size, open: () => exactly(stream, size, filename, size === 0), read: () => collect(exactly(stream, size, filename, size === 0), size) };
}

async function collect(source: AsyncIterable<Uint8Array>, size: number): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const chunk of source) parts.push(chunk);
  return Buffer.concat(parts, size);
}

/** One open, one read, one close: a small file costs three system calls. */
async function readExactly(path: string, size: number): Promise<Buffer> {
  let handle;
  try {
    handle = await openFile(path, 'r');
    // One byte more than expected, to notice a file that grew.
    const buffer = Buffer.allocUnsafe(size + 1);
    let filled = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
      if (filled > size) throw new ContentChangedError(`${path} grew while it was being uploaded (expected ${size} bytes)`);
    }
    if (filled < size) throw new ContentChangedError(`${path} shrank while it was being uploaded (expected ${size} bytes, read ${filled})`);
    return buffer.subarray(0, size);
  } catch (err) {
    if (err instanceof FerryError) throw err;
    throw new SourceReadError(path, err);
  } finally {
    await handle?.close();
  }
}

/** Passes through exactly `size` bytes, failing loudly if the source is shorter or longer. */
async function* exactly(source: AsyncIterable<unknown>, size: number, label: string, empty: boolean): AsyncIterable<Uint8Array> {
  let seen = 0;
  if (!empty) {
    const chunks = source[Symbol.asyncIterator]();
    let done = false;
    try {
      for (;;) {
        let next: IteratorResult<unknown>;
        try {
          next = await chunks.next();
        } catch (err) {
          done = true;
          throw new SourceReadError(label, err);
        }
        if (next.done) {
          done = true;
          break;
        }
        const buf = next.value as Buffer;
        seen += buf.length;
        if (seen > size) throw new ContentChangedError(`${label} grew while it was being uploaded (expected ${size} bytes)`);
        yield buf;
      }
    } finally {
      // An attempt that ends before the content does (an answer of 429, a reset) lets go of it: a
      // stream left unread holds its file open, and one a shared reader serves (a compressed tar's
      // cursor) would hold every entry after it.
      if (!done) await chunks.return?.();
    }
  } else if ('destroy' in (source as object)) {
    (source as Readable).destroy();
  }
  if (seen < size) throw new ContentChangedError(`${label} shrank while it was being uploaded (expected ${size} bytes, read ${seen})`);
}

/** The content to upload grew or shrank while it was read: another attempt may find it steady. */
export class ContentChangedError extends FerryError {}

/** The content to upload could not be read (vanished, unreadable): the item's fault, not the network's. */
export class SourceReadError extends FerryError {
  readonly code: string | undefined;
  constructor(label: string, cause: unknown) {
    const code = (cause as NodeJS.ErrnoException | undefined)?.code;
    super(`cannot read ${label}: ${code ?? (cause as Error)?.message ?? String(cause)}`, { cause });
    this.code = code;
  }
}

/**
 * A header parameter as an RFC 7230 quoted-string: `"` and `\\` are escaped with a backslash, every
 * other character (`%` included) goes as it is, so the service reads back exactly the name sent.
 * Browsers percent-encode `"` instead (WHATWG), which makes a name holding `%22` ambiguous; the
 * service's reading is not shown, so uploads also compare the name the service answers with
 * (see the project destination). CR, LF and NUL cannot travel in a header at all.
 */
export function quoteParameter(value: string): string {
  if (/[\r\n\0]/.test(value)) throw new UnsendableNameError(value);
  return value.replace(/["\\]/g, (c) => `\\${c}`);
}

/** A name that no multipart header can carry (it holds CR, LF or NUL): the item's fault, never retried. */
export class UnsendableNameError extends FerryError {
  constructor(value: string) {
    super(`the name ${JSON.stringify(value)} holds a line break or NUL, which no upload form can carry: rename it`);
  }
}
