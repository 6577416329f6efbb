// A corpus of names users really have, as files and as folders: mirror, a rerun that uploads
// nothing, then a pull compared name for name and byte for byte. Every entry ends uploaded or
// failed with its reason; every walk ends with the count of entries there are (no endless walk).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { startService, writeTree, type Service } from '../helpers/service.js';
import { writeZip } from '../helpers/archives.js';
import { mirror } from '../../jobs/mirror.js';
import { pull } from '../../jobs/pull.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';
import { NAMES_FILE } from '../../src/backends/names-record.js';

let service: Service;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.close());

/** Names carried exactly, as files and as folders. */
const CARRIED = [
  '\ufeff',
  '\ufeffbom.txt',
  'line\u2028sep.txt',
  'para\u2029sep.txt',
  '\\',
  '\\\\',
  'back\\slash.txt',
  'a%22b.txt',
  '%2E',
  '%25%0A',
  ' ',
  '  lead and trail  ',
  'it\'s "quoted".txt',
  'semi;colon=eq.txt',
  '#?*[]{}.txt',
  'caf\u00e9.txt',
  'cafe\u0301.txt',
  'bidi\u202eevil.txt',
  `${'x'.repeat(251)}.txt`,
  `${'\u00e9'.repeat(127)}x`,
];
/** Names refused with a reason (control characters). */
const REFUSED = ['ctl\u0001.txt', 'tab\there.txt', 'new\nline'];

/** Every file under `root`, as `/`-joined relative paths. */
async function filesUnder(root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string, prefix: string) => {
    for (const d of await readdir(dir, { withFileTypes: true })) {
      if (d.isDirectory()) await walk(join(dir, d.name), `${prefix}${d.name}/`);
      else out.push(`${prefix}${d.name}`);
    }
  };
  await walk(root, '');
  return out.sort();
}

describe('a corpus of hostile names: mirror, rerun, pull, compare', () => {
  it('carries every name exactly or fails it with its reason, and pulls back the same names and bytes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-corpus-'));
    const src = join(dir, 'src');
    const tree: Record<string, string> = {};
    for (const [i, name] of CARRIED.entries()) tree[name] = `file ${i}: ${name}`;
    // The same names as folders (a backslash folder name is refused by the emulator's folder
    // route: flattened, its path kept in metadata, pulled back to the same path).
    for (const [i, name] of CARRIED.slice(0, 12).entries()) tree[`${name}/inside-${i}.txt`] = `inside ${name}`;
    // A file name equal to a folder name cannot exist twice in one folder on disk: the folders above
    // take the first 12 names, so their files live one level down.
    for (const name of CARRIED.slice(0, 12)) {
      tree[`files/${name}`] = tree[name]!;
      delete tree[name];
    }
    for (const name of REFUSED) tree[name] = 'refused';
    await writeTree(src, tree);
    const carried = Object.keys(tree).filter((k) => !REFUSED.includes(k)).sort();

    const client = service.client();
    const project = (await client.projects.create({ name: 'corpus', description: 'names' })).objectIdentifier;
    const store = new SqliteCheckpointStore(join(dir, 'state.sqlite'));
    try {
      const first = await mirror({ source: src, project }, { client, store });
      expect(first.counts).toMatchObject({ discovered: carried.length + REFUSED.length, uploaded: carried.length, failed: REFUSED.length, skipped: 0 });
      expect(first.errors.map((e) => e.key).sort()).toEqual([...REFUSED].sort());
      for (const e of first.errors) expect(e.error).toMatch(/control characters/);

      const again = await mirror({ source: src, project }, { client, store });
      expect(again.counts).toMatchObject({ discovered: carried.length + REFUSED.length, uploaded: 0, failed: REFUSED.length });

      // A name over 255 bytes reaches the service from a zip; the pull shortens it with a hash, said.
      const long = `${'long-'.repeat(60)}.txt`;
      const archive = join(dir, 'long.zip');
      await writeZip(archive, (a) => a.append('long content', { name: long }));
      const fromZip = await mirror({ source: archive, project, to: 'zipped' }, { client, store });
      expect(fromZip.counts).toMatchObject({ discovered: 1, uploaded: 1 });

      const out = join(dir, 'out');
      const pulled = await pull({ project, dir: out }, { client, store });
      expect(pulled.counts).toMatchObject({ discovered: carried.length + 1, uploaded: carried.length + 1, failed: 0 });
      const renamed = (pulled as unknown as { renamed: { key: string; local: string }[] }).renamed;
      expect(renamed).toHaveLength(1);
      expect(renamed[0]!.key).toBe(`zipped/${long}`);
      expect(Buffer.byteLength(renamed[0]!.local.split('/')[1]!)).toBeLessThanOrEqual(255);

      // Name for name, byte for byte; beside them the record of the one name the pull had to change.
      expect(await filesUnder(out)).toEqual([...carried, renamed[0]!.local, NAMES_FILE].sort());
      expect(await readFile(join(out, NAMES_FILE), 'utf8')).toContain(JSON.stringify(renamed[0]!.local));
      for (const key of carried) expect(await readFile(join(out, key), 'utf8'), key).toBe(tree[key]);
      expect(await readFile(join(out, renamed[0]!.local), 'utf8')).toBe('long content');
    } finally {
      store.close();
    }
  });
});
