// The pool slot goes with the calls an item makes (src/slots.ts): a retry waited out by the upload
// of a copied document, by its download at the source, or by a pull's download gives the slot
// back meanwhile. A slot that records what it was asked stands in for the pool's.
import { mkdtemp, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { ProjectDestination } from '../../src/backends/project/destination.js';
import { ProjectSource } from '../../src/backends/project/source.js';
import { LocalFolderDestination } from '../../src/backends/local/destination.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';
import type { Slot } from '../../src/slots.js';
import type { FileEntry } from '../../src/sync/types.js';
import { mirroredProject, remoteFiles, useService } from '../helpers/service.js';

const service = useService();
const stores: SqliteCheckpointStore[] = [];
afterEach(() => {
  service().emulator.setFaults({});
  for (const s of stores.splice(0)) s.close();
});

async function newStore(): Promise<SqliteCheckpointStore> {
  const store = new SqliteCheckpointStore(join(await mkdtemp(join(tmpdir(), 'ferry-slots-')), 'state.sqlite'));
  stores.push(store);
  return store;
}

function recordingSlot(): Slot & { released: number } {
  const slot = {
    waitedMs: 0,
    retries: 0,
    released: 0,
    async releaseWhile<T>(wait: () => Promise<T>): Promise<T> {
      slot.released++;
      return wait();
    },
  };
  return slot;
}

/** The one document of a fresh source project, as a migration or a pull lists it. */
async function copiedEntry(): Promise<{ entry: FileEntry; contentPath: string }> {
  const client = service().client({ retry: { maxRetries: 3, baseDelayMs: 1, maxDelayMs: 2 } });
  const project = await mirroredProject(client, await mkdtemp(join(tmpdir(), 'ferry-slots-src-')), { 'd/report.txt': 'the report' }, 'slots source');
  const source = new ProjectSource(client, project);
  for await (const entry of source.entries()) {
    if (entry.kind !== 'file') continue;
    const [doc] = await remoteFiles(client, project);
    return { entry, contentPath: new URL(doc!.url!).pathname };
  }
  throw new Error('the source project lists no file');
}

const refusedOnce = (method: string, path: string | RegExp) => ({ kind: '429' as const, method, path, times: 1 });

describe("a work item's slot", () => {
  it('is given back while a copied document waits out a refused download and a refused upload', async () => {
    const { entry, contentPath } = await copiedEntry();
    const client = service().client({ retry: { maxRetries: 3, baseDelayMs: 1, maxDelayMs: 2 } });
    const target = (await client.projects.create({ name: 'slots target', description: 'slots' })).objectIdentifier;
    const destination = new ProjectDestination({ client, store: await newStore(), project: target, jobKey: 'slots', base: '', markers: 'origin', findPresent: false });
    await destination.prepare();
    const placement = await destination.place(entry);
    service().emulator.setFaults({ rules: [refusedOnce('GET', contentPath), refusedOnce('POST', new RegExp(`^/projects/${target}/documents$`))] });
    const slot = recordingSlot();
    const written = await destination.write(entry, placement, { uploadId: crypto.randomUUID(), previous: null, claimed: new Set<string>(), slot });
    expect(written.remoteId).toMatch(/[0-9a-f-]{36}/);
    // One wait for the download, one for the upload; each made without the slot.
    expect(slot.retries).toBe(2);
    expect(slot.released).toBe(2);
  });

  it('is given back while a pulled document waits out a refused download', async () => {
    const { entry, contentPath } = await copiedEntry();
    const root = await mkdtemp(join(tmpdir(), 'ferry-slots-pull-'));
    const destination = new LocalFolderDestination({ root, store: await newStore(), jobKey: 'slots pull' });
    await destination.prepare();
    const placement = await destination.place(entry);
    service().emulator.setFaults({ rules: [refusedOnce('GET', contentPath)] });
    const slot = recordingSlot();
    await destination.write(entry, placement, { slot });
    expect(await readFile(join(root, 'd', 'report.txt'), 'utf8')).toBe('the report');
    expect(slot.retries).toBe(1);
    expect(slot.released).toBe(1);
  });
});
