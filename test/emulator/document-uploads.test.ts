import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EmulatorHandle } from '../../src/emulator/index.js';
import { type Client, clientFor, expectNoContractViolations, projectOf, startTestEmulator } from './helpers.js';
import { pdf, waitForNotification } from './playbook-helpers.js';

// Built from two halves so that this file itself is not the EICAR test file.
const EICAR = String.raw`X5O!P%@AP[4\PZX54(P^)7CC)7}$` + String.raw`EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*`;
const OCR_PAGE_LIMIT = 5;
const REASONS = [
  'outOfMemory',
  'unsupportedFileType',
  'badFile',
  'uploadFailure',
  'ocrPageLimitExceeded',
  'unknownException',
  'insufficientCredits',
  'maliciousFile',
  'fileScanTimedOut',
];

let handle: EmulatorHandle;
let client: Client;
let project: string;

beforeAll(async () => {
  handle = await startTestEmulator({ processing: { minDelayMs: 1, maxDelayMs: 5, seed: 3, ocrPageLimit: OCR_PAGE_LIMIT } });
  client = await clientFor(handle);
  project = projectOf(handle);
});
afterAll(() => handle.close());
afterEach(() => expectNoContractViolations(handle));

async function newPlaybook(c = client): Promise<string> {
  const res = await c.post('/playbooks', { name: `Uploads ${randomUUID()}`, isPrivate: false, organizationWide: false });
  expect(res.status).toBe(201);
  return res.body.objectIdentifier;
}

async function newUpload(playbook: string, c = client, body: object = { name: 'Batch', fileCount: 2 }): Promise<any> {
  const res = await c.post(`/playbooks/${playbook}/document-uploads`, body);
  expect(res.status).toBe(201);
  return res.body;
}

