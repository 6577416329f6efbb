import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EmulatorHandle } from '../../src/emulator/index.js';
import { type Client, clientFor, expectNoContractViolations, startTestEmulator } from './helpers.js';

const EICAR = String.raw`X5O!P%@AP[4\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*`;

let handle: EmulatorHandle;
let client: Client;

beforeAll(async () => {
  handle = await startTestEmulator({ processing: { minDelayMs: 1, maxDelayMs: 5, seed: 3, ocrPageLimit: 5 } });
  client = await clientFor(handle);
});
afterAll(() => handle.close());
afterEach(() => expectNoContractViolations(handle));

async function newProject(name = 'Documents test'): Promise<string> {
  const res = await client.post('/projects', { name, description: null });
  expect(res.status).toBe(200);
  return res.body.objectIdentifier;
}

function pdf(pages: number): string {
  const objects = Array.from({ length: pages }, (_, i) => `${i + 3} 0 obj << /Type /Page /Parent 2 0 R >> endobj`).join('\n');
  return `%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Count ${pages} >> endobj\n${objects}\n%%EOF\n`;
}

/** Uploads one file and returns the document once processing has finished. */
async function processedDocument(project: string, name: string, content: string | Uint8Array, fields?: Record<string, string>) {
  const uploadIdentifier = randomUUID();
  const res = await client.upload(project, name, content, { uploadIdentifier, ...(fields ? { fields } : {}) });
  expect(res.status).toBe(200);
  const [document] = await client.processed(project, uploadIdentifier);
  return document;
}

describe('upload and processing', () => {
  it('answers the new document in progress, then processes it to success', async () => {
    const project = await newProject();
    const uploadIdentifier = randomUUID();
    const creditsBefore = handle.credits('contoso');
    const res = await client.upload(project, 'notes.txt', 'a'.repeat(6001), {
      uploadIdentifier,
      source: 'docManagerOne',
      fields: { ocrStrategy: 'never', coordinateExtractionStrategy: 'engineB', metadataJson: JSON.stringify({ client: 'ACME', matter: '42' }) },
    });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toMatchObject({
      name: 'notes.txt',
      documentUploadObjectIdentifier: uploadIdentifier,
      uploadInProgress: true,
      progress: 0,
      uploadSuccessful: null,
      size: 6001,
      documentUploadSource: 'docManagerOne',
      ocrStrategy: 'never',
      coordinateExtractionStrategy: 'engineB',
      ocrEngine: 'cloudDocumentIntelligence',
    });
    expect(res.body.metadata.map((m: { key: string; value: string }) => [m.key, m.value])).toEqual([
      ['client', 'ACME'],
      ['matter', '42'],
    ]);
    const [done] = await client.processed(project, uploadIdentifier);
    expect(done).toMatchObject({
      uploadSuccessful: true,
      uploadInProgress: false,
      fileType: 'text',
      extension: 'txt',
      contentType: 'text/plain',
      pageCount: 3,
      tokenCount: 1501,
      ocrCreditsCost: 0,
      layoutCreditsCost: 0.75,
      indexingNotPossible: false,
    });
    expect(done.uploadFailedReason).toBeUndefined();
    expect(handle.credits('contoso')).toBeCloseTo(creditsBefore - 0.75 - 0.3, 6);
  });

  it('counts PDF page objects, not the page tree', async () => {
    const project = await newProject();
    const document = await processedDocument(project, 'three.pdf', pdf(3), { ocrStrategy: 'always' });
    expect(document).toMatchObject({ uploadSuccessful: true, pageCount: 3, fileType: 'text', contentType: 'application/pdf', ocrCreditsCost: 3 });
  });

  it('classifies images, audio and video by extension', async () => {
    const project = await newProject();
    expect((await processedDocument(project, 'photo.JPG', 'jpeg bytes')).fileType).toBe('image');
    expect((await processedDocument(project, 'clip.mp4', 'mp4 bytes')).fileType).toBe('video');
    expect((await processedDocument(project, 'voice.wav', 'wav bytes')).fileType).toBe('audio');
  });

  it('rejects malformed uploads with 400', async () => {
    const project = await newProject();
    const bad = [
      await client.upload(project, 'a.txt', 'x', { fields: { ocrStrategy: 'sometimes' } }),
      await client.upload(project, 'a.txt', 'x', { fields: { metadataJson: '{"a": 1}' } }),
      await client.upload(project, 'a.txt', 'x', { fields: { metadataJson: 'not json' } }),
      await client.upload(project, 'a.txt', 'x', { parent: randomUUID() }),
      await client.upload(project, 'a.txt', 'x', { source: 'ftp' }),
      await client.post(`/projects/${project}/documents`, { file: 'x' }, { documentUploadIdentifier: randomUUID() }),
      await client.call('POST', `/projects/${project}/documents`, {
        query: { documentUploadIdentifier: randomUUID() },
        headers: { 'content-type': 'multipart/form-data; boundary=xyz' },
        body: '--xyz\r\nContent-Disposition: form-data; name="ocrStrategy"\r\n\r\nnever\r\n--xyz--\r\n',
      }),
    ];
    for (const res of bad) {
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ status: 400 });
    }
    const missingUploadId = await client.call('POST', `/projects/${project}/documents`, {
      headers: { 'content-type': 'multipart/form-data; boundary=xyz' },
      body: '--xyz--\r\n',
    });
    expect(missingUploadId.status).toBe(400);
    expect((await client.upload(randomUUID(), 'a.txt', 'x')).status).toBe(404);
    expect((await client.upload('not-a-uuid', 'a.txt', 'x')).status).toBe(400);
    const listed = await client.get(`/projects/${project}/documents`);
    expect(listed.body.totalCount).toBe(0);
  });
});

