// Answers are read whole and decoded once: as one-byte text when they are ASCII alone (the fast
// way), as UTF-8 otherwise. Names outside ASCII, split across chunks mid-character, and a leading
// byte-order mark must come through exactly as the service sent them.
import { describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/test-server.js';

const t = useTestServer();

/** Answers with these bytes, in two writes cut at `cut`. */
function answer(bytes: Buffer, cut: number) {
  t.server.handle('GET', '/projects/p1', async ({ res }) => {
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
    expect((await t.client.projects.get('p1')).name).toBe('plain \\ "quoted" \u00e9');
  });

  it('UTF-8 names cut mid-character between chunks, a line separator and a byte-order mark inside a name', async () => {
    const name = 'Grüße \u2028 \ufeffbom 📄 日本';
    const bytes = Buffer.from(JSON.stringify(project(name)), 'utf8');
    const cut = bytes.indexOf(Buffer.from('ü')) + 1; // between the two bytes of ü
    answer(bytes, cut);
    expect((await t.client.projects.get('p1')).name).toBe(name);
  });

  it('a leading byte-order mark is dropped, as a JSON reader must', async () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(project('x')))]);
    answer(bytes, 2);
    expect((await t.client.projects.get('p1')).name).toBe('x');
  });
});
