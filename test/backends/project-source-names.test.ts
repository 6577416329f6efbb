// Paths a project listing gives that no other side can carry: each is refused with its reason,
// by the key it has, and the rest flow on. A path is checked whole first and segment by segment
// only when it breaks the rule somewhere, so both the whole and the parts are asserted here.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FerryClient } from '../../src/api/index.js';
import { ProjectSource, SLASH_IN_NAME } from '../../src/backends/project/source.js';
import { HAS_CONTROL } from '../../src/backends/names.js';
import { clientOptionsFor, collect, json, startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer;
let client: FerryClient;

const doc = (i: number, path: string, name = path.slice(path.lastIndexOf('/') + 1)) => ({
  objectIdentifier: `doc-${i}`,
  name,
  path,
  url: `http://files.invalid/${i}`,
  size: 1,
  isDirectory: false,
  dateAdded: new Date(Date.UTC(2026, 0, 1) + (100 - i) * 1000).toISOString(),
});

const docs = [
  doc(1, '/plain/a.txt'),
  doc(2, '/empty//segment.txt'),
  doc(3, '/slash/in-name.txt', 'slash/in-name.txt'),
  doc(4, '/trailing/'),
  doc(5, '/d\u0007ir/c.txt'),
  doc(6, '/plain/bell\u0007.txt'),
  doc(7, '/plain/line\u2028separator.txt'),
  doc(8, '/plain/back\\slash %41.txt'),
  doc(9, '/plain/\ufeff'),
  doc(10, '/plain/quote%22.txt'),
];

beforeEach(async () => {
  server = await startTestServer();
  client = new FerryClient({ ...clientOptionsFor(server), retry: { maxAttempts: 1 } });
  server.handle('GET', '/projects/p1/documents', ({ res }) => json(res, 200, { items: docs, totalCount: docs.length }));
});
afterEach(async () => {
  await client.close();
  await server.close();
});

describe('a project listing with paths that cannot be carried', () => {
  it('refuses each with its reason and gives the rest', async () => {
    const entries = await collect(new ProjectSource(client, 'p1').entries());
    const files = entries.filter((e) => e.kind === 'file').map((e) => e.key);
    expect(files.sort()).toEqual(['plain/a.txt', 'plain/back\\slash %41.txt', 'plain/line\u2028separator.txt', 'plain/\ufeff', 'plain/quote%22.txt'].sort());
    const refused = Object.fromEntries(entries.flatMap((e) => (e.kind === 'problem' ? [[e.key, `${e.outcome}: ${e.reason}`]] : [])));
    expect(refused).toEqual({
      'empty//segment.txt': `failed: ${SLASH_IN_NAME}`,
      'slash/in-name.txt': `failed: ${SLASH_IN_NAME}`,
      'trailing/': `failed: ${SLASH_IN_NAME}`,
      'd\u0007ir/c.txt': `failed: ${HAS_CONTROL}`,
      'plain/bell\u0007.txt': `failed: ${HAS_CONTROL}`,
    });
  });

  it('adopts none of them on a cold start', async () => {
    const items = await collect(new ProjectSource(client, 'p1').inventory());
    expect(items.map((i) => i.key).sort()).toEqual(['plain/a.txt', 'plain/back\\slash %41.txt', 'plain/line\u2028separator.txt', 'plain/\ufeff', 'plain/quote%22.txt'].sort());
  });
});
