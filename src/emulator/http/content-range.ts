// A stored blob sent as a download: whole (200), or the one range a `Range: bytes=…` asks for
// (206 with its Content-Range), as RFC 9110 section 14 says, unless the emulator runs with
// `--range ignored` (then always 200 and the whole body, as services that ignore Range answer).
// `If-Range` with another entity tag, several ranges, or a header it cannot read: the whole body.
// One range past the end: 416 with `Content-Range: bytes */size`. Written by hand: fastify's
// @fastify/send serves files from a root folder, and the blobs may be held in memory.
import { Transform } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { BlobStore, EmulatorModes } from '../context.js';

export interface Served {
  key: string;
  size: number;
  /** The content's identity: a new version of a document has another. */
  etag: string;
  lastModified?: Date | undefined;
  type: string;
}

/** The byte range asked for, 'whole' for the whole body, or 'unsatisfiable'. */
export function askedRange(header: string | undefined, size: number): { start: number; end: number } | 'whole' | 'unsatisfiable' {
  if (header === undefined) return 'whole';
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return 'whole';
  if (m[1] === '') {
    // The last N bytes.
    const n = Number(m[2]);
    if (n === 0) return 'unsatisfiable';
    return { start: Math.max(size - n, 0), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size) return 'unsatisfiable';
  if (end < start) return 'whole';
  return { start, end };
}

/**
 * The body with its first byte flipped (the `corrupt` fault): the same length and status. Each chunk
 * is copied, since a stored file is read into buffers reused once written (served-file.ts).
 */
function corrupted(body: NodeJS.ReadableStream): Transform {
  let flipped = false;
  const out = new Transform({
    transform(chunk: Buffer, _enc, done) {
      const copy = Buffer.from(chunk);
      if (!flipped && copy.length > 0) {
        copy[0] = (copy[0] as number) ^ 0xff;
        flipped = true;
      }
      done(null, copy);
    },
  });
  body.on('error', (err: Error) => out.destroy(err));
  return body.pipe(out);
}

/** `corrupt`: the body served (whole or its range) with one byte flipped, as a faulty proxy would. */
export function sendContent(req: FastifyRequest, reply: FastifyReply, blobs: BlobStore, modes: Pick<EmulatorModes, 'range'>, served: Served, stored: NodeJS.ReadableStream, corrupt = false): FastifyReply {
  const whole = corrupt ? corrupted(stored) : stored;
  reply.type(served.type).header('etag', served.etag);
  if (served.lastModified) reply.header('last-modified', served.lastModified.toUTCString());
  if (modes.range === 'ignored') return reply.header('content-length', String(served.size)).send(whole);
  reply.header('accept-ranges', 'bytes');
  const ifRange = req.headers['if-range'];
  const asked = ifRange !== undefined && ifRange !== served.etag ? 'whole' : askedRange(req.headers.range, served.size);
  if (asked === 'whole') return reply.header('content-length', String(served.size)).send(whole);
  (stored as { destroy?: () => void }).destroy?.();
  if (asked === 'unsatisfiable') return reply.code(416).header('content-range', `bytes */${served.size}`).header('content-length', '0').send('');
  const held = blobs.get(served.key, asked);
  const part = corrupt && held ? corrupted(held) : held;
  return reply
    .code(206)
    .header('content-range', `bytes ${asked.start}-${asked.end}/${served.size}`)
    .header('content-length', String(asked.end - asked.start + 1))
    .send(part);
}
