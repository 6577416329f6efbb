// Finding an interrupted upload on the service: by batch, name, folder and size, never the
// document the file already had.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { Writable } from 'node:stream';
import pino from 'pino';
import { BatchIndex, LandedLookups, findLanded } from '../../src/backends/project/landed.js';
import { startService, type Service } from '../helpers/service.js';

let service: Service;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.close());

describe('settling uploads', () => {
  it('finds a landed document, but never the one the file already had', async () => {
    const client = service.client();
    const project = (await client.projects.create({ name: 'settle', description: 's' })).objectIdentifier;
    const batch = randomUUID();
    const send = (content: string) =>
      client.documents.upload(project, { stream: Readable.from([Buffer.from(content)]), size: content.length, filename: 'same.txt' }, { documentUploadIdentifier: batch });
    const old = await send('abc');
    const wanted = { name: 'same.txt', parentId: null, size: 3 };

    expect((await findLanded(client, project, batch, wanted, new Set()))?.objectIdentifier).toBe(old.objectIdentifier);
    // The file changed but kept its size: its old document is not proof that the new upload landed.
    expect(await findLanded(client, project, batch, { ...wanted, notId: old.objectIdentifier }, new Set())).toBeUndefined();
    expect(await findLanded(client, project, batch, wanted, new Set([old.objectIdentifier!]))).toBeUndefined();
    expect(await findLanded(client, project, batch, { ...wanted, size: 4 }, new Set())).toBeUndefined();

    const fresh = await send('xyz');
    const index = await BatchIndex.load(client, project, batch);
    expect(index.claim({ ...wanted, notId: old.objectIdentifier })?.objectIdentifier).toBe(fresh.objectIdentifier);
    // Each document settles one item only.
    expect(index.claim({ ...wanted, notId: old.objectIdentifier })).toBeUndefined();
    expect(index.claim(wanted)?.objectIdentifier).toBe(old.objectIdentifier);
  });

  it('shares a listing among lookups whose failures came before it began, never with one after', async () => {
    // Listings counted from the client's own log of its requests (real HTTP to the emulator).
    let listings = 0;
    const logger = pino({ level: 'debug' }, new Writable({
      write(line, _enc, done) {
        const entry = JSON.parse(String(line)) as { msg?: string; method?: string; path?: string };
        if (entry.msg === 'response' && entry.method === 'GET' && entry.path?.endsWith('/documents')) listings++;
        done();
      },
    }));
    const client = service.client({ logger });
    const project = (await client.projects.create({ name: 'shared settle', description: 's' })).objectIdentifier;
    const batch = randomUUID();
    const send = (name: string) => client.documents.upload(project, { stream: Readable.from([Buffer.from(name)]), size: name.length, filename: name }, { documentUploadIdentifier: batch });
    const lookups = new LandedLookups(client, project);
    const wanted = (name: string) => ({ name, parentId: null, size: name.length });

    const a = await send('a.txt');
    // Three uploads failed before any look: one listing answers all three.
    const failedAt = performance.now();
    const [foundA, foundB, foundC] = await Promise.all([lookups.find(batch, wanted('a.txt'), new Set(), failedAt), lookups.find(batch, wanted('b.txt'), new Set(), failedAt), lookups.find(batch, wanted('c.txt'), new Set(), failedAt)]);
    expect(foundA?.objectIdentifier).toBe(a.objectIdentifier);
    expect(foundB).toBeUndefined();
    expect(foundC).toBeUndefined();
    expect(listings).toBe(1);

    // b.txt lands, and its failure comes after that listing began: the listing cannot answer it.
    const b = await send('b.txt');
    const laterFailure = performance.now();
    expect((await lookups.find(batch, wanted('b.txt'), new Set(), laterFailure))?.objectIdentifier).toBe(b.objectIdentifier);
    expect(listings).toBe(2);
    // A failure from before the second listing shares it.
    expect(await lookups.find(batch, wanted('c.txt'), new Set(), laterFailure)).toBeUndefined();
    expect(listings).toBe(2);
  });
});