describe('processing failure rules', () => {
  let project: string;
  beforeAll(async () => {
    project = await newProject('Failures');
  });

  const expectFailure = (document: any, reason: string) => {
    expect(document).toMatchObject({ uploadSuccessful: false, uploadInProgress: false, uploadFailedReason: reason });
  };

  it('unsupportedFileType for an extension outside the supported list', async () => {
    const document = await processedDocument(project, 'tool.exe', 'MZ');
    expectFailure(document, 'unsupportedFileType');
    expect(document).toMatchObject({ unsupportedFileType: true, indexingNotPossible: true });
  });

  it('maliciousFile for content holding the EICAR test string', async () => {
    const padded = `${'x'.repeat(70_000)}${EICAR}${'y'.repeat(10)}`;
    expectFailure(await processedDocument(project, 'eicar.txt', padded), 'maliciousFile');
  });

  it('badFile for an empty file and for a .pdf without the %PDF- header', async () => {
    expectFailure(await processedDocument(project, 'empty.txt', ''), 'badFile');
    expectFailure(await processedDocument(project, 'fake.pdf', 'hello'), 'badFile');
  });

  it('insufficientCredits when the tenant has no credits left', async () => {
    const credits = handle.credits('contoso');
    handle.setCredits('contoso', 0);
    try {
      expectFailure(await processedDocument(project, 'poor.txt', 'text'), 'insufficientCredits');
    } finally {
      handle.setCredits('contoso', credits);
    }
  });

  it('ocrPageLimitExceeded for a PDF over the page limit with ocrStrategy always', async () => {
    expectFailure(await processedDocument(project, 'long.pdf', pdf(6), { ocrStrategy: 'always' }), 'ocrPageLimitExceeded');
    expect((await processedDocument(project, 'long-detect.pdf', pdf(6), { ocrStrategy: 'detect' })).uploadSuccessful).toBe(true);
  });

  it.each(['outOfMemory', 'uploadFailure', 'unknownException', 'fileScanTimedOut'])('%s through the file-name trigger', async (reason) => {
    expectFailure(await processedDocument(project, `report__fail_${reason}__.txt`, 'text'), reason);
  });

  it('fault probabilities fail documents too', async () => {
    handle.setFaults({ failReasons: { fileScanTimedOut: 1 } });
    try {
      expectFailure(await processedDocument(project, 'unlucky.txt', 'text'), 'fileScanTimedOut');
    } finally {
      handle.setFaults({});
    }
  });

  it('records failed uploads reported by the client', async () => {
    const uploadIdentifier = randomUUID();
    const res = await client.post(`/projects/${project}/documents/failed`, {
      fileName: 'lost.docx',
      contentType: 'application/octet-stream',
      size: 1234,
      documentUploadObjectIdentifier: uploadIdentifier,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'lost.docx', uploadFailedReason: 'uploadFailure', uploadSuccessful: false, uploadInProgress: false, size: 1234, url: null });
    expect((await client.post(`/projects/${project}/documents/failed`, { contentType: 'x' })).status).toBe(400);
  });

  it('sums an upload in uploadStats with every failure reason present', async () => {
    const uploadIdentifier = randomUUID();
    for (const [name, content] of [
      ['ok.txt', 'fine'],
      ['ok.pdf', pdf(1)],
      ['bad.exe', 'MZ'],
      ['virus.txt', EICAR],
    ] as const) {
      expect((await client.upload(project, name, content, { uploadIdentifier })).status).toBe(200);
    }
    await client.processed(project, uploadIdentifier);
    const stats = handle.uploadStats('contoso', uploadIdentifier);
    expect(stats).toMatchObject({ totalDocumentCount: 4, completedDocumentCount: 2, failedDocumentCount: 2, processingDocumentCount: 0 });
    expect(Object.keys(stats.failedReasonSummary).sort()).toEqual(
      ['badFile', 'fileScanTimedOut', 'insufficientCredits', 'maliciousFile', 'ocrPageLimitExceeded', 'outOfMemory', 'unknownException', 'unsupportedFileType', 'uploadFailure'].sort(),
    );
    expect(stats.failedReasonSummary).toMatchObject({ unsupportedFileType: 1, maliciousFile: 1, badFile: 0 });
    expect(stats.fileTypeSummary).toEqual({ text: 3, unknown: 1 });
    expect(stats.totalSizeBytes).toBe(4 + pdf(1).length + 2 + EICAR.length);
    expect(handle.uploadStats('fabrikam', uploadIdentifier).totalDocumentCount).toBe(0);
  });
});

