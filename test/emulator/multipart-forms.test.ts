// The multipart routes read their forms with @fastify/multipart: parts in any order, files
// streamed, malformed bodies refused with 400 ProblemDetails.
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EmulatorHandle } from '../../src/emulator/index.js';
import { type Client, clientFor, expectNoContractViolations, projectOf, startTestEmulator } from './helpers.js';
import { sendForm } from './playbook-helpers.js';

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

  it('reads a quoted file name as an RFC 7230 quoted-string, percent signs literally, filename* when alone', async () => {
    const named = (disposition: string) => `--xyz\r\nContent-Disposition: form-data; name="file"; ${disposition}\r\n\r\nx\r\n--xyz--\r\n`;
    const cases: [string, string][] = [
      [String.raw`filename="the \"final\" report.txt"`, 'the "final" report.txt'],
      [String.raw`filename="back\\slash"`, String.raw`back\slash`],
      [String.raw`filename="\\\\"`, String.raw`\\`],
      ['filename="a%22b%0A.txt"', 'a%22b%0A.txt'],
      ['filename=" "', ' '],
      ['filename="\ufeff"', '\ufeff'],
      ["filename*=UTF-8''line%E2%80%A8sep%25.txt", 'line\u2028sep%.txt'],
      // busboy reads a quoted filename first and stops there.
      ["filename=\"fallback.txt\"; filename*=UTF-8''other.txt", 'fallback.txt'],
    ];
    for (const [disposition, name] of cases) {
      const res = await rawUpload(randomUUID(), named(disposition));
      expect(res.status, disposition).toBe(200);
      expect(res.body.name, disposition).toBe(name);
    }
    // What a browser (undici's FormData) sends for a quote, %22, is read literally: the documented choice.
    const browser = await sendForm(client, 'POST', uploadPath(randomUUID()), [{ name: 'file', file: 'x', fileName: 'the "final" report.txt' }]);
    expect(browser.body.name).toBe('the %22final%22 report.txt');
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
