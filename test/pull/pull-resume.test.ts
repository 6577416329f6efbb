// A pull of a big file killed with kill -9 part-way (slowed by --bwlimit, or at full speed, where
// the file is written from the socket's own buffer) continues from the bytes already on disk where
// the service honours Range, and starts over where it does not, or where the document at that
// path is another one now (issue 63). `ferry pull` runs as its own process against the emulator;
// what each run cost is counted as the bytes the emulator wrote to its connections.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { useTempDirs } from '../helpers/temp.js';
import { join } from 'node:path';
import { mirroredProject, remoteFiles, startService, writeTree, type Service } from '../helpers/service.js';
import { killedWhen, onlyJson, runFerry } from '../helpers/cli.js';
import { mirror } from '../../jobs/mirror.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';
import { readIdentity } from '../../src/backends/project/identity.js';


const tempDir = useTempDirs();
const MiB = 1024 * 1024;
const SIZE = 200 * MiB;
/** The most a continued pull may cost beyond the bytes it lacked: a block, the listing, headers. */
const SLACK = MiB + 256 * 1024;

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function shaOfFile(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const c of createReadStream(path)) h.update(c as Buffer);
  return h.digest('hex');
}

/** The pull's temporary file in `dir`, and its size, once there is one. */
async function partial(dir: string): Promise<{ name: string; size: number } | undefined> {
  const name = (await readdir(dir).catch(() => [] as string[])).find((n) => n.endsWith('.partial'));
  if (!name) return undefined;
  const st = await stat(join(dir, name)).catch(() => undefined);
  return st ? { name, size: st.size } : undefined;
}

/**
 * `ferry pull` of the project, slowed to 40 MB/s so that the kill lands mid-file, killed with
 * SIGKILL once more than half of the file is on disk; the bytes it left.
 */
async function killedPull(service: Service, project: string, out: string, state: string): Promise<number> {
  const result = await killedWhen(['pull', project, out, '--bwlimit', '40M', '--state', state, '--json'], service.env(), async () => ((await partial(out))?.size ?? 0) > SIZE / 2);
  expect(result.code, `the pull ended before it was killed: ${result.stdout} ${result.stderr}`).toBeNull();
  const kept = (await partial(out))?.size ?? 0;
  expect(kept).toBeGreaterThan(SIZE / 2);
  expect(kept).toBeLessThan(SIZE);
  return kept;
}

/** The pull run again to its end; the bytes the emulator sent meanwhile. */
async function pullAgain(service: Service, project: string, out: string, state: string): Promise<number> {
  const before = service.emulator.traffic().bytesSent;
  const result = onlyJson(await runFerry(['pull', project, out, '--state', state, '--json'], service.env()));
  expect(result, JSON.stringify(result)).toMatchObject({ status: 'succeeded', exitCode: 0, counts: { downloaded: 1, failed: 0 } });
  return service.emulator.traffic().bytesSent - before;
}

async function checkPulled(service: Service, project: string, out: string, content: Buffer): Promise<void> {
  const [doc] = await remoteFiles(service.client(), project);
  const recorded = readIdentity(doc!.metadata).sha256;
  expect(recorded).toBe(sha(content));
  expect(await shaOfFile(join(out, 'big.bin'))).toBe(recorded);
  expect((await readdir(out)).filter((n) => n.endsWith('.partial'))).toEqual([]);
}

