// Every path ferry takes where the spec leaves the service's behaviour open, proven against an
// emulator that gives the other answer: folder creation refused in any of the ways a service or a
// gateway refuses an unknown route, dateCompleted set at the PATCH, streams without a final
// message or answered as plain JSON, document content only through a signed `url`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { PassThrough } from 'node:stream';
import { pino } from 'pino';
import { mirror } from '../../jobs/mirror.js';
import { batchProcessed, upload } from '../../jobs/upload.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';
import { STRICT, remoteFiles, remoteFolders, startService, writeTree, type Service } from '../helpers/service.js';

const TREE = { 'a/one.txt': 'one', 'a/b/two.txt': 'two two', 'c/two.txt': 'another two', 'top.txt': 'top' };

describe('folder creation refused', () => {
  let service: Service;
  beforeAll(async () => {
    service = await startService();
  });
  afterAll(() => service.close());

  for (const status of ['403', '404', '501'] as const) {
    it(`HTTP ${status}: one probe, a warning naming the consequence, every file flattened with its path, a rerun uploads nothing`, async () => {
      const dir = await mkdtemp(join(tmpdir(), 'ferry-fallback-'));
      await writeTree(join(dir, 'src'), TREE);
      const lines: string[] = [];
      const sink = new PassThrough().on('data', (d: Buffer) => lines.push(...d.toString().split('\n').filter(Boolean)));
      const client = service.client({ logger: pino({ level: 'warn' }, sink) });
      const project = (await client.projects.create({ name: `refused ${status}`, description: '' })).objectIdentifier;
      service.emulator.setFaults({ rules: [{ kind: status, method: 'POST', path: `/projects/${project}/folders` }] });
      const store = new SqliteCheckpointStore(join(dir, 'state.sqlite'));
      const first = await mirror({ source: join(dir, 'src'), project, to: 'Imports' }, { client, store });
      expect(first.status).toBe('succeeded');
      expect(first.counts).toMatchObject({ discovered: 4, uploaded: 4, failed: 0 });
      expect(first.folders).toMatchObject({ creationUnavailable: true, creationRefused: Number(status), created: 0 });
      const warnings = lines.map((l) => JSON.parse(l) as { msg: string }).filter((l) => l.msg.includes('refused folder creation'));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]!.msg).toContain(`HTTP ${status}`);
      expect(warnings[0]!.msg).toContain('ferry.relativePath');
      // The one documented format: the path under the project root, --to included.
      const docs = await remoteFiles(client, project);
      expect(docs.map((d) => d.path).sort()).toEqual(['/Imports/a/b/two.txt', '/Imports/a/one.txt', '/Imports/c/two.txt', '/Imports/top.txt']);
      const raw = await client.documents.list(project, { flattenList: true, includePath: true }).all();
      expect(raw.filter((d) => !d.isDirectory).map((d) => d.metadata?.find((m) => m.key === 'ferry.relativePath')?.value).sort()).toEqual(['Imports/a/b/two.txt', 'Imports/a/one.txt', 'Imports/c/two.txt', 'Imports/top.txt']);
      expect(await remoteFolders(client, project)).toEqual([]);
      const again = await mirror({ source: join(dir, 'src'), project, to: 'Imports' }, { client, store });
      expect(again.counts).toMatchObject({ uploaded: 0, unchanged: 4 });
      expect(await remoteFiles(client, project)).toHaveLength(4);
      store.close();
      service.emulator.setFaults({});
    });
  }
});

describe('one folder refused (HTTP 400)', () => {
  let service: Service;
  beforeAll(async () => {
    service = await startService();
  });
  afterAll(() => service.close());

  it('flattens that folder only, names it, and keeps creating the others', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-fallback-'));
    // The emulator refuses a folder name holding a backslash (400); a file may hold one.
    await writeTree(join(dir, 'src'), { 'back\\slash/in.txt': 'in', 'ok/fine.txt': 'fine', 'ok/deeper/more.txt': 'more' });
    const client = service.client();
    const project = (await client.projects.create({ name: 'one refused', description: '' })).objectIdentifier;
    const store = new SqliteCheckpointStore(join(dir, 'state.sqlite'));
    try {
      const first = await mirror({ source: join(dir, 'src'), project }, { client, store });
      expect(first.counts).toMatchObject({ discovered: 3, uploaded: 3, failed: 0 });
      const docs = await remoteFiles(client, project);
      expect(docs.map((d) => d.path).sort()).toEqual(['/back\\slash/in.txt', '/ok/deeper/more.txt', '/ok/fine.txt']);
      // No folders at all under the strict emulator (covered above): only the default creates them.
      if (!STRICT) expect(first.folders).toMatchObject({ creationUnavailable: false, created: 2, flattened: 1, refused: [{ path: 'back\\slash', why: expect.stringContaining('HTTP 400') }] });
      expect(await remoteFolders(client, project)).toEqual(STRICT ? [] : ['/ok', '/ok/deeper']);
      const again = await mirror({ source: join(dir, 'src'), project }, { client, store });
      expect(again.counts).toMatchObject({ uploaded: 0, unchanged: 3 });
    } finally {
      store.close();
    }
  });
});

