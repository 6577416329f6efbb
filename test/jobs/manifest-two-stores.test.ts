// A document found on the service is adopted only when its content and its metadata both match
// what the run would send (issue 76): store A (another machine) uploads a file with no metadata;
// store B, warm, then mirrors with a manifest giving that file a row. B's dry run says "changed
// (metadata)", its run uploads a version carrying the row, and a fresh store does the same.
// `ferry mirror` runs as its own process against the emulator.
import { describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { useTempDirs } from '../helpers/temp.js';
import { remoteFiles, useService, writeTree } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';
import type { Document } from '../../src/api/types.js';

const tempDir = useTempDirs();
const service = useService();

/** The user metadata of the newest document at each path (ferry's own keys left out). */
function newestMetadata(docs: Document[]): Record<string, Record<string, string>> {
  const newest = new Map<string, Document>();
  for (const d of docs) {
    const had = newest.get(d.path!);
    if (!had || Date.parse(d.dateAdded!) >= Date.parse(had.dateAdded!)) newest.set(d.path!, d);
  }
  return Object.fromEntries([...newest].map(([path, d]) => [path, Object.fromEntries((d.metadata ?? []).filter((m) => !m.key!.startsWith('ferry.')).map((m) => [m.key!, m.value ?? '']))]));
}

describe('a manifest row for a document another store uploaded', () => {
  for (const from of ['the warm store', 'a fresh store'] as const) {
    it(`from ${from}: the dry run says changed (metadata), and the document carries the row after the run`, async () => {
      const dir = await tempDir('ferry-two-stores-');
      const env = service().env();
      const src = join(dir, 'src');
      const project = (await service().client().projects.create({ name: `two stores ${from}`, description: '' })).objectIdentifier;
      const mirrorWith = (state: string, ...extra: string[]) => runFerry(['mirror', src, '--project', project, '--state', join(dir, state), '--json', ...extra], env);
      // Store B mirrors the folder; then store A, on another machine, uploads c.txt.
      await writeTree(src, { 'a.txt': 'aaa', 'b.txt': 'bbb' });
      expect((await mirrorWith('b.sqlite')).code).toBe(0);
      await writeTree(src, { 'c.txt': 'ccc' });
      expect((await mirrorWith('a.sqlite')).code).toBe(0);

      const manifest = join(dir, 'rows.csv');
      await writeFile(manifest, 'path,Department\r\nc.txt,Legal\r\n');
      const state = from === 'the warm store' ? 'b.sqlite' : 'fresh.sqlite';
      const args = ['--manifest', manifest, '--manifest-partial'];
      const plan = onlyJson(await mirrorWith(state, ...args, '--dry-run'));
      expect(plan.counts).toMatchObject({ new: 0, changed: 1, unchanged: 2 });
      expect(plan.items).toEqual([expect.objectContaining({ action: 'changed', key: 'c.txt', why: 'metadata' })]);

      const run = onlyJson(await mirrorWith(state, ...args));
      expect(run).toMatchObject({ status: 'succeeded', exitCode: 0, counts: { uploaded: 1, failed: 0 } });
      expect(newestMetadata(await remoteFiles(service().client(), project))).toEqual({ '/a.txt': {}, '/b.txt': {}, '/c.txt': { Department: 'Legal' } });
      // And nothing more on the next run.
      expect(onlyJson(await mirrorWith(state, ...args))).toMatchObject({ exitCode: 0, counts: { uploaded: 0 } });
    });
  }
});
