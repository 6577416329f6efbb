// A large file is hashed as it is sent, its metadata (the sha256 among it) after the file part,
// where the profile says the service reads fields after the file (formOrder: any; issue 63); where
// it does not (fields-first, the default), or a document at the path must be compared first, the
// file is hashed before. An emulator that ignores fields after the file (`--form-order
// fields-first`) tells which way a document went: sent after, its identity is not there. Hashed on
// a thread of its own or, on one core, on the sending one: the same sha256. A mirror killed with
// kill -9 mid-file uploads the file once, from the same store and from a fresh one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { useTempDirs } from '../helpers/temp.js';
import { join } from 'node:path';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { remoteFiles, startService, writeTree, type Service } from '../helpers/service.js';
import { FERRY_BIN, ferryTestEnv, killedWhen, onlyJson, runCommand, runFerry } from '../helpers/cli.js';
import { mirror } from '../../jobs/mirror.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';
import { readIdentity } from '../../src/backends/project/identity.js';
import type { FormOrder } from '../../src/api/transport.js';


const tempDir = useTempDirs();
const MANY_CORES = fileURLToPath(new URL('../helpers/many-cores/preload.cjs', import.meta.url));
const MiB = 1024 * 1024;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function mirrored(service: Service, formOrder: FormOrder, src: string, project: string, state: string) {
  const client = service.client({ formOrder });
  const store = new SqliteCheckpointStore(state);
  try {
    return await mirror({ source: src, project }, { client, store });
  } finally {
    store.close();
  }
}

/** Each document's path and the sha256 its identity names (undefined: it carries none). */
async function identities(service: Service, project: string): Promise<Record<string, string | undefined>> {
  const docs = await remoteFiles(service.client(), project);
  return Object.fromEntries(docs.map((d) => [d.path ?? d.name, readIdentity(d.metadata)?.sha256]));
}

describe('a large file hashed as it is sent', () => {
  const big = randomBytes(12 * MiB + 7);
  const small = Buffer.from('a small file, hashed first as always\n');

  describe('against a service that reads fields after the file', () => {
    let service: Service;
    beforeAll(async () => {
      service = await startService();
    });
    afterAll(() => service.close());

    it('names the content it sent, and the store keeps that sha256', async () => {
      const dir = await tempDir('ferry-hash-sending-');
      const src = join(dir, 'src');
      await writeTree(src, { 'big.bin': big, 'small.txt': small });
      const project = (await service.client().projects.create({ name: 'hashed while sent', description: '' })).objectIdentifier;
      const summary = await mirrored(service, 'any', src, project, join(dir, 'state.sqlite'));
      expect(summary.counts).toMatchObject({ uploaded: 2, failed: 0 });
      expect(await identities(service, project)).toEqual({ '/big.bin': sha(big), '/small.txt': sha(small) });
      const store = new SqliteCheckpointStore(join(dir, 'state.sqlite'));
      try {
        const [run] = store.listRuns({ limit: 1 });
        expect(store.getItem(run!.jobKey, 'big.bin')?.sha256).toBe(sha(big));
      } finally {
        store.close();
      }
      // A second run sends nothing: the file is known.
      const again = await mirrored(service, 'any', src, project, join(dir, 'state.sqlite'));
      expect(again.counts).toMatchObject({ uploaded: 0, failed: 0 });
    });

    // With three cores or more, the digest is taken on a thread of its own (src/api/content-hash.ts):
    // this machine has two, so the process is told it has four (test/helpers/many-cores/preload.cjs).
    it('on four cores, hashed on a thread of its own: two big files sent at once each name their own content', async () => {
      const dir = await tempDir('ferry-hash-thread-');
      const src = join(dir, 'src');
      const other = randomBytes(big.length + 7);
      await writeTree(src, { 'big.bin': big, 'other.bin': other });
      const project = (await service.client().projects.create({ name: 'hashed on a thread', description: '' })).objectIdentifier;
      const mark = join(dir, 'threads');
      const env = { ...service.env(), FERRY_FORM_ORDER: 'any', NODE_OPTIONS: `--require ${MANY_CORES}`, FERRY_TEST_THREAD_MARK: mark };
      const result = onlyJson(await runFerry(['mirror', src, '--project', project, '--state', join(dir, 'state.sqlite'), '--json'], env));
      expect(result.counts).toMatchObject({ uploaded: 2, failed: 0 });
      expect(await identities(service, project)).toEqual({ '/big.bin': sha(big), '/other.bin': sha(other) });
      // One hashing thread, started once for both.
      expect(await readFile(mark, 'utf8')).toBe('started\n');
    });

    it('a hashing thread that dies mid-file: the upload is sent again with the digest taken inline, and lands once', async () => {
      const dir = await tempDir('ferry-hash-thread-dies-');
      const src = join(dir, 'src');
      await writeTree(src, { 'big.bin': big });
      const project = (await service.client().projects.create({ name: 'hashing thread dies', description: '' })).objectIdentifier;
      const mark = join(dir, 'threads');
      const env = { ...service.env(), FERRY_FORM_ORDER: 'any', NODE_OPTIONS: `--require ${MANY_CORES}`, FERRY_TEST_THREAD_MARK: mark, FERRY_TEST_THREAD_END: '3' };
      const result = onlyJson(await runFerry(['mirror', src, '--project', project, '--state', join(dir, 'state.sqlite'), '--json'], env));
      // The thread started, and ended mid-file; no other was started after it.
      expect(await readFile(mark, 'utf8')).toBe('started\nended\n');
      expect(result.counts).toMatchObject({ uploaded: 1, failed: 0 });
      expect(await identities(service, project)).toEqual({ '/big.bin': sha(big) });
    });

    // Where the process has one core, the digest is taken on the sending thread.
    it('on one core (taskset), names the same content, hashed on the sending thread', async () => {
      const dir = await tempDir('ferry-hash-one-core-');
      const src = join(dir, 'src');
      await writeTree(src, { 'big.bin': big });
      const project = (await service.client().projects.create({ name: 'hashed on one core', description: '' })).objectIdentifier;
      const env = ferryTestEnv({ ...service.env(), FERRY_FORM_ORDER: 'any' });
      const result = onlyJson(await runCommand('taskset', ['-c', '0', process.execPath, FERRY_BIN, 'mirror', src, '--project', project, '--state', join(dir, 'state.sqlite'), '--json'], env));
      expect(result.counts).toMatchObject({ uploaded: 1, failed: 0 });
      expect(await identities(service, project)).toEqual({ '/big.bin': sha(big) });
    });
  });

  describe('against a service that reads fields before the file only (emulator --form-order fields-first)', () => {
    let service: Service;
    beforeAll(async () => {
      service = await startService({ formOrder: 'fields-first' });
    });
    afterAll(() => service.close());

    it('the profile\'s default (fields-first) hashes first: every document carries its identity', async () => {
      const dir = await tempDir('ferry-hash-first-');
      const src = join(dir, 'src');
      await writeTree(src, { 'big.bin': big, 'small.txt': small });
      const project = (await service.client().projects.create({ name: 'hashed first', description: '' })).objectIdentifier;
      await mirrored(service, 'fields-first', src, project, join(dir, 'state.sqlite'));
      expect(await identities(service, project)).toEqual({ '/big.bin': sha(big), '/small.txt': sha(small) });
    });

    it('told fields may follow, the large file goes with them after it (this service drops them); a new version where a document stands is hashed first', async () => {
      const dir = await tempDir('ferry-hash-order-');
      const src = join(dir, 'src');
      await writeTree(src, { 'big.bin': big, 'small.txt': small });
      const project = (await service.client().projects.create({ name: 'told any', description: '' })).objectIdentifier;
      const state = join(dir, 'state.sqlite');
      await mirrored(service, 'any', src, project, state);
      // Sent after the file: this service never read them. The small file's went first.
      expect(await identities(service, project)).toEqual({ '/big.bin': undefined, '/small.txt': sha(small) });
      // Changed: a document stands at its path, so its content is known before it is sent.
      const changed = randomBytes(big.length + 1);
      await writeTree(src, { 'big.bin': changed });
      await mirrored(service, 'any', src, project, state);
      const docs = await remoteFiles(service.client(), project);
      const newest = docs.filter((d) => d.name === 'big.bin').sort((a, b) => Date.parse(b.dateAdded ?? '') - Date.parse(a.dateAdded ?? ''))[0]!;
      expect(readIdentity(newest.metadata)?.sha256).toBe(sha(changed));
    });
  });
});

