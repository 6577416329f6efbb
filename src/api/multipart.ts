// multipart/form-data bodies streamed from disk or from a Readable, never held in memory.
// Written by hand rather than with undici's FormData because uploads need a known
// Content-Length up front, a body that can be re-opened for a retry when it comes from a
// path, and Readable sources that FormData (Blob-only) cannot take without buffering.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { FerryError } from './errors.js';

/** A file to upload: a path on disk, or a Readable whose size is known in advance. */
export type FileInput =
  | { path: string; filename?: string; contentType?: string }
  | { stream: Readable; size: number; filename: string; contentType?: string };

export type MultipartPart =
  | { name: string; value: string }
  | { name: string; file: FileInput };

export interface MultipartBody {
  contentType: string;
  length: number;
  /** False when a part is a one-shot Readable: such a body cannot be sent twice. */
  replayable: boolean;
  /** A fresh stream of the whole body; call once per attempt. */
  open(): AsyncIterable<Uint8Array>;
}

interface PreparedFile {
  header: Buffer;
  size: number;
  open(): AsyncIterable<Uint8Array>;
}

const CRLF = '\r\n';

export async function buildMultipart(parts: readonly MultipartPart[]): Promise<MultipartBody> {
  const boundary = `----ferry${randomBytes(12).toString('hex')}`;
  const chunks: (Buffer | PreparedFile)[] = [];
  let replayable = true;
  for (const part of parts) {
    if ('value' in part) {
      chunks.push(
        Buffer.from(`--${boundary}${CRLF}Content-Disposition: form-data; name="${escapeName(part.name)}"${CRLF}${CRLF}${part.value}${CRLF}`),
      );
      continue;
    }
    const prepared = await prepareFile(part.name, part.file, boundary);
    if ('stream' in part.file) replayable = false;
    chunks.push(prepared, Buffer.from(CRLF));
  }
  chunks.push(Buffer.from(`--${boundary}--${CRLF}`));

  const length = chunks.reduce((n, c) => n + (Buffer.isBuffer(c) ? c.length : c.header.length + c.size), 0);
  let opened = false;
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    length,
    replayable,
    open() {
      if (opened && !replayable) throw new FerryError('this upload body came from a stream and was already sent once');
      opened = true;
      return concat(chunks);
    },
  };
}

async function* concat(chunks: readonly (Buffer | PreparedFile)[]): AsyncIterable<Uint8Array> {
  for (const c of chunks) {
    if (Buffer.isBuffer(c)) {
      yield c;
    } else {
      yield c.header;
      yield* c.open();
    }
  }
}

async function prepareFile(field: string, file: FileInput, boundary: string): Promise<PreparedFile> {
  const filename = file.filename ?? ('path' in file ? basename(file.path) : 'file');
  const type = file.contentType ?? 'application/octet-stream';
  const header = Buffer.from(
    `--${boundary}${CRLF}Content-Disposition: form-data; name="${escapeName(field)}"; filename="${escapeName(filename)}"${CRLF}` +
      `Content-Type: ${type}${CRLF}${CRLF}`,
  );
  if ('path' in file) {
    const { size } = await stat(file.path);
    return { header, size, open: () => exactly(createReadStream(file.path, { end: Math.max(0, size - 1), highWaterMark: 256 * 1024 }), size, file.path, size === 0) };
  }
  const { stream, size } = file;
  return { header, size, open: () => exactly(stream, size, filename, size === 0) };
}

/** Passes through exactly `size` bytes, failing loudly if the source is shorter or longer. */
async function* exactly(source: AsyncIterable<unknown>, size: number, label: string, empty: boolean): AsyncIterable<Uint8Array> {
  let seen = 0;
  if (!empty) {
    for await (const chunk of source) {
      const buf = chunk as Buffer;
      seen += buf.length;
      if (seen > size) throw new FerryError(`${label} grew while it was being uploaded (expected ${size} bytes)`);
      yield buf;
    }
  } else if ('destroy' in (source as object)) {
    (source as Readable).destroy();
  }
  if (seen < size) throw new FerryError(`${label} shrank while it was being uploaded (expected ${size} bytes, read ${seen})`);
}

/** Quotes a header parameter the way browsers do (WHATWG multipart/form-data encoding). */
function escapeName(value: string): string {
  return value.replace(/\r/g, '%0D').replace(/\n/g, '%0A').replace(/"/g, '%22');
}