describe('folders and content (extensions)', () => {
  it('creates folders, refuses duplicates and downloads stored bytes', async () => {
    const project = await newProject();
    const folder = await client.post(`/projects/${project}/folders`, { name: 'Contracts' });
    expect(folder.status).toBe(201);
    expect(folder.body).toMatchObject({ name: 'Contracts', isDirectory: true, fileType: 'directory', hasChildren: false, url: null });
    expect((await client.post(`/projects/${project}/folders`, { name: 'contracts' })).status).toBe(409);
    expect((await client.post(`/projects/${project}/folders`, { name: 'x', parentObjectIdentifier: randomUUID() })).status).toBe(400);
    const bytes = Buffer.from(Array.from({ length: 300_000 }, (_, i) => i % 251));
    const uploaded = await client.upload(project, 'data.bin.csv', bytes, { parent: folder.body.objectIdentifier });
    expect(uploaded.body).toMatchObject({ parentObjectIdentifier: folder.body.objectIdentifier, parent: { name: 'Contracts', isDirectory: true } });
    const content = await fetchBytes(uploaded.body.url);
    expect(content.status).toBe(200);
    expect(content.contentType).toBe('application/octet-stream');
    expect(Buffer.compare(content.bytes, bytes)).toBe(0);
    const refreshed = await client.get(`/projects/${project}/documents`);
    expect(refreshed.body.items[0]).toMatchObject({ name: 'Contracts', hasChildren: true });
    expect((await client.get(`/projects/${project}/documents/${folder.body.objectIdentifier}/content`)).status).toBe(404);
    expect((await client.get(`/projects/${project}/analytics`)).body.documentCount).toBe(1);
  });
});

async function fetchBytes(url: string) {
  const { request } = await import('undici');
  const res = await request(url, { headers: { authorization: `Bearer ${client.bearer}` } });
  return { status: res.statusCode, contentType: res.headers['content-type'], bytes: Buffer.from(await res.body.arrayBuffer()) };
}

