// Finding an interrupted upload on the service: by batch, name, folder and size, never the
// document the file already had.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { BatchIndex, findLanded } from '../../src/backends/project/landed.js';
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
});
