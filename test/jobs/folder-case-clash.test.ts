// A Linux tree with folders `sub/` and `SUB/`, mirrored into a service that compares folder names
// regardless of case (the emulator's default, as a case-insensitive database collation would):
// its 409 for the second folder is a clash, named as one, failing that folder's files while the
// rest of the tree goes up, never a listing lag that stops the run. In the case-sensitive mode both
// folders are made.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtemp } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { remoteFiles, startService, writeTree, type Service } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';

const TREE = { 'sub/a.txt': 'lower folder', 'SUB/b.txt': 'upper folder', 'SUB/deeper/c.txt': 'deeper in upper', 'other/d.txt': 'elsewhere', 'top.txt': 'top' };

let service: Service | undefined;
afterEach(async () => {
  await service?.close();
  service = undefined;
});

interface MirrorJson {
  counts: Record<string, number>;
  errors: { key: string; error: string }[];
  folders: { clashes?: { path: string; existing: string }[] };
}

async function mirrorTwice(folderCase: 'insensitive' | 'sensitive'): Promise<{ first: MirrorJson; firstCode: number; again: MirrorJson; paths: string[] }> {
  service = await startService({ strict: false, folders: 'extension', folderCase });
  const src = join(await mkdtemp(join(tmpdir(), 'ferry-clash-')), 'tree');
  await writeTree(src, TREE);
  const client = service.client();
  const project = (await client.projects.create({ name: 'clash', description: '' })).objectIdentifier;
  const state = join(src, '..', 'state.sqlite');
  const first = await runFerry(['mirror', src, '--project', project, '--state', state, '--json'], service.env());
  const again = await runFerry(['mirror', src, '--project', project, '--state', state, '--json'], service.env());
  const paths = (await remoteFiles(client, project)).map((d) => d.path!.replace(/^\//, '')).sort();
  return { first: onlyJson(first) as unknown as MirrorJson, firstCode: first.code, again: onlyJson(again) as unknown as MirrorJson, paths };
}

describe('folders that differ only by case', () => {
  it('on a service that folds folder names: the clash is named, the rest goes up, a rerun uploads 0', async () => {
    const { first, firstCode, again, paths } = await mirrorTwice('insensitive');
    expect(firstCode).toBe(1);
    // The walk meets SUB before sub (byte order): SUB is made, sub clashes.
    expect(first.counts).toMatchObject({ discovered: 5, uploaded: 4, failed: 1 });
    expect(first.errors).toEqual([expect.objectContaining({ key: 'sub/a.txt', error: expect.stringMatching(/already holds a folder "SUB" where "sub" was to be made.*regardless of case/) })]);
    for (const e of first.errors) expect(e.error).not.toMatch(/listing lag|later than/);
    expect(first.folders.clashes).toEqual([{ path: 'sub', existing: 'SUB' }]);
    expect(paths).toEqual(['SUB/b.txt', 'SUB/deeper/c.txt', 'other/d.txt', 'top.txt']);
    expect(again.counts).toMatchObject({ uploaded: 0, failed: 1 });
  });

  it('on a service that tells them apart (--folder-case sensitive): both folders are made', async () => {
    const { first, firstCode, again, paths } = await mirrorTwice('sensitive');
    expect(firstCode, JSON.stringify(first.errors)).toBe(0);
    expect(first.counts).toMatchObject({ discovered: 5, uploaded: 5, failed: 0 });
    expect(paths).toEqual(Object.keys(TREE).sort());
    expect(again.counts).toMatchObject({ uploaded: 0, failed: 0 });
  });
});

describe('a folder whose name a document holds', () => {
  it('is a clash naming the document, not a listing lag; the rest goes up', async () => {
    service = await startService({ strict: false, folders: 'extension' });
    const src = join(await mkdtemp(join(tmpdir(), 'ferry-clash-doc-')), 'tree');
    await writeTree(src, { 'aux/inside.txt': 'in the folder', 'top.txt': 'top' });
    const client = service.client();
    const project = (await client.projects.create({ name: 'clash doc', description: '' })).objectIdentifier;
    await client.documents.upload(project, { open: () => Readable.from([Buffer.from('a file')]), size: 6, filename: 'AUX' }, { documentUploadIdentifier: randomUUID() });
    const r = await runFerry(['mirror', src, '--project', project, '--state', join(src, '..', 's.sqlite'), '--json'], service.env());
    const summary = onlyJson(r) as unknown as MirrorJson;
    expect(r.code).toBe(1);
    expect(summary.counts).toMatchObject({ uploaded: 1, failed: 1 });
    expect(summary.errors).toEqual([expect.objectContaining({ key: 'aux/inside.txt', error: expect.stringMatching(/already holds a document "AUX" where the folder "aux" was to be made/) })]);
  });
});