describe('document list', () => {
  let project: string;
  const ids: Record<string, string> = {};
  const uploadIdentifier = randomUUID();

  beforeAll(async () => {
    project = await newProject('List semantics');
    ids.a = (await client.post(`/projects/${project}/folders`, { name: 'A' })).body.objectIdentifier;
    ids.b = (await client.post(`/projects/${project}/folders`, { name: 'B', parentObjectIdentifier: ids.a })).body.objectIdentifier;
    const files: [string, string, string | undefined][] = [
      ['alpha.txt', 'x'.repeat(10), undefined],
      ['Beta.txt', 'x'.repeat(7000), undefined],
      ['gamma.pdf', pdf(2), ids.a],
      ['delta.txt', 'x'.repeat(30), ids.b],
      ['broken.exe', 'MZ', undefined],
    ];
    for (const [name, content, parent] of files) {
      const res = await client.upload(project, name, content, { uploadIdentifier, ...(parent ? { parent } : {}) });
      ids[name] = res.body.objectIdentifier;
    }
    await client.processed(project, uploadIdentifier);
  });

  const names = async (query: Record<string, string | number | boolean>) => {
    const res = await client.get(`/projects/${project}/documents`, query);
    expect(res.status).toBe(200);
    return res.body.items.map((d: { name: string }) => d.name);
  };

  it('lists the root by default, newest first', async () => {
    expect(await names({})).toEqual(['broken.exe', 'Beta.txt', 'alpha.txt', 'A']);
  });

  it('lists a folder’s children, or every descendant with flattenList', async () => {
    expect(await names({ parentObjectIdentifier: ids.a! })).toEqual(['gamma.pdf', 'B']);
    expect(await names({ parentObjectIdentifier: ids.a!, flattenList: true, sorting: 'name', desc: false })).toEqual(['B', 'delta.txt', 'gamma.pdf']);
    expect((await names({ flattenList: true })).length).toBe(7);
    expect((await client.get(`/projects/${project}/documents`, { parentObjectIdentifier: ids['alpha.txt']! })).status).toBe(400);
  });

  it('fills path only with includePath', async () => {
    const withPath = await client.get(`/projects/${project}/documents`, { flattenList: true, includePath: true, searchText: 'delta' });
    expect(withPath.body.items[0].path).toBe('/A/B/delta.txt');
    const without = await client.get(`/projects/${project}/documents`, { flattenList: true, searchText: 'delta' });
    expect(without.body.items[0].path).toBeNull();
  });

  it('searches names case-insensitively', async () => {
    expect(await names({ flattenList: true, searchText: 'BETA' })).toEqual(['Beta.txt']);
    expect(await names({ flattenList: true, searchText: 'ta', sorting: 'name', desc: false })).toEqual(['Beta.txt', 'delta.txt']);
  });

  it('sorts by document columns in both directions and rejects other columns', async () => {
    expect(await names({ sorting: 'name', desc: false })).toEqual(['A', 'alpha.txt', 'Beta.txt', 'broken.exe']);
    expect(await names({ sorting: 'size', desc: true, flattenList: true, pageSize: 2 })).toEqual(['Beta.txt', 'gamma.pdf']);
    expect(await names({ sorting: 'isDirectory', desc: true, flattenList: true, pageSize: 2 })).toEqual(['B', 'A']);
    expect(await names({ sorting: 'pageCount', desc: true, flattenList: true, pageSize: 2 })).toEqual(['Beta.txt', 'gamma.pdf']);
    expect(await names({ sorting: 'extension', desc: false, flattenList: true, indexingStatus: 'completed' })).toEqual(['gamma.pdf', 'alpha.txt', 'Beta.txt', 'delta.txt']);
    expect((await client.get(`/projects/${project}/documents`, { sorting: 'playbookName' })).status).toBe(400);
    expect((await client.get(`/projects/${project}/documents`, { sorting: 'nonsense' })).status).toBe(400);
  });

  it('pages with totalCount', async () => {
    const page = await client.get(`/projects/${project}/documents`, { flattenList: true, sorting: 'name', desc: false, pageSize: 3, pageNumber: 2 });
    expect(page.body.totalCount).toBe(7);
    expect(page.body.items.map((d: { name: string }) => d.name)).toEqual(['Beta.txt', 'broken.exe', 'delta.txt']);
    expect((await client.get(`/projects/${project}/documents`, { pageSize: 0 })).status).toBe(400);
    expect((await client.get(`/projects/${project}/documents`, { pageNumber: 0 })).status).toBe(400);
  });

  it('filters by indexing status and upload', async () => {
    expect(await names({ flattenList: true, indexingStatus: 'failed' })).toEqual(['broken.exe']);
    expect(await names({ flattenList: true, indexingStatus: 'inProgress' })).toEqual([]);
    expect((await names({ flattenList: true, indexingStatus: 'completed' })).length).toBe(4);
    expect((await names({ flattenList: true, uploadObjectIdentifier: uploadIdentifier })).length).toBe(5);
    expect(await names({ flattenList: true, uploadObjectIdentifier: randomUUID() })).toEqual([]);
    expect((await client.get(`/projects/${project}/documents`, { indexingStatus: 'stuck' })).status).toBe(400);
    expect(await names({ hidePackagedFiles: false, sorting: 'name', desc: false })).toEqual(['A', 'alpha.txt', 'Beta.txt', 'broken.exe']);
  });

  it('applies all eight column filter operations, numeric or textual', async () => {
    const filter = (filterColumn: string, filterOperation: string, filterSearchTerm: string, columnType: string) =>
      names({ flattenList: true, sorting: 'name', desc: false, filterColumn, filterOperation, filterSearchTerm, columnType });
    expect(await filter('size', 'equals', '10', 'int')).toEqual(['alpha.txt']);
    expect(await filter('size', 'doesNotEqual', '10', 'int')).toEqual(['A', 'B', 'Beta.txt', 'broken.exe', 'delta.txt', 'gamma.pdf']);
    expect(await filter('size', 'greaterThan', '30', 'int')).toEqual(['Beta.txt', 'gamma.pdf']);
    expect(await filter('size', 'greaterThanOrEqualTo', '30', 'int')).toEqual(['Beta.txt', 'delta.txt', 'gamma.pdf']);
    expect(await filter('size', 'lessThan', '30', 'int')).toEqual(['alpha.txt', 'broken.exe']);
    expect(await filter('size', 'lessThanOrEqualTo', '30', 'int')).toEqual(['alpha.txt', 'broken.exe', 'delta.txt']);
    expect(await filter('name', 'contains', 'TA', 'string')).toEqual(['Beta.txt', 'delta.txt']);
    expect(await filter('name', 'doesNotContain', 'a', 'string')).toEqual(['B', 'broken.exe']);
    expect(await filter('extension', 'equals', 'TXT', 'string')).toEqual(['alpha.txt', 'Beta.txt', 'delta.txt']);
    // Compared as text, "10", "30" and the PDF's three-digit size sort before "5"; as numbers only 2 is below 5.
    expect(await filter('size', 'lessThan', '5', 'string')).toEqual(['alpha.txt', 'broken.exe', 'delta.txt', 'gamma.pdf']);
    expect(await filter('size', 'lessThan', '5', 'int')).toEqual(['broken.exe']);
    expect(await filter('isDirectory', 'equals', 'true', 'string')).toEqual(['A', 'B']);
    expect((await client.get(`/projects/${project}/documents`, { filterColumn: 'size', filterOperation: 'equals', filterSearchTerm: 'ten', columnType: 'int' })).status).toBe(400);
    expect((await client.get(`/projects/${project}/documents`, { filterColumn: 'size', filterOperation: 'about', filterSearchTerm: '1' })).status).toBe(400);
  });
});

