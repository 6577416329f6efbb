// The accounting invariant on random trees of hostile names (fixed seeds, printed on failure):
// invalid UTF-8, control characters, newlines, NFC/NFD pairs, 255-byte names, backslashes, `%`,
// `#`, `?`, empty files and empty folders. After a mirror every file on disk is either a document
// at its path or a failed item with its reason, the counts add up to what is on disk, and a rerun
// uploads nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { remoteFiles, remoteFolders, startService, whereFoldersExist, type Service } from '../helpers/service.js';
import { mirror } from '../../jobs/mirror.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';
import { checkName } from '../../src/backends/names.js';
import { seededRandom as random } from '../../src/emulator/service/random.js';

const SEEDS = [11, 23, 37];

let service: Service;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.close());

/** Name makers, each a kind of name users really have. Raw bytes, since some are not UTF-8. */
const KINDS: ((r: () => number, i: number) => Buffer[])[] = [
  (_r, i) => [Buffer.from(`plain-${i}.txt`)],
  (_r, i) => [Buffer.concat([Buffer.from(`latin1-${i}-caf`), Buffer.from([0xe9]), Buffer.from('.txt')])], // invalid UTF-8
  (_r, i) => [Buffer.from(`bad-${i}-\xff\xfe.bin`, 'latin1')],
  (_r, i) => [Buffer.from(`new\nline-${i}.txt`)],
  (_r, i) => [Buffer.from(`tab\tand\u0007bell-${i}.txt`)],
  (_r, i) => [Buffer.from(`esc\u001b[31m-${i}.txt`)],
  (_r, i) => [Buffer.from(`café-${i}.txt`.normalize('NFC')), Buffer.from(`café-${i}.txt`.normalize('NFD'))], // a pair
  (_r, i) => [Buffer.from(`${String(i).padStart(4, '0')}${'x'.repeat(247)}.txt`)], // 255 bytes
  (_r, i) => [Buffer.from(`${i}-${'é'.repeat(123)}.txt`.slice(0, 200))],
  (_r, i) => [Buffer.from(`back\\slash-${i}.txt`)],
  (_r, i) => [Buffer.from(`100%-${i}#tag?.txt`)],
  (_r, i) => [Buffer.from(`%2e%2e-${i}.txt`)],
  (_r, i) => [Buffer.from(` spaced ${i} .txt`)],
];

interface Expected {
  /** Files whose every path segment is carried: remote path -> local size. */
  carried: Map<string, number>;
  /** Files refused: their reported key. */
  refused: Set<string>;
  emptyFolders: string[];
}

async function makeTree(root: string, seed: number): Promise<Expected> {
  const r = random(seed);
  const expected: Expected = { carried: new Map(), refused: new Set(), emptyFolders: [] };
  const folders: { raw: Buffer; shown: string; ok: boolean }[] = [{ raw: Buffer.from(root), shown: '', ok: true }];
  // A few folders, some with hostile names of their own (their files are refused with them).
  for (let i = 0; i < 6; i++) {
    const parent = folders[Math.floor(r() * folders.length)]!;
    const kind = i % 3 === 2 ? 1 + Math.floor(r() * 5) : 0;
    const name = KINDS[kind]!(r, 100 + i)[0]!;
    const verdict = checkName(name);
    const raw = Buffer.concat([parent.raw, Buffer.from('/'), name]);
    await mkdir(raw);
    const shown = `${parent.shown ? `${parent.shown}/` : ''}${verdict.ok ? verdict.name : verdict.key}`;
    folders.push({ raw, shown, ok: parent.ok && verdict.ok });
  }
  const used = new Set<string>();
  for (let i = 0; i < 40; i++) {
    const folder = folders[Math.floor(r() * folders.length)]!;
    for (const name of KINDS[Math.floor(r() * KINDS.length)]!(r, i)) {
      const raw = Buffer.concat([folder.raw, Buffer.from('/'), name]);
      if (used.has(raw.toString('hex'))) continue;
      used.add(raw.toString('hex'));
      const size = r() < 0.2 ? 0 : 1 + Math.floor(r() * 300);
      await writeFile(raw, Buffer.alloc(size, 0x61 + (i % 26)));
      const verdict = checkName(name);
      const key = `${folder.shown ? `${folder.shown}/` : ''}${verdict.ok ? verdict.name : verdict.key}`;
      if (folder.ok && verdict.ok) expected.carried.set(`/${key}`, size);
      else expected.refused.add(key);
    }
  }
  // Every refused folder holds a file, so it is reported through it; empty folders are carried.
  for (const folder of folders.slice(1)) {
    if (!folder.ok && ![...expected.refused].some((k) => k.startsWith(`${folder.shown}/`))) {
      await writeFile(Buffer.concat([folder.raw, Buffer.from('/inside.txt')]), 'in');
      expected.refused.add(`${folder.shown}/inside.txt`);
    }
  }
  for (let i = 0; i < 2; i++) {
    const folder = folders.filter((f) => f.ok)[Math.floor(r() * folders.filter((f) => f.ok).length)]!;
    await mkdir(Buffer.concat([folder.raw, Buffer.from(`/empty-${i}`)]));
    expected.emptyFolders.push(`/${folder.shown ? `${folder.shown}/` : ''}empty-${i}`);
  }
  return expected;
}

describe('mirror on random trees of hostile names', () => {
  for (const seed of SEEDS) {
    it(`seed ${seed}: every file is a document at its path or a failed item, counts add up, a rerun uploads 0`, async () => {
      const dir = await mkdtemp(join(tmpdir(), `ferry-names-${seed}-`));
      const src = join(dir, 'src');
      await mkdir(src);
      const expected = await makeTree(src, seed);
      const onDisk = expected.carried.size + expected.refused.size;
      const client = service.client();
      const project = (await client.projects.create({ name: `names ${seed}`, description: 'property' })).objectIdentifier;
      const store = new SqliteCheckpointStore(join(dir, 'state.sqlite'));
      const say = `seed ${seed} (rerun with this seed to see the same tree)`;
      try {
        const summary = await mirror({ source: src, project }, { client, store });
        const c = summary.counts;
        expect(c.discovered, say).toBe(onDisk);
        expect(c.uploaded + c.reconciled + c.skipped + c.failed, say).toBe(c.discovered);
        expect(c.failed, say).toBe(expected.refused.size);
        expect(new Set(summary.errors.map((e) => e.key)), say).toEqual(expected.refused);
        for (const e of summary.errors) expect(e.error, say).toMatch(/not valid UTF-8|control characters/);

        const docs = await remoteFiles(client, project);
        const paths = docs.map((d) => d.path ?? '');
        expect(paths.length, say).toBe(new Set(paths).size);
        expect(new Map(docs.map((d) => [d.path ?? '', d.size])), say).toEqual(expected.carried);
        const folders = await remoteFolders(client, project);
        for (const empty of whereFoldersExist(expected.emptyFolders)) expect(folders, say).toContain(empty);

        const rerun = await mirror({ source: src, project }, { client, store });
        expect(rerun.counts, say).toMatchObject({ discovered: onDisk, uploaded: 0, failed: expected.refused.size });
        expect(await remoteFiles(client, project), say).toHaveLength(expected.carried.size);
        console.log(`${say}: ${onDisk} files on disk, ${expected.carried.size} documents, ${expected.refused.size} failed items named, rerun uploaded 0`);
      } finally {
        store.close();
      }
    });
  }
});
