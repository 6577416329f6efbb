// A download from a byte on (documents.downloadFrom, issue 63) continues only from a 206 for
// exactly the range asked: a server that sends the whole body instead (200), refuses the range
// (416), or answers 206 for other bytes gives the whole content, from byte 0, and says why.
import { describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/test-server.js';

const t = useTestServer();
const content = Buffer.from('0123456789abcdefghij');
const doc = () => ({ name: 'doc.bin', url: `${t.server.url}/content/doc` });

/** Serves the content; `ranged(start)` answers a Range request starting at `start`. */
function serve(ranged: (start: number, res: import('node:http').ServerResponse) => void): { ranges: (string | undefined)[] } {
  const seen = { ranges: [] as (string | undefined)[] };
  t.server.handle('GET', '/content/doc', ({ req, res }) => {
    const range = req.headers.range;
    seen.ranges.push(range);
    if (range === undefined) {
      res.writeHead(200, { 'content-length': String(content.length), etag: '"v1"' });
      res.end(content);
      return;
    }
    ranged(Number(/^bytes=(\d+)-$/.exec(range)![1]), res);
  });
  return seen;
}

async function text(body: NodeJS.ReadableStream): Promise<string> {
  let s = '';
  for await (const c of body) s += String(c);
  return s;
}

describe('documents.downloadFrom', () => {
  it('continues from a 206 for exactly the bytes asked, with the ETag as the version', async () => {
    const seen = serve((start, res) => {
      res.writeHead(206, { 'content-range': `bytes ${start}-${content.length - 1}/${content.length}`, etag: '"v1"' });
      res.end(content.subarray(start));
    });
    const got = await t.client.documents.downloadFrom(doc(), content.length, 12);
    expect(got).toMatchObject({ from: 12, version: '"v1"' });
    expect(got.mismatch).toBeUndefined();
    expect(await text(got.body)).toBe('cdefghij');
    expect(seen.ranges).toEqual(['bytes=12-']);
  });

  it('gives the whole body from 0 when the server answers 200 to the range', async () => {
    serve((_start, res) => {
      res.writeHead(200, { 'content-length': String(content.length), etag: '"v1"' });
      res.end(content);
    });
    const got = await t.client.documents.downloadFrom(doc(), content.length, 12);
    expect(got.from).toBe(0);
    expect(await text(got.body)).toBe(content.toString());
  });

  it('asks again for the whole when a 206 holds other bytes than asked, and says what came', async () => {
    const seen = serve((start, res) => {
      res.writeHead(206, { 'content-range': `bytes ${start + 2}-${content.length - 1}/${content.length}` });
      res.end(content.subarray(start + 2));
    });
    const got = await t.client.documents.downloadFrom(doc(), content.length, 12);
    expect(got.from).toBe(0);
    expect(got.mismatch).toMatch(/asked for bytes 12-19 of 20.*"bytes 14-19\/20"/);
    expect(await text(got.body)).toBe(content.toString());
    expect(seen.ranges).toEqual(['bytes=12-', undefined]);
  });

  it('asks again for the whole when the range is refused (416)', async () => {
    serve((_start, res) => {
      res.writeHead(416, { 'content-range': `bytes */${content.length}`, 'content-type': 'application/problem+json' });
      res.end(JSON.stringify({ title: 'Range Not Satisfiable', status: 416 }));
    });
    const got = await t.client.documents.downloadFrom(doc(), content.length, 12);
    expect(got.from).toBe(0);
    expect(got.mismatch).toMatch(/416/);
    expect(await text(got.body)).toBe(content.toString());
  });

  it('asks for no range from byte 0 or past the end', async () => {
    const seen = serve(() => {
      throw new Error('no range expected');
    });
    for (const offset of [0, content.length, content.length + 5]) expect((await t.client.documents.downloadFrom(doc(), content.length, offset)).from).toBe(0);
    expect(seen.ranges).toEqual([undefined, undefined, undefined]);
  });
});
