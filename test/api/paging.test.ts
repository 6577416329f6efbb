import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FerryClient, PagedList } from '../../src/api/index.js';
import { clientOptionsFor, collect, json, startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer;
let client: FerryClient;
const pagesAsked: { page: number; size: number }[] = [];

const items = (n: number) => Array.from({ length: n }, (_, i) => ({ objectIdentifier: `id-${i}`, name: `item ${i}` }));
const slice = <T>(all: T[], page: number, size: number) => all.slice((page - 1) * size, page * size);

beforeEach(async () => {
  server = await startTestServer();
  client = new FerryClient(clientOptionsFor(server));
  pagesAsked.length = 0;
});
afterEach(async () => {
  await client.close();
  await server.close();
});

describe('paging', () => {
  it('iterates an {items, totalCount} list across pages and stops at totalCount', async () => {
    const all = items(250);
    server.handle('GET', '/projects/p1/documents', ({ res, url }) => {
      const page = Number(url.searchParams.get('pageNumber'));
      const size = Number(url.searchParams.get('pageSize'));
      pagesAsked.push({ page, size });
      json(res, 200, { items: slice(all, page, size), totalCount: all.length });
    });
    const got = await collect(client.documents.list('p1', { searchText: 'item' }, { pageSize: 50 }));
    expect(got.map((d) => d.objectIdentifier)).toEqual(all.map((d) => d.objectIdentifier));
    // 250 is a multiple of 50: totalCount, not an extra empty page, ends the walk.
    expect(pagesAsked.map((p) => p.page)).toEqual([1, 2, 3, 4, 5]);
  });

  it('iterates a bare-array list past a short page, until an empty one (a short page proves nothing)', async () => {
    const all = items(230);
    server.handle('GET', '/notifications', ({ res, url }) => {
      const page = Number(url.searchParams.get('pageNumber'));
      const size = Number(url.searchParams.get('pageSize'));
      pagesAsked.push({ page, size });
      json(res, 200, slice(all, page, size));
    });
    const got = await collect(client.notifications.list({ pageSize: 100 }));
    expect(got).toHaveLength(230);
    expect(pagesAsked.map((p) => p.page)).toEqual([1, 2, 3, 4]);
  });

  it('reads a whole {items, totalCount} list from a service that silently caps page sizes', async () => {
    const all = items(250);
    server.handle('GET', '/projects/p1/documents', ({ res, url }) => {
      const page = Number(url.searchParams.get('pageNumber'));
      const size = Math.min(7, Number(url.searchParams.get('pageSize')));
      pagesAsked.push({ page, size });
      json(res, 200, { items: slice(all, page, size), totalCount: all.length });
    });
    const got = await collect(client.documents.list('p1', {}, { pageSize: 100 }));
    expect(got.map((d) => d.objectIdentifier)).toEqual(all.map((d) => d.objectIdentifier));
    // 250 / 7 = 35.7: 36 pages, and no 37th, since totalCount items had arrived.
    expect(pagesAsked).toHaveLength(36);
  });

  it('reads a whole bare-array list from a service that silently caps page sizes', async () => {
    const all = items(40);
    server.handle('GET', '/notifications', ({ res, url }) => {
      const page = Number(url.searchParams.get('pageNumber'));
      const size = Math.min(7, Number(url.searchParams.get('pageSize')));
      pagesAsked.push({ page, size });
      json(res, 200, slice(all, page, size));
    });
    expect(await collect(client.notifications.list({ pageSize: 100 }))).toHaveLength(40);
    expect(pagesAsked.map((p) => p.page)).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('stops a bare-array list that ignores pageNumber instead of reading page 1 for ever', async () => {
    server.handle('GET', '/notifications', ({ res }) => json(res, 200, items(7)));
    expect(await collect(client.notifications.list({ pageSize: 100 }))).toHaveLength(7);
    expect(server.hits.get('GET /notifications')).toBe(2);
  });

  it('stops a bare-array list on an empty page', async () => {
    const all = items(200);
    server.handle('GET', '/notifications', ({ res, url }) => {
      const page = Number(url.searchParams.get('pageNumber'));
      pagesAsked.push({ page, size: 100 });
      json(res, 200, slice(all, page, 100));
    });
    expect(await collect(client.notifications.list({ pageSize: 100 }))).toHaveLength(200);
    expect(pagesAsked.map((p) => p.page)).toEqual([1, 2, 3]);
  });

  it('uses page/pageSize for template columns and returns a single page on request', async () => {
    const all = items(45);
    const path = '/playbooks/pb/assemblies/as/references/rf/template-columns';
    server.handle('GET', path, ({ res, url }) => {
      const page = Number(url.searchParams.get('page'));
      const size = Number(url.searchParams.get('pageSize'));
      json(res, 200, { items: slice(all, page, size), totalCount: all.length });
    });
    const ref = { playbookIdentifier: 'pb', assemblyIdentifier: 'as', referenceIdentifier: 'rf' };
    const page2 = await client.templateColumns.list(ref).page(2, 20);
    expect(page2.items.map((c) => c.objectIdentifier)).toEqual(all.slice(20, 40).map((c) => c.objectIdentifier));
    expect(page2.totalCount).toBe(45);
    expect(await collect(client.templateColumns.list(ref, { pageSize: 20 }))).toHaveLength(45);
  });

  it('reads an unpaged list once', async () => {
    server.handle('GET', '/playbooks/pb/reference-materials', ({ res }) => json(res, 200, items(3)));
    expect(await collect(client.referenceMaterials.list('pb'))).toHaveLength(3);
    expect(server.hits.get('GET /playbooks/pb/reference-materials')).toBe(1);
  });

  it('reads a list that ignores paging once, instead of repeating it page after page', async () => {
    server.handle('GET', '/playbooks/pb/reference-materials', ({ res }) => json(res, 200, items(150)));
    const list = new PagedList<unknown>(
      (page, size) => client.request({ method: 'GET', path: '/playbooks/pb/reference-materials', query: { pageNumber: page, pageSize: size } }),
      { pageSize: 100 },
    );
    expect(await collect(list)).toHaveLength(150);
    expect(server.hits.get('GET /playbooks/pb/reference-materials')).toBe(1);
  });

  /** Fifty items in pages of ten, and the pages asked for, in the order they were. */
  const countedPages = (opts: { eager?: boolean } = {}) => {
    const asked: number[] = [];
    const all = items(50);
    const list = new PagedList<{ objectIdentifier: string }>(
      async (page, size) => {
        asked.push(page);
        return { items: slice(all, page, size), totalCount: all.length };
      },
      { pageSize: 10, ...opts },
    );
    return { list, asked };
  };

  it('asks for the pages ahead once half of the page being read is taken, not before', async () => {
    const { list, asked } = countedPages();
    const walk = list[Symbol.asyncIterator]();
    for (let i = 0; i < 5; i++) expect((await walk.next()).value?.objectIdentifier).toBe(`id-${i}`);
    // A consumer at work on each item (a migration downloads it) has the service build nothing early.
    expect(asked).toEqual([1]);
    await walk.next();
    expect(asked).toEqual([1, 2, 3]);
    let rest = 0;
    while (!(await walk.next()).done) rest++;
    expect(rest).toBe(44);
    expect(asked).toEqual([1, 2, 3, 4, 5]);
  });

  it('asks for the pages ahead as soon as a page arrives when the list is eager', async () => {
    const { list, asked } = countedPages({ eager: true });
    const walk = list[Symbol.asyncIterator]();
    expect((await walk.next()).value?.objectIdentifier).toBe('id-0');
    expect(asked).toEqual([1, 2, 3]);
    let rest = 0;
    while (!(await walk.next()).done) rest++;
    expect(rest).toBe(49);
    expect(asked).toEqual([1, 2, 3, 4, 5]);
  });

  it('honours a limit without reading further pages', async () => {
    server.handle('GET', '/projects', ({ res, url }) => {
      const page = Number(url.searchParams.get('pageNumber'));
      pagesAsked.push({ page, size: 10 });
      json(res, 200, { items: slice(items(1000), page, 10), totalCount: 1000 });
    });
    expect(await collect(client.projects.list({}, { pageSize: 10, limit: 15 }))).toHaveLength(15);
    expect(pagesAsked).toHaveLength(2);
  });

  it('sends search paging in the POST body', async () => {
    const all = items(7);
    server.handle('POST', '/playbooks/search/all', async ({ res, body }) => {
      const req = JSON.parse((await body()).toString());
      pagesAsked.push({ page: req.pageNumber, size: req.pageSize });
      json(res, 200, { items: slice(all, req.pageNumber, req.pageSize), totalCount: 7 });
    });
    expect(await collect(client.playbooks.searchAll({ searchText: 'x' }, { pageSize: 5 }))).toHaveLength(7);
    expect(pagesAsked).toEqual([{ page: 1, size: 5 }, { page: 2, size: 5 }]);
  });

  describe('a capped page, told to the client\'s page watch', () => {
    const capped = (cap: number, all: unknown[], bare = false) =>
      server.handle('GET', '/projects/p1/documents', ({ res, url }) => {
        const page = Number(url.searchParams.get('pageNumber'));
        const size = Number(url.searchParams.get('pageSize'));
        pagesAsked.push({ page, size });
        const start = (page - 1) * Math.min(size, cap);
        const got = all.slice(start, start + Math.min(size, cap));
        json(res, 200, bare ? got : { items: got, totalCount: all.length });
      });

    it('a page shorter than asked with more after it: one warning for the walk, every item read', async () => {
      capped(7, items(30));
      const run = client.transport.pages.tally();
      expect(await collect(client.documents.list('p1', {}, { pageSize: 10 }))).toHaveLength(30);
      const later = client.transport.pages.tally();
      expect(await collect(client.documents.list('p1', {}, { pageSize: 10 }))).toHaveLength(30);
      // Two lists in the first run's time, one in the later run's; a run ended hears of none after.
      expect(run.end()).toMatch(/^warning: the service at \S+ caps its pages: it gave 7 items where a page of 10 was asked \(GET \/projects\/p1\/documents; 2 lists met it\)\. Every item was still read/);
      expect(later.end()).toMatch(/; 1 list met it\)/);
      const quiet = client.transport.pages.tally();
      expect(quiet.end()).toBeUndefined();
    });

    it('a bare array capped: told once the next page holds more', async () => {
      capped(7, items(16), true);
      const run = client.transport.pages.tally();
      expect(await collect(client.documents.list('p1', {}, { pageSize: 10 }))).toHaveLength(16);
      expect(run.end()).toMatch(/it gave 7 items where a page of 10 was asked .*; 1 list met it/);
    });

    it('only the last page short: nothing told', async () => {
      capped(1000, items(25));
      const run = client.transport.pages.tally();
      expect(await collect(client.documents.list('p1', {}, { pageSize: 10 }))).toHaveLength(25);
      expect(run.end()).toBeUndefined();
    });

    it('a recorded pageSize: no list asks for more, a larger wish is cut to it', async () => {
      capped(1000, items(12));
      const recorded = new FerryClient({ ...clientOptionsFor(server), pageSize: 5 });
      const tally = recorded.transport.pages.tally();
      try {
        expect(await collect(recorded.documents.list('p1', {}, { pageSize: 1000 }))).toHaveLength(12);
        expect(pagesAsked.map((p) => p.size)).toEqual([5, 5, 5]);
        expect(tally.end()).toBeUndefined();
      } finally {
        await recorded.close();
      }
    });
  });
});

