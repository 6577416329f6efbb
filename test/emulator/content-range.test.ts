// A document's content answered by range (RFC 9110), as a resumed download asks for it: 206 with the
// bytes asked for and their Content-Range, 416 past the end, the whole body when If-Range names
// another content, and always the whole body under `--range ignored`.
import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EmulatorHandle } from '../../src/emulator/index.js';
import { askedRange } from '../../src/emulator/http/content-range.js';
import { type Client, clientFor, expectNoContractViolations, startTestEmulator } from './helpers.js';

const CONTENT = Array.from({ length: 200_000 }, (_, i) => String.fromCharCode(97 + (i % 26))).join('');

describe.each([['on disk', true], ['in memory', false]] as const)('content by range, blobs %s', (_where, onDisk) => {
  let handle: EmulatorHandle;
  let client: Client;
  let ignoring: EmulatorHandle;
  beforeAll(async () => {
    const dataDir = onDisk ? await mkdtemp(join(tmpdir(), 'ferry-range-')) : undefined;
    handle = await startTestEmulator({ ...(dataDir ? { dataDir } : {}), processing: { minDelayMs: 1, maxDelayMs: 2, seed: 1 } });
    ignoring = await startTestEmulator({ range: 'ignored', processing: { minDelayMs: 1, maxDelayMs: 2, seed: 1 } });
    client = await clientFor(handle);
  });
  afterAll(async () => {
    await handle.close();
    await ignoring.close();
  });
  afterEach(() => expectNoContractViolations(handle));

  async function stored(on: Client): Promise<string> {
    const project = (await on.post('/projects', { name: `range ${randomUUID()}`, description: null })).body.objectIdentifier as string;
    const uploadIdentifier = randomUUID();
    expect((await on.upload(project, 'big.txt', CONTENT, { uploadIdentifier })).status).toBe(200);
    const [document] = await on.processed(project, uploadIdentifier);
    return new URL(document.url as string).pathname;
  }

  it('answers one range with 206 and exactly those bytes; the whole body says it takes ranges and names its content', async () => {
    const path = await stored(client);
    const whole = await client.call('GET', path);
    expect(whole.status).toBe(200);
    expect(whole.text).toBe(CONTENT);
    expect(whole.headers['accept-ranges']).toBe('bytes');
    const etag = whole.headers.etag as string;
    expect(etag).toMatch(/^".+"$/);
    const part = await client.call('GET', path, { headers: { range: 'bytes=100000-' } });
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 100000-199999/200000`);
    expect(part.text).toBe(CONTENT.slice(100_000));
    const middle = await client.call('GET', path, { headers: { range: 'bytes=65530-65545', 'if-range': etag } });
    expect([middle.status, middle.text]).toEqual([206, CONTENT.slice(65_530, 65_546)]);
    const tail = await client.call('GET', path, { headers: { range: 'bytes=-10' } });
    expect([tail.status, tail.text, tail.headers['content-range']]).toEqual([206, CONTENT.slice(-10), 'bytes 199990-199999/200000']);
  });

  it('a range past the end is 416 naming the size; If-Range naming another content gets the whole body', async () => {
    const path = await stored(client);
    const past = await client.call('GET', path, { headers: { range: 'bytes=200000-' } });
    expect([past.status, past.headers['content-range']]).toEqual([416, 'bytes */200000']);
    const other = await client.call('GET', path, { headers: { range: 'bytes=10-', 'if-range': '"another version"' } });
    expect([other.status, other.text.length]).toEqual([200, 200_000]);
  });

  it('under --range ignored, a range gets 200 and the whole body', async () => {
    const on = await clientFor(ignoring);
    const path = await stored(on);
    const res = await on.call('GET', path, { headers: { range: 'bytes=100000-' } });
    expect([res.status, res.text.length, res.headers['accept-ranges']]).toEqual([200, 200_000, undefined]);
  });
});

describe('the Range header read', () => {
  it('one range, from a start, or the last bytes; several ranges or nonsense are the whole body', () => {
    expect(askedRange(undefined, 100)).toBe('whole');
    expect(askedRange('bytes=10-19', 100)).toEqual({ start: 10, end: 19 });
    expect(askedRange('bytes=90-', 100)).toEqual({ start: 90, end: 99 });
    expect(askedRange('bytes=90-500', 100)).toEqual({ start: 90, end: 99 });
    expect(askedRange('bytes=-5', 100)).toEqual({ start: 95, end: 99 });
    expect(askedRange('bytes=-500', 100)).toEqual({ start: 0, end: 99 });
    expect(askedRange('bytes=100-', 100)).toBe('unsatisfiable');
    expect(askedRange('bytes=-0', 100)).toBe('unsatisfiable');
    expect(askedRange('bytes=0-1,5-6', 100)).toBe('whole');
    expect(askedRange('bytes=20-10', 100)).toBe('whole');
    expect(askedRange('items=0-1', 100)).toBe('whole');
  });
});