describe('document uploads', () => {
  it('creates (201), lists as a bare array, reads and deletes (204) uploads', async () => {
    const playbook = await newPlaybook();
    const base = `/playbooks/${playbook}/document-uploads`;
    const first = await newUpload(playbook, client, { name: 'First batch' });
    expect(first).toEqual({ objectIdentifier: expect.any(String), name: 'First batch', dateAdded: expect.any(String), dateCompleted: null, fileCount: null });
    const second = await newUpload(playbook, client, { name: 'Second batch', fileCount: 3 });
    expect((await client.get(base)).body).toEqual([second, first]);
    expect((await client.get(base, { sorting: 'name', desc: false })).body).toEqual([first, second]);
    expect((await client.get(base, { searchText: 'SECOND' })).body).toEqual([second]);
    expect((await client.get(base, { pageSize: 1, pageNumber: 2 })).body).toEqual([first]);
    expect((await client.get(`${base}/${first.objectIdentifier}`)).body).toEqual(first);
    expect((await client.post(base, { fileCount: 1 })).status).toBe(400);
    expect((await client.delete(`${base}/${first.objectIdentifier}`)).status).toBe(204);
    expect((await client.get(`${base}/${first.objectIdentifier}`)).status).toBe(404);
    expect((await client.get(`${base}/${first.objectIdentifier}/details`)).status).toBe(404);
    expect((await client.patch(`${base}/${first.objectIdentifier}/complete`, undefined)).status).toBe(404);
  });

  it('completes at once when nothing is processing, notifies once, and counts later documents', async () => {
    const playbook = await newPlaybook();
    const upload = await newUpload(playbook);
    const base = `/playbooks/${playbook}/document-uploads/${upload.objectIdentifier}`;
    await client.upload(project, 'a.txt', 'alpha', { uploadIdentifier: upload.objectIdentifier });
    await client.processed(project, upload.objectIdentifier);
    const completed = await client.call('PATCH', `${base}/complete`);
    expect(completed.status).toBe(200);
    expect(completed.body).toMatchObject({ objectIdentifier: upload.objectIdentifier, dateCompleted: expect.any(String) });
    const again = await client.call('PATCH', `${base}/complete`);
    expect(again.body.dateCompleted).toBe(completed.body.dateCompleted);
    const notification = await waitForNotification(client, (n) => n.resourceIdentifiers.documentUploadObjectIdentifier === upload.objectIdentifier);
    expect(notification).toMatchObject({
      type: 'documentUploadCompleted',
      isRead: false,
      resourceIdentifiers: { playbookObjectIdentifier: playbook, documentUploadObjectIdentifier: upload.objectIdentifier },
    });
    expect(notification.message).toContain('1 completed');

    // A document that joins a completed upload is accepted and counted; the upload stays complete.
    await client.upload(project, 'late.txt', 'late', { uploadIdentifier: upload.objectIdentifier });
    await client.processed(project, upload.objectIdentifier);
    const details = (await client.get(`${base}/details`)).body;
    expect(details).toMatchObject({ totalDocumentCount: 2, completedDocumentCount: 2, dateCompleted: completed.body.dateCompleted });
    const all = (await client.get('/notifications', { pageSize: 1000 })).body;
    expect(all.filter((n: any) => n.resourceIdentifiers.documentUploadObjectIdentifier === upload.objectIdentifier)).toHaveLength(1);
  });

  it('sets dateCompleted only once the documents still processing at complete time have finished', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'ferry-uploads-'));
    try {
      // First run: processing never gets to run, so complete finds both documents processing.
      const stalled = await startTestEmulator({ dataDir, processing: { minDelayMs: 3_600_000, maxDelayMs: 3_600_000 } });
      const stalledClient = await clientFor(stalled);
      const playbook = await newPlaybook(stalledClient);
      const upload = await newUpload(playbook, stalledClient);
      const base = `/playbooks/${playbook}/document-uploads/${upload.objectIdentifier}`;
      for (const name of ['a.txt', 'b.txt']) await stalledClient.upload(projectOf(stalled), name, name, { uploadIdentifier: upload.objectIdentifier });
      const completed = await stalledClient.call('PATCH', `${base}/complete`);
      expect(completed.status).toBe(200);
      expect(completed.body.dateCompleted).toBeNull();
      expect((await stalledClient.get(`${base}/details`)).body).toMatchObject({ dateCompleted: null, processingDocumentCount: 2, totalDocumentCount: 2 });
      expectNoContractViolations(stalled);
      await stalled.close();

      // Second run: processing resumes; the last document to finish completes the upload.
      const resumed = await startTestEmulator({ dataDir });
      try {
        const resumedClient = await clientFor(resumed);
        const notification = await waitForNotification(resumedClient, (n) => n.resourceIdentifiers.documentUploadObjectIdentifier === upload.objectIdentifier);
        expect(notification.type).toBe('documentUploadCompleted');
        const details = (await resumedClient.get(`${base}/details`)).body;
        expect(details).toMatchObject({ processingDocumentCount: 0, completedDocumentCount: 2, failedDocumentCount: 0, fileTypeSummary: { text: 2 } });
        expect(Date.parse(details.dateCompleted)).toBeGreaterThanOrEqual(Date.parse(details.dateAdded));
        expectNoContractViolations(resumed);
      } finally {
        await resumed.close();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('failure reasons in the document and in the upload details', () => {
  const cases: { reason: string; rule: string; name: string; content: string | Uint8Array; fields?: Record<string, string>; before?: () => void; after?: () => void }[] = [
    { reason: 'unsupportedFileType', rule: 'extension outside the supported list', name: 'tool.exe', content: 'MZ' },
    { reason: 'maliciousFile', rule: 'EICAR test string', name: 'report.txt', content: `header ${EICAR} trailer` },
    { reason: 'badFile', rule: 'empty file', name: 'empty.txt', content: '' },
    { reason: 'badFile', rule: '.pdf without a PDF header', name: 'fake.pdf', content: 'not a pdf at all' },
    {
      reason: 'insufficientCredits',
      rule: 'no credits left',
      name: 'notes.txt',
      content: 'text',
      before: () => handle.setCredits('contoso', 0),
      after: () => handle.setCredits('contoso', 1_000_000),
    },
    { reason: 'ocrPageLimitExceeded', rule: 'more pages than the OCR limit with ocrStrategy=always', name: 'long.pdf', content: pdf(OCR_PAGE_LIMIT + 1), fields: { ocrStrategy: 'always' } },
    { reason: 'outOfMemory', rule: 'name trigger', name: 'big__fail_outOfMemory__.txt', content: 'x' },
    { reason: 'uploadFailure', rule: 'name trigger', name: 'x__fail_uploadFailure__.txt', content: 'x' },
    { reason: 'unknownException', rule: 'name trigger', name: 'x__fail_unknownException__.txt', content: 'x' },
    {
      reason: 'fileScanTimedOut',
      rule: 'fault setting failReasons',
      name: 'scan.txt',
      content: 'x',
      before: () => handle.setFaults({ failReasons: { fileScanTimedOut: 1 } }),
      after: () => handle.setFaults({}),
    },
  ];

  it.each(cases)('$reason ($rule)', async ({ reason, name, content, fields, before, after }) => {
    const playbook = await newPlaybook();
    const upload = await newUpload(playbook);
    before?.();
    try {
      const res = await client.upload(project, name, content, { uploadIdentifier: upload.objectIdentifier, ...(fields ? { fields } : {}) });
      expect(res.status).toBe(200);
      const [document] = await client.processed(project, upload.objectIdentifier);
      expect(document).toMatchObject({ uploadSuccessful: false, uploadFailedReason: reason });
    } finally {
      after?.();
    }
    const details = await client.get(`/playbooks/${playbook}/document-uploads/${upload.objectIdentifier}/details`);
    expect(details.status).toBe(200);
    expect(details.body).toMatchObject({ totalDocumentCount: 1, failedDocumentCount: 1, completedDocumentCount: 0, processingDocumentCount: 0 });
    expect(details.body.failedReasonSummary).toEqual(Object.fromEntries(REASONS.map((r) => [r, r === reason ? 1 : 0])));
  });
});
