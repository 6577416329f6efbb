// What the suites that race `ferry` processes on one service share: a tree of numbered files, the
// check that every path is on the service once, and a count of documents read by id (never late).
import { expect } from 'vitest';
import type { FerryClient } from '../../src/api/index.js';
import { remoteFiles, writeTree } from './service.js';

/** `folders` folders of `files` files each, under `root`; how many files. */
export async function numberedTree(root: string, folders: number, files: number, prefix = 'f'): Promise<number> {
  const out: Record<string, string> = {};
  for (let d = 0; d < folders; d++) for (let f = 0; f < files; f++) out[`${prefix}${d}/file-${f}.txt`] = `${prefix} ${d} ${f}\n`;
  await writeTree(root, out);
  return folders * files;
}

/** Every path on the service exactly once (read once any listing lag has passed), and how many there are. */
export async function pathsOnce(client: FerryClient, project: string): Promise<number> {
  const docs = await remoteFiles(client, project);
  const seen = new Map<string, number>();
  for (const d of docs) seen.set(d.path ?? '', (seen.get(d.path ?? '') ?? 0) + 1);
  expect([...seen].filter(([, n]) => n > 1), 'paths on the service more than once').toEqual([]);
  return docs.length;
}

/** The project's documents as its analytics count them: read by id, so never listed late. */
export async function documentCount(client: FerryClient, project: string): Promise<number> {
  return (await client.projects.analytics(project)).documentCount ?? 0;
}
