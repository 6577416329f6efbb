// A project changed while it is listed: pages are windows onto a list that moves. An insertion
// moves what follows down onto the next page (met twice); a deletion moves it up past the walk
// (never met). Either way every document must come out of a project source once.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FerryClient } from '../../src/api/index.js';
import { ProjectSource } from '../../src/backends/project/source.js';
import type { SourceEntry } from '../../src/sync/types.js';
import { clientOptionsFor, collect, json, startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer;
let client: FerryClient;
/** Newest first, as the source asks (dateAdded, desc). */
let docs: Record<string, unknown>[];
const PAGE = 7; // the service caps every page at 7, whatever is asked

const doc = (i: number) => ({
  objectIdentifier: `doc-${i}`,
  name: `f${i}.txt`,
  path: `/f${i}.txt`,
  url: `http://files.invalid/${i}`,
  size: 1,
  isDirectory: false,
  dateAdded: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
});

/** Serves `docs` page by page; `change` runs before the page it names is answered. */
function serve(change: { beforePage: number; apply: () => void }) {
  server.handle('GET', '/projects/p1/documents', ({ res, url }) => {
    const page = Number(url.searchParams.get('pageNumber'));
    if (page === change.beforePage && server.hits.get('GET /projects/p1/documents') === change.beforePage) change.apply();
    json(res, 200, { items: docs.slice((page - 1) * PAGE, page * PAGE), totalCount: docs.length });
  });
}

const keysOf = (entries: SourceEntry[]) => entries.filter((e) => e.kind === 'file').map((e) => e.key);

beforeEach(async () => {
  server = await startTestServer();
  client = new FerryClient({ ...clientOptionsFor(server), retry: { maxAttempts: 1 } });
  docs = Array.from({ length: 60 }, (_, i) => doc(59 - i));
});
afterEach(async () => {
  await client.close();
  await server.close();
});

describe('a project listed while it changes', () => {
  it('grows: the documents moved onto the next page are met twice and carried once', async () => {
    const before = docs.map((d) => d.name);
    serve({ beforePage: 3, apply: () => docs.unshift(doc(100), doc(101), doc(102)) });
    const entries = await collect(new ProjectSource(client, 'p1').entries());
    const keys = keysOf(entries);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys.filter((k) => before.includes(k)).sort()).toEqual([...before].sort());
    // Met twice is not "an older document at the same path": nothing is said skipped.
    expect(entries.filter((e) => e.kind === 'problem')).toEqual([]);
    // Listed once: nothing shrank.
    expect(server.hits.get('GET /projects/p1/documents')).toBe(Math.ceil(63 / PAGE));
  });

  it('shrinks: the documents moved up past the walk are found by a second listing, each once', async () => {
    const before = docs.map((d) => d.name);
    // Three documents the walk has already read are deleted: the next pages start three later.
    serve({ beforePage: 3, apply: () => docs.splice(2, 3) });
    const keys = keysOf(await collect(new ProjectSource(client, 'p1').entries()));
    expect(new Set(keys).size).toBe(keys.length);
    expect([...keys].sort()).toEqual([...before].sort());
    expect(server.hits.get('GET /projects/p1/documents')).toBeGreaterThan(Math.ceil(60 / PAGE));
  });

  it('shrinks: a document that cannot be carried is said once, not again by the second listing', async () => {
    // A name with a control character is refused with its reason; a failed-upload record has nothing to pull.
    Object.assign(docs[40]!, { name: 'bell\u0007.txt', path: '/bell\u0007.txt' });
    delete docs[45]!.url;
    serve({ beforePage: 3, apply: () => docs.splice(2, 3) });
    const entries = await collect(new ProjectSource(client, 'p1').entries());
    expect(entries.filter((e) => e.kind === 'problem').map((e) => e.key).sort()).toEqual(['bell\u0007.txt', docs.find((d) => !d.url)!.name].sort());
    expect(keysOf(entries)).toHaveLength(58);
  });

  it('without a change, the project is listed once and nothing is met twice', async () => {
    serve({ beforePage: 0, apply: () => undefined });
    const keys = keysOf(await collect(new ProjectSource(client, 'p1').entries()));
    expect(keys).toHaveLength(60);
    expect(new Set(keys).size).toBe(60);
    expect(server.hits.get('GET /projects/p1/documents')).toBe(Math.ceil(60 / PAGE));
  });
});