describe('a mirror killed with kill -9 while a file hashed as it is sent goes up', () => {
  const SIZE = 96 * MiB;
  const content = randomBytes(SIZE);
  let service: Service;
  beforeAll(async () => {
    service = await startService();
  });
  afterAll(() => service.close());

  /**
   * `ferry mirror` killed mid-file: slowed to 40 MB/s (the metered stream) once the emulator has
   * read more than half the file, or at full speed (the bulk sender's reused buffers) once it has
   * read a MiB of it; at that speed a later moment could be the end.
   */
  async function killedMirror(src: string, project: string, state: string, speed: 'slowed' | 'full'): Promise<void> {
    const before = service.emulator.traffic().bytesReceived;
    // A short lease: a run from a fresh store cannot tell its holder is gone, and waits it out.
    const args = ['mirror', src, '--project', project, ...(speed === 'slowed' ? ['--bwlimit', '40M'] : []), '--lock-ttl', '2s', '--state', state, '--json'];
    const read = speed === 'slowed' ? SIZE / 2 : MiB;
    const result = await killedWhen(args, { ...service.env(), FERRY_FORM_ORDER: 'any' }, () => service.emulator.traffic().bytesReceived - before > read);
    expect(result.code, `the mirror ended before it was killed: ${result.stdout} ${result.stderr}`).toBeNull();
    // Killed mid-file: nothing landed.
    expect(await remoteFiles(service.client(), project)).toEqual([]);
  }

  for (const [store, speed] of [['the same store', 'slowed'], ['a fresh store', 'slowed'], ['the same store', 'full'], ['a fresh store', 'full']] as const) {
    it(`${speed === 'full' ? 'at full speed (no --bwlimit), ' : ''}the next run from ${store} uploads it once, naming its content`, async () => {
      const dir = await tempDir('ferry-hash-killed-');
      const src = join(dir, 'src');
      await writeTree(src, { 'big.bin': content });
      const project = (await service.client().projects.create({ name: `killed mid-file, ${store}, ${speed}`, description: '' })).objectIdentifier;
      await killedMirror(src, project, join(dir, 'state.sqlite'), speed);
      const state = store === 'the same store' ? join(dir, 'state.sqlite') : join(dir, 'fresh.sqlite');
      const next = onlyJson(await runFerry(['mirror', src, '--project', project, '--wait-lock', '20s', '--state', state, '--json'], { ...service.env(), FERRY_FORM_ORDER: 'any' }));
      expect(next, JSON.stringify(next)).toMatchObject({ exitCode: 0, counts: { uploaded: 1, failed: 0 } });
      const third = onlyJson(await runFerry(['mirror', src, '--project', project, '--state', state, '--json'], { ...service.env(), FERRY_FORM_ORDER: 'any' }));
      expect(third).toMatchObject({ exitCode: 0, counts: { uploaded: 0 } });
      expect(await identities(service, project)).toEqual({ '/big.bin': sha(content) });
    });
  }
});
