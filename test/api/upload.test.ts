import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, truncate } from 'node:fs/promises';
import { once } from 'node:events';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { Readable } from 'node:stream';
import { FerryClient } from '../../src/api/index.js';
import { buildMultipart } from '../../src/api/multipart.js';
import { clientOptionsFor, json, startTestServer, type TestServer } from '../helpers/test-server.js';

const MiB = 1024 * 1024;
let dir: string;
let server: TestServer;
let client: FerryClient;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-upload-'));
  server = await startTestServer();
  client = new FerryClient(clientOptionsFor(server));
});
afterAll(async () => {
  await client.close();
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

async function writeBigFile(path: string, mib: number): Promise<string> {
  const hash = createHash('sha256');
  const out = createWriteStream(path);
  const chunk = Buffer.alloc(MiB);
  for (let i = 0; i < mib; i++) {
    chunk.fill(i % 251);
    hash.update(chunk);
    if (!out.write(chunk)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return hash.digest('hex');
}

/** Receives a multipart upload as a stream: hashes the file part without keeping it. */
function receiveUpload() {
  const received = { bytes: 0, contentLength: 0, fileSha256: '', fields: {} as Record<string, string> };
  server.handle('POST', '/projects/p1/documents', async ({ req, res }) => {
    received.contentLength = Number(req.headers['content-length']);
    const boundary = /boundary=(.+)$/.exec(String(req.headers['content-type']))![1]!;
    const hash = createHash('sha256');
    // The file part is the last part; everything between its header end and the closing
    // delimiter is file content. Hold back only the closing delimiter's length.
    const closing = Buffer.from(`\r\n--${boundary}--\r\n`);
    let head = Buffer.alloc(0);
    let inFile = false;
    let tail = Buffer.alloc(0);
    for await (const chunk of req as AsyncIterable<Buffer>) {
      received.bytes += chunk.length;
      if (!inFile) {
        head = Buffer.concat([head, chunk]);
        const fileHeader = head.indexOf('filename="');
        const end = fileHeader >= 0 ? head.indexOf('\r\n\r\n', fileHeader) : -1;
        if (end < 0) continue;
        for (const m of head.subarray(0, fileHeader).toString().matchAll(/name="([^"]+)"\r\n\r\n([^\r]*)\r\n/g)) received.fields[m[1]!] = m[2]!;
        inFile = true;
        tail = head.subarray(end + 4);
        head = Buffer.alloc(0);
      } else {
        tail = Buffer.concat([tail, chunk]);
      }
      if (tail.length > closing.length) {
        hash.update(tail.subarray(0, tail.length - closing.length));
        tail = tail.subarray(tail.length - closing.length);
      }
    }
    expect(tail.equals(closing)).toBe(true);
    received.fileSha256 = hash.digest('hex');
    json(res, 200, { name: 'big.bin', documentUploadObjectIdentifier: 'u1', size: received.bytes });
  });
  return received;
}

describe('streamed uploads', () => {
  // Memory is measured where a process can be measured: `npm run bench` (bench/bigfile.mjs) records
  // the peak RSS of a ferry process mirroring one 200 MiB file, beside its budget. Here, in a test
  // process that also runs the receiving server, heap figures count the server's garbage and move
  // with each V8's collector (24 and 26 collect later than 20): no bound here.
  it('uploads a 200 MiB file streamed from disk: every byte, its sha256, the fields', async () => {
    const path = join(dir, 'big.bin');
    const sha = await writeBigFile(path, 200);
    const received = receiveUpload();
    await client.documents.upload('p1', { path }, { documentUploadIdentifier: 'u1', ocrStrategy: 'never', metadata: { source: 'test' } });
    expect(received.bytes).toBeGreaterThan(200 * MiB);
    expect(received.bytes).toBe(received.contentLength);
    expect(received.fileSha256).toBe(sha);
    expect(received.fields).toMatchObject({ ocrStrategy: 'never', metadataJson: '{"source":"test"}' });
  });

  it('uploads from a Readable of known size', async () => {
    const received = receiveUpload();
    const data = Buffer.from('x'.repeat(100_000));
    await client.documents.upload('p1', { stream: Readable.from([data.subarray(0, 50_000), data.subarray(50_000)]), size: data.length, filename: 'r.txt' }, { documentUploadIdentifier: 'u1' });
    expect(received.fileSha256).toBe(createHash('sha256').update(data).digest('hex'));
  });

  it('refuses a Readable shorter than its declared size', async () => {
    const body = await buildMultipart([{ name: 'file', file: { stream: Readable.from([Buffer.from('abc')]), size: 10, filename: 'short.txt' } }]);
    const drain = async () => {
      for await (const _ of body.open()) {
        /* consume */
      }
    };
    await expect(drain()).rejects.toThrow(/shrank while it was being uploaded/);
  });

  it('refuses a file on disk truncated while it is being uploaded, naming it, and sends nothing short as whole', async () => {
    const path = join(dir, 'truncated.bin');
    await writeBigFile(path, 16);
    let truncated = false;
    let received = 0;
    let cutOff = false;
    let handled!: () => void;
    const served = new Promise<void>((resolve) => (handled = resolve));
    server.handle('POST', '/projects/p1/documents', async ({ req, res }) => {
      // Half a MiB in, the file is cut to 1 MiB; what the client goes on sending is read to its end.
      try {
        for await (const chunk of req as AsyncIterable<Buffer>) {
          received += chunk.length;
          if (!truncated && received > MiB / 2) {
            truncated = true;
            await truncate(path, MiB);
          }
        }
        json(res, 201, { objectIdentifier: 'never' });
      } catch (err) {
        cutOff = (err as NodeJS.ErrnoException).code === 'ECONNRESET';
      } finally {
        handled();
      }
    });
    const attempt = client.documents.upload('p1', { path }, { documentUploadIdentifier: 'u1' });
    await expect(attempt).rejects.toThrow(/truncated\.bin shrank while it was being uploaded \(expected 16777216 bytes, read \d+\)/);
    expect(truncated).toBe(true);
    // The request was cut off short of its Content-Length: the service never saw a whole body.
    await served;
    expect(cutOff).toBe(true);
    expect(received).toBeLessThan(16 * MiB);
  });

  it('computes Content-Length exactly and quotes awkward file names', async () => {
    const body = await buildMultipart([
      { name: 'ocrEngine', value: 'engineA' },
      { name: 'file', file: { stream: Readable.from([Buffer.from('hello')]), size: 5, filename: 'we"ird\\ %22name ü.txt' } },
    ]);
    const bytes = Buffer.concat((await Readable.from(body.open()).toArray()) as Buffer[]);
    expect(bytes.length).toBe(body.length);
    expect(bytes.toString()).toContain(String.raw`filename="we\"ird\\ %22name ü.txt"`);
    expect(body.replayable).toBe(false);
    // A line break or NUL cannot be in a header at all: refused, never altered.
    for (const bad of ['a\rb', 'a\nb', 'a\0b']) {
      await expect(buildMultipart([{ name: 'file', file: { stream: Readable.from([]), size: 0, filename: bad } }])).rejects.toThrow(/line break or NUL/);
    }
  });
});

describe('the boundary', () => {
  it('is 70 characters, the longest RFC 2046 allows, and new for every body', async () => {
    const bodies = await Promise.all([1, 2, 3].map(() => buildMultipart([{ name: 'ocrEngine', value: 'engineA' }])));
    const boundaries = bodies.map((b) => /^multipart\/form-data; boundary=(.+)$/.exec(b.contentType)?.[1] ?? '');
    for (const boundary of boundaries) {
      // RFC 2046 5.1.1: 1-70 of its bchars, not ending in a space (a server parses it unquoted).
      expect(boundary).toMatch(/^[0-9A-Za-z'()+_,./:=?-]{70}$/);
    }
    expect(new Set(boundaries).size).toBe(3);
  });
});

describe('a field made from the file\'s sha256, after it', () => {
  const content = Buffer.alloc(300 * 1024, 'q');
  const sha = createHash('sha256').update(content).digest('hex');
  const parts = (make: (sha256: string) => string) => [
    { name: 'ocrEngine', value: 'engineA' },
    { name: 'file', file: { open: () => Readable.from([content.subarray(0, 1000), content.subarray(1000)]), size: content.length, filename: 'f.bin' } },
    { name: 'metadataJson', fromSha256: make },
  ];

  it('is the sha256 of what was sent, in a body of the length counted, each attempt hashed afresh', async () => {
    const body = await buildMultipart(parts((d) => JSON.stringify({ 'ferry.sha256': d })));
    for (let attempt = 0; attempt < 2; attempt++) {
      const bytes = Buffer.concat((await Readable.from(body.open()).toArray()) as Buffer[]);
      expect(bytes.length).toBe(body.length);
      const text = bytes.toString('latin1');
      // After the file: its part comes first, the field after it holds the file's digest.
      expect(text.indexOf('name="file"')).toBeLessThan(text.indexOf('name="metadataJson"'));
      expect(text).toContain(`\r\n\r\n{"ferry.sha256":"${sha}"}\r\n`);
    }
  });

  it('read whole (a small body) says the same', async () => {
    const small = Buffer.from('small');
    const body = await buildMultipart([
      { name: 'file', file: { open: () => Readable.from([small]), size: small.length, filename: 's.txt' } },
      { name: 'metadataJson', fromSha256: (d) => d },
    ]);
    expect((await body.materialize()).toString()).toContain(`\r\n\r\n${createHash('sha256').update(small).digest('hex')}\r\n`);
  });

  it('is refused when its text is not as long for every digest, and without a file before it', async () => {
    const body = await buildMultipart(parts((d) => (d.startsWith('0000') ? 'short' : `longer ${d}`)));
    await expect(Readable.from(body.open()).toArray()).rejects.toThrow(/bytes, not the 5 counted/);
    await expect(buildMultipart([{ name: 'metadataJson', fromSha256: (d) => d }])).rejects.toThrow(/no file part comes before it/);
  });
});

describe('an attempt that ends before its content does', () => {
  it('lets go of the content stream (answered 429 with the body half read), and the retry reads a fresh one whole', async () => {
    // More than loopback's socket buffers take, so that the first attempt cannot have sent it all.
    const size = 64 * MiB;
    const opened: Readable[] = [];
    let attempts = 0;
    server.handle('POST', '/projects/p1/documents', async ({ req, res }) => {
      if (attempts++ === 0) {
        // Answered once the body has begun to arrive, before it is all read, as a proxy's limiter does.
        await once(req, 'data');
        res.writeHead(429, { 'retry-after': '0', connection: 'close' }).end();
        req.destroy();
        return;
      }
      for await (const _ of req as AsyncIterable<Buffer>) void _;
      json(res, 201, { objectIdentifier: 'd1', name: 'big.bin' });
    });
    const doc = await client.documents.upload(
      'p1',
      {
        open: () => {
          const stream = Readable.from((function* () {
            for (let i = 0; i < size / MiB; i++) yield Buffer.alloc(MiB, i);
          })());
          opened.push(stream);
          return stream;
        },
        size,
        filename: 'big.bin',
      },
      { documentUploadIdentifier: 'u1' },
    );
    expect(doc.objectIdentifier).toBe('d1');
    expect(opened.length).toBe(2);
    // The first attempt's stream was destroyed, not left open and unread.
    expect(opened[0]!.destroyed).toBe(true);
    expect(opened[0]!.readableEnded).toBe(false);
    expect(opened[1]!.readableEnded).toBe(true);
  });
});
