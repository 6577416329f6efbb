// Answers are read whole and decoded once: as one-byte text when they are ASCII alone (the fast
// way), as UTF-8 otherwise. Names outside ASCII, split across chunks mid-character, and a leading
// byte-order mark must come through exactly as the service sent them.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FerryClient } from '../../src/api/index.js';
import { clientOptionsFor, startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer;
let client: FerryClient;
beforeEach(async () => {
  server = await startTestServer();
  client = new FerryClient(clientOptionsFor(server));
});
afterEach(async () => {
  await client.close();
  await server.close();
});

/** Answers with these bytes, in two writes cut at `cut`. */
function answer(bytes: Buffer, cut: number) {
  server.handle('GET', '/projects/p1', async ({ res }) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write(bytes.subarray(0, cut));
    await new Promise((r) => setTimeout(r, 5));
    res.end(bytes.subarray(cut));
  });
}

const project = (name: string) => ({ objectIdentifier: 'p1', name, description: 'd', dateAdded: '2026-01-01T00:00:00Z' });

describe('answer bodies', () => {
  it('ASCII alone, including JSON escapes of what is not', async () => {
    const bytes = Buffer.from(JSON.stringify(project('plain \\ "quoted" \u00e9')).replace('\u00e9', '\\u00e9'));
    answer(bytes, 10);
    expect((await client.projects.get('p1')).name).toBe('plain \\ "quoted" \u00e9');
  });

  it('UTF-8 names cut mid-character between chunks, a line separator and a byte-order mark inside a name', async () => {
    const name = 'Grüße \u2028 \ufeffbom 📄 日本';
    const bytes = Buffer.from(JSON.stringify(project(name)), 'utf8');
    const cut = bytes.indexOf(Buffer.from('ü')) + 1; // between the two bytes of ü
    answer(bytes, cut);
    expect((await client.projects.get('p1')).name).toBe(name);
  });

  it('a leading byte-order mark is dropped, as a JSON reader must', async () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(project('x')))]);
    answer(bytes, 2);
    expect((await client.projects.get('p1')).name).toBe('x');
  });
});