describe('a pull of a big file killed part-way', () => {
  const content = randomBytes(SIZE);

  describe('where the service honours Range', () => {
    let service: Service;
    beforeAll(async () => {
      service = await startService();
    });
    afterAll(() => service.close());

    it('continues from the bytes on disk: the next run downloads the rest, and the file is the document', async () => {
      const dir = await tempDir('ferry-pull-resume-');
      const project = await mirroredProject(service.client(), join(dir, 'src'), { 'big.bin': content }, 'resumed');
      const out = join(dir, 'out');
      const state = join(dir, 'state.sqlite');
      const kept = await killedPull(service, project, out, state);
      // The folder as it is now, mirrored elsewhere (a restore): the kept download is no document.
      const restored = await service.client().projects.create({ name: 'restored mid-pull', description: 'a folder holding a kept download' });
      const restore = onlyJson(await runFerry(['mirror', out, '--project', restored.objectIdentifier, '--state', join(dir, 'restore.sqlite'), '--json'], service.env()));
      expect(JSON.stringify(restore.problems)).toMatch(/a pull's temporary file \(a download that stopped part-way/);
      expect(restore).toMatchObject({ exitCode: 0, counts: { uploaded: 0, skipped: 1 } });
      const sent = await pullAgain(service, project, out, state);
      expect(sent).toBeGreaterThanOrEqual(SIZE - kept);
      expect(sent).toBeLessThan(SIZE - kept + SLACK);
      await checkPulled(service, project, out, content);
    });

    it('killed at full speed, where the file is written from the socket\'s own buffer (no --bwlimit): the next run downloads only the rest', async () => {
      const dir = await tempDir('ferry-pull-resume-');
      const project = await mirroredProject(service.client(), join(dir, 'src'), { 'big.bin': content }, 'drained');
      const out = join(dir, 'out');
      const state = join(dir, 'state.sqlite');
      // Killed as soon as its file holds a byte: at this speed a later moment could be the end.
      const result = await killedWhen(['pull', project, out, '--state', state, '--json'], service.env(), async () => ((await partial(out))?.size ?? 0) > 0);
      expect(result.code, `the pull ended before it was killed: ${result.stdout} ${result.stderr}`).toBeNull();
      const kept = (await partial(out))?.size ?? 0;
      expect(kept).toBeGreaterThan(0);
      expect(kept).toBeLessThan(SIZE);
      const sent = await pullAgain(service, project, out, state);
      expect(sent).toBeGreaterThanOrEqual(SIZE - kept);
      expect(sent).toBeLessThan(SIZE - kept + SLACK);
      await checkPulled(service, project, out, content);
    });

    it('starts over when the document at that path is a new one (a new version), never stitching', async () => {
      const dir = await tempDir('ferry-pull-resume-');
      const src = join(dir, 'src');
      const client = service.client();
      const project = await mirroredProject(client, src, { 'big.bin': content }, 'replaced');
      const out = join(dir, 'out');
      const state = join(dir, 'state.sqlite');
      await killedPull(service, project, out, state);
      // A new version at the same path, of the same size: only its bytes differ.
      const changed = randomBytes(SIZE);
      await writeTree(src, { 'big.bin': changed });
      const store = new SqliteCheckpointStore(`${src}.sqlite`);
      try {
        await mirror({ source: src, project }, { client, store });
      } finally {
        store.close();
      }
      const sent = await pullAgain(service, project, out, state);
      expect(sent).toBeGreaterThanOrEqual(SIZE);
      const docs = await remoteFiles(client, project);
      const newest = docs.sort((a, b) => Date.parse(b.dateAdded ?? '') - Date.parse(a.dateAdded ?? ''))[0]!;
      expect(readIdentity(newest.metadata).sha256).toBe(sha(changed));
      expect(await shaOfFile(join(out, 'big.bin'))).toBe(sha(changed));
      expect((await readdir(out)).filter((n) => n.endsWith('.partial'))).toEqual([]);
    });
  });

  describe('where the service ignores Range (emulator --range ignored)', () => {
    let service: Service;
    beforeAll(async () => {
      service = await startService({ range: 'ignored' });
    });
    afterAll(() => service.close());

    it('downloads the whole file again, and the file is the document, nothing appended twice', async () => {
      const dir = await tempDir('ferry-pull-resume-');
      const project = await mirroredProject(service.client(), join(dir, 'src'), { 'big.bin': content }, 'not resumed');
      const out = join(dir, 'out');
      const state = join(dir, 'state.sqlite');
      await killedPull(service, project, out, state);
      const sent = await pullAgain(service, project, out, state);
      expect(sent).toBeGreaterThanOrEqual(SIZE);
      expect((await stat(join(out, 'big.bin'))).size).toBe(SIZE);
      await checkPulled(service, project, out, content);
    });
  });
});
