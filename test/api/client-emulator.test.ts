// The typed client against the emulator: every API part through the library a user would call,
// over real HTTP, with every response checked against the contract.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { FerryClient, NotFoundError, PermissionDeniedError, BadRequestError } from '../../src/api/index.js';
import { collect } from '../helpers/test-server.js';
import { startService, type Service } from '../helpers/service.js';
import type { Document } from '../../src/api/types.js';

let service: Service;
let client: FerryClient;
let project: string;
let model: string;

beforeAll(async () => {
  service = await startService();
  client = service.client();
  project = service.project;
  model = (await collect(client.models.list())).find((m) => m.name === 'Ferry Mini')!.objectIdentifier;
});
afterAll(() => service.close());
afterEach(() => expect(service.emulator.contractViolations).toEqual([]));

const text = (s: string) => ({ stream: Readable.from([Buffer.from(s)]), size: Buffer.byteLength(s), filename: 'x' });

async function processed(batch: string): Promise<Document[]> {
  for (let i = 0; i < 200; i++) {
    const docs = await collect(client.documents.list(project, { uploadObjectIdentifier: batch, flattenList: true }));
    if (docs.every((d) => !d.uploadInProgress)) return docs;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('processing did not end');
}

describe('client against the emulator', () => {
  it('projects: create, get, update, list across pages, personal project, analytics, delete', async () => {
    const made = await Promise.all(Array.from({ length: 7 }, (_, i) => client.projects.create({ name: `paging ${i}`, description: 'd' })));
    const listed = await collect(client.projects.list({ searchText: 'paging' }, { pageSize: 3 }));
    expect(listed.map((p) => p.objectIdentifier).sort()).toEqual(made.map((p) => p.objectIdentifier).sort());
    const one = made[0]!.objectIdentifier;
    expect((await client.projects.update(one, { name: 'renamed', description: 'd2' })).name).toBe('renamed');
    expect((await client.projects.get(one)).description).toBe('d2');
    expect((await client.projects.myPersonal()).isPersonal).toBe(true);
    expect((await client.projects.analytics(one)).documentCount).toBe(0);
    await client.projects.delete(one);
    await expect(client.projects.get(one)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('documents: upload, wait for processing, filter, download, record a failed upload', async () => {
    const batch = randomUUID();
    const folder = await client.documents.createFolder(project, `client ${batch}`);
    const doc = await client.documents.upload(project, { ...text('hello from the client'), filename: 'hello.txt' }, {
      documentUploadIdentifier: batch,
      parentObjectIdentifier: folder.objectIdentifier!,
      ocrStrategy: 'never',
      metadata: { origin: 'client test' },
    });
    expect(doc.uploadInProgress).toBe(true);
    const [done] = await processed(batch);
    expect(done).toMatchObject({ name: 'hello.txt', uploadSuccessful: true, parentObjectIdentifier: folder.objectIdentifier });
    expect(done!.metadata).toEqual([expect.objectContaining({ key: 'origin', value: 'client test' })]);
    const content = await client.documents.download(done!);
    expect(Buffer.concat(await content.body.toArray()).toString()).toBe('hello from the client');
    const inFolder = await collect(client.documents.list(project, { parentObjectIdentifier: folder.objectIdentifier!, includePath: true }));
    expect(inFolder.map((d) => d.path)).toEqual([`/client ${batch}/hello.txt`]);
    const failed = await client.documents.recordFailed(project, { fileName: 'lost.pdf', contentType: 'application/pdf', size: 10, documentUploadObjectIdentifier: batch });
    expect(failed.uploadFailedReason).toBe('uploadFailure');
  });

  it('organization metadata options: the whole lifecycle', async () => {
    const definition = service.emulator.tenants[0]!.organizationMetadata.find((m) => m.dataType === 'singleCategory')!.objectIdentifier;
    const option = await client.organizationMetadataOptions.create(definition, 'Option from client');
    expect((await client.organizationMetadataOptions.get(definition, option.objectIdentifier)).name).toBe('Option from client');
    await client.organizationMetadataOptions.update(definition, option.objectIdentifier, 'Renamed option');
    const all = await collect(client.organizationMetadataOptions.list(definition));
    expect(all.map((o) => o.name)).toContain('Renamed option');
    await client.organizationMetadataOptions.delete(definition, option.objectIdentifier);
    await expect(client.organizationMetadataOptions.get(definition, option.objectIdentifier)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('models: filters and lookups on the settings host', async () => {
    const enabled = await collect(client.models.list());
    const all = await collect(client.models.list({ includeDisabled: true }));
    expect(all.length).toBeGreaterThan(enabled.length);
    const picked = await client.models.getByIdentifiers([model]);
    expect(picked.map((m) => m.objectIdentifier)).toEqual([model]);
    expect((await client.models.get(model)).name).toBe('Ferry Mini');
  });

  it('messages: a reply as one payload, a streamed reply, paging and handoff', async () => {
    const chat = service.emulator.tenants[0]!.assistants[0]!;
    const reply = await client.messages.send(chat, { text: 'Hello there', modelIdentifier: model });
    expect(reply.isAssistant).toBe(true);
    const stream = client.messages.stream(chat, { text: 'Stream this please', modelIdentifier: model });
    const events = await collect(stream);
    expect(events.some((e) => e.event === 'delta')).toBe(true);
    const final = await stream.finalMessage();
    expect(final.isAssistant).toBe(true);
    expect((await client.messages.get(chat, final.objectIdentifier!)).objectIdentifier).toBe(final.objectIdentifier);
    expect((await collect(client.messages.list(chat, {}, { pageSize: 2 }))).length).toBeGreaterThanOrEqual(4);
    const handoff = await client.messages.handoff(chat, { modelIdentifier: model });
    expect(handoff.newChatObjectIdentifier).toBeDefined();
    await expect(client.messages.send(chat, { text: 'x', modelIdentifier: randomUUID() })).rejects.toBeInstanceOf(BadRequestError);
  });

  it('embeddings: deterministic and normalised', async () => {
    const a = await client.embeddings.create({ input: 'bulk onboarding', dimensions: 64 });
    const b = await client.embeddings.create({ input: 'bulk onboarding', dimensions: 64 });
    const v = a.data![0]!.embedding!;
    expect(v).toHaveLength(64);
    expect(b.data![0]!.embedding).toEqual(v);
    expect(Math.abs(Math.hypot(...v) - 1)).toBeLessThan(1e-9);
  });

  it('notifications: list, mark read, delete', async () => {
    service.emulator.notify(service.emulator.tenants[0]!.name, { title: 'Hello', message: 'from the test', type: 'test' });
    const [first] = await collect(client.notifications.list());
    expect(first!.title).toBe('Hello');
    await client.notifications.markRead(first!.objectIdentifier);
    expect((await collect(client.notifications.list())).find((n) => n.objectIdentifier === first!.objectIdentifier)!.isRead).toBe(true);
    await client.notifications.delete(first!.objectIdentifier);
    expect((await collect(client.notifications.list())).some((n) => n.objectIdentifier === first!.objectIdentifier)).toBe(false);
  });

  it('a read-only client is refused writes with PermissionDeniedError', async () => {
    const t = service.emulator.tenants[0]!;
    const reader = new FerryClient({
      address: { baseUrl: service.emulator.baseUrl, settingsUrl: service.emulator.settingsUrl, authUrl: service.emulator.authUrl },
      credentials: { clientId: t.readOnlyClientId, clientSecret: t.readOnlyClientSecret, audience: service.emulator.audience },
    });
    await expect(reader.projects.create({ name: 'no', description: 'no' })).rejects.toBeInstanceOf(PermissionDeniedError);
    expect((await reader.projects.get(project)).objectIdentifier).toBe(project);
    await reader.close();
  });
});