describe('a listing read page after page', () => {
  const page = async (project: string, pageNumber: number, pageSize: number, desc = true) => {
    const res = await client.get(`/projects/${project}/documents`, { flattenList: 'true', pageNumber: String(pageNumber), pageSize: String(pageSize), desc: String(desc) });
    expect(res.status).toBe(200);
    return res.body as { items: { objectIdentifier: string }[]; totalCount: number };
  };
  const ids = (p: { items: { objectIdentifier: string }[] }) => p.items.map((d) => d.objectIdentifier);
  /** A project of `count` documents, processed: with nothing written between pages, each goes on from the last one's end. */
  const processedProject = async (name: string, count: number) => {
    const project = await newProject(name);
    const uploadIdentifier = randomUUID();
    for (let i = 0; i < count; i++) expect((await client.upload(project, `doc-${i}.txt`, `content ${i}`, { uploadIdentifier })).status).toBe(200);
    expect(await client.processed(project, uploadIdentifier)).toHaveLength(count);
    return { project, uploadIdentifier };
  };

  it('gives each document once, in the order of one whole page, both ways; a write between pages is seen as OFFSET sees it', async () => {
    const { project, uploadIdentifier } = await processedProject('Walked page by page', 25);
    for (const desc of [true, false]) {
      const whole = ids(await page(project, 1, 100, desc));
      expect(whole).toHaveLength(25);
      const walked: string[] = [];
      for (let n = 1; n <= 3; n++) walked.push(...ids(await page(project, n, 10, desc)));
      expect(walked).toEqual(whole);
    }
    // Page 1, then a document more (newest first: it is the new first), then page 2: the page
    // after the write is the one OFFSET gives over the new list, as it always was.
    const first = ids(await page(project, 1, 10));
    expect((await client.upload(project, 'late.txt', 'late', { uploadIdentifier })).status).toBe(200);
    const now = ids(await page(project, 1, 100));
    expect(ids(await page(project, 2, 10))).toEqual(now.slice(10, 20));
    expect(now.slice(1, 11)).toEqual(first);
  });

  it('gives the right page when pages asked ahead arrive out of order', async () => {
    const { project } = await processedProject('Walked out of order', 23);
    for (const desc of [true, false]) {
      const whole = ids(await page(project, 1, 100, desc));
      // Page 3 before page 2 (as two connections asking ahead can deliver them), then 5 before 4, the last one short; page 2 again.
      for (const n of [1, 3, 2, 5, 4, 2]) expect(ids(await page(project, n, 5, desc)), `page ${n}`).toEqual(whole.slice((n - 1) * 5, n * 5));
    }
  });
});
