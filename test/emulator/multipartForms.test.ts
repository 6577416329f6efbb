// The multipart routes read their forms with @fastify/multipart: parts in any order, files
// streamed, malformed bodies refused with 400 ProblemDetails.
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EmulatorHandle } from '../../src/emulator/index.js';
import { type Client, clientFor, expectNoContractViolations, projectOf, startTestEmulator } from './helpers.js';
import { sendForm } from './playbookHelpers.js';

let handle: EmulatorHandle;
let client: Client;
let project: string;

beforeAll(async () => {
  handle = await startTestEmulator();
  client = await clientFor(handle);
  project = projectOf(handle);
});
afterAll(() => handle.close());
afterEach(() => expectNoContractViolations(handle));

const uploadPath = (uploadIdentifier: string) => `/projects/${project}/documents?documentUploadIdentifier=${uploadIdentifier}`;

function rawUpload(uploadIdentifier: string, body: string) {
  return client.call('POST', `/projects/${project}/documents`, {
    query: { documentUploadIdentifier: uploadIdentifier },
    headers: { 'content-type': 'multipart/form-data; boundary=xyz' },
    body,
  });
}

describe('document upload forms', () => {
  it('honours the settings when the file part comes before them', async () => {
    const uploadIdentifier = randomUUID();
    const res = await sendForm(client, 'POST', uploadPath(uploadIdentifier), [
      { name: 'file', file: 'file first', fileName: 'first.txt' },
      { name: 'ocrStrategy', value: 'never' },
      { name: 'coordinateExtractionStrategy', value: 'spreadsheet' },
      { name: 'metadataJson', value: JSON.stringify({ matter: '7' }) },
    ]);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'first.txt', size: 10, ocrStrategy: 'never', coordinateExtractionStrategy: 'spreadsheet', metadata: [{ key: 'matter', value: '7' }] });
    const [document] = await client.processed(project, uploadIdentifier);
    expect((await client.get(`/projects/${project}/documents/${document.objectIdentifier}/content`)).text).toBe('file first');
  });

  it('still checks settings that come after the file, and keeps nothing of a refused upload', async () => {
    const uploadIdentifier = randomUUID();
    const res = await sendForm(client, 'POST', uploadPath(uploadIdentifier), [
      { name: 'file', file: 'content', fileName: 'late.txt' },
      { name: 'ocrStrategy', value: 'sometimes' },
    ]);
    expect(res.status).toBe(400);
    expect((await client.get(`/projects/${project}/documents`, { uploadObjectIdentifier: uploadIdentifier, flattenList: true })).body.totalCount).toBe(0);
  });

  it('deletes the stored file of a form refused after it was read', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'ferry-forms-'));
    const onDisk = await startTestEmulator({ dataDir });
    try {
      const diskClient = await clientFor(onDisk);
      const path = `/projects/${projectOf(onDisk)}/documents?documentUploadIdentifier=${randomUUID()}`;
      const refused = [
        await sendForm(diskClient, 'POST', path, [{ name: 'file', file: 'kept?', fileName: 'a.txt' }, { name: 'ocrEngine', value: 'none' }]),
        await sendForm(diskClient, 'POST', path, [{ name: 'file', file: 'one', fileName: 'a.txt' }, { name: 'file', file: 'two', fileName: 'b.txt' }]),
      ];
      expect(refused.map((res) => res.status)).toEqual([400, 400]);
      expect(await readdir(join(dataDir, 'blobs', 'documents')).catch(() => [])).toEqual([]);
      expectNoContractViolations(onDisk);
    } finally {
      await onDisk.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('decodes the quotes and line breaks browsers percent-encode in file names', async () => {
    const res = await sendForm(client, 'POST', uploadPath(randomUUID()), [{ name: 'file', file: 'x', fileName: 'the "final" report.txt' }]);
    expect(res.status).toBe(200);
    expect(res.body.name).toBe('the "final" report.txt');
  });

  it('refuses malformed forms with 400 ProblemDetails', async () => {
    const file = (name: string, fileName: string, content: string) =>
      `--xyz\r\nContent-Disposition: form-data; name="${name}"; filename="${fileName}"\r\n\r\n${content}\r\n`;
    const bodies = [
      // truncated in the middle of the file
      `--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhalf of it`,
      // a part without a name
      `--xyz\r\nContent-Disposition: form-data\r\n\r\nvalue\r\n${file('file', 'a.txt', 'x')}--xyz--\r\n`,
      // two files
      `${file('file', 'a.txt', 'x')}${file('file', 'b.txt', 'y')}--xyz--\r\n`,
      // a file where a setting is expected
      `${file('ocrStrategy', 'a.txt', 'never')}${file('file', 'a.txt', 'x')}--xyz--\r\n`,
      // no file name
      `${file('file', '', 'x')}--xyz--\r\n`,
      // not multipart at all
      'garbage',
      // more parts than the limit
      `${Array.from({ length: 101 }, (_, i) => `--xyz\r\nContent-Disposition: form-data; name="f${i}"\r\n\r\nv\r\n`).join('')}${file('file', 'a.txt', 'x')}--xyz--\r\n`,
      // a field over the limit
      `--xyz\r\nContent-Disposition: form-data; name="metadataJson"\r\n\r\n${'x'.repeat(1024 * 1024 + 1)}\r\n${file('file', 'a.txt', 'x')}--xyz--\r\n`,
    ];
    for (const body of bodies) {
      const res = await rawUpload(randomUUID(), body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ status: 400, title: 'Bad Request' });
    }
    const noBoundary = await client.call('POST', `/projects/${project}/documents`, {
      query: { documentUploadIdentifier: randomUUID() },
      headers: { 'content-type': 'multipart/form-data' },
      body: '--xyz--\r\n',
    });
    expect(noBoundary.status).toBe(400);
  });
});