describe('a batch whose dateCompleted is set at the PATCH', () => {
  it('is over only when the counters say every expected document settled', () => {
    const early = { dateCompleted: '2026-11-22T00:00:00Z', processingDocumentCount: 0, completedDocumentCount: 3, failedDocumentCount: 1 };
    expect(batchProcessed(early, 6)).toBe(false);
    expect(batchProcessed({ ...early, completedDocumentCount: 5 }, 6)).toBe(true);
    expect(batchProcessed({ ...early, processingDocumentCount: 2, completedDocumentCount: 5 }, 6)).toBe(false);
    // Without the number (ferry watch): the batch's own total, once dateCompleted says no more will come.
    expect(batchProcessed({ ...early, totalDocumentCount: 6 }, undefined)).toBe(false);
    expect(batchProcessed({ ...early, totalDocumentCount: 4 }, undefined)).toBe(true);
    expect(batchProcessed({ ...early, totalDocumentCount: 4, dateCompleted: null }, undefined)).toBe(false);
  });

  it('ferry upload waits for every document although the service calls the batch complete at once', async () => {
    const service = await startService({ dateCompleted: 'at-patch', processing: { minDelayMs: 150, maxDelayMs: 300, seed: 3 } });
    try {
      const dir = await mkdtemp(join(tmpdir(), 'ferry-fallback-'));
      const files: Record<string, string> = {};
      for (let i = 0; i < 8; i++) files[`f${i}.txt`] = `file ${i}`;
      await writeTree(join(dir, 'src'), files);
      const client = service.client();
      const project = (await client.projects.create({ name: 'at patch', description: '' })).objectIdentifier;
      const playbook = (await client.playbooks.create({ name: 'at patch', isPrivate: false, organizationWide: true })).objectIdentifier;
      const polls: { processing: number; completed: boolean }[] = [];
      const store = new SqliteCheckpointStore(join(dir, 'state.sqlite'));
      const result = await upload(
        { source: join(dir, 'src'), project, playbook, firstPollMs: 20, onPoll: (d) => polls.push({ processing: d.processingDocumentCount ?? 0, completed: Boolean(d.dateCompleted) }) },
        { client, store },
      );
      store.close();
      // The service said "complete" while documents were still processing; ferry kept waiting.
      expect(polls.some((p) => p.completed && p.processing > 0)).toBe(true);
      const details = await client.documentUploads.details(playbook, result.batches[0]!.uploadIdentifier);
      expect(details.processingDocumentCount).toBe(0);
      expect((details.completedDocumentCount ?? 0) + (details.failedDocumentCount ?? 0)).toBe(8);
      expect(result.batches[0]!.report).toBeDefined();
    } finally {
      await service.close();
    }
  });
});

describe('a streamed reply', () => {
  for (const streamFormat of ['no-final', 'json', 'events'] as const) {
    it(`--stream-format ${streamFormat}: finalMessage() is the assistant's reply`, async () => {
      const service = await startService({ streamFormat });
      try {
        const client = service.client();
        const tenant = service.emulator.tenants[0]!;
        const chat = { projectIdentifier: tenant.assistants[0]!.projectIdentifier, assistantIdentifier: tenant.assistants[0]!.assistantIdentifier };
        const model = (await client.models.list().all())[0]!.objectIdentifier;
        const stream = client.messages.stream(chat, { text: `hello in ${streamFormat}`, modelIdentifier: model });
        let events = 0;
        for await (const _ of stream) events++;
        const reply = await stream.finalMessage();
        expect(reply.isAssistant).toBe(true);
        expect(reply.text).toBeTruthy();
        const stored = await client.messages.get(chat, reply.objectIdentifier!);
        expect(stored.text).toBe(reply.text);
        if (streamFormat === 'json') expect(events).toBe(0);
        else expect(events).toBeGreaterThan(0);
      } finally {
        await service.close();
      }
    });
  }
});

describe('document content through url only (strict)', () => {
  it('has no content route; url is a signed link the client reads', async () => {
    const service = await startService({ strict: true });
    try {
      const dir = await mkdtemp(join(tmpdir(), 'ferry-fallback-'));
      await writeTree(join(dir, 'src'), { 'x.txt': 'the bytes' });
      const client = service.client();
      const project = (await client.projects.create({ name: 'strict url', description: '' })).objectIdentifier;
      const store = new SqliteCheckpointStore(join(dir, 'state.sqlite'));
      await mirror({ source: join(dir, 'src'), project }, { client, store });
      store.close();
      const [doc] = await remoteFiles(client, project);
      expect(new URL(doc!.url!).pathname).toMatch(/^\/_blobs\//);
      const viaRoute = client.transport.stream({ method: 'GET', path: `/projects/${project}/documents/${doc!.objectIdentifier}/content` });
      await expect(viaRoute).rejects.toMatchObject({ status: 404 });
      const res = await client.documents.download(doc!);
      expect((await res.body.toArray()).join('')).toBe('the bytes');
    } finally {
      await service.close();
    }
  });
});
