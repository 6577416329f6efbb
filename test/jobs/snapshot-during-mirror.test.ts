// A snapshot taken while `ferry mirror` uploads 2,000 files is the state of one moment: restored
// after the mirror has finished, `ferry check` of the folder finds exactly the documents the
// snapshot counted, each whole, and every other file missing; no document half there. The lease
// record the run held at that moment does not come back with it: the next run (a fresh state
// directory, no --wait-lock) takes the lease at once and uploads only the rest.
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onlyJson, runFerry } from '../helpers/cli.js';
import { remoteFiles, startService, type Service } from '../helpers/service.js';
import { useTempDirs } from '../helpers/temp.js';

const FILES = 2000;
const ADMIN = 'snapshot-test-admin-token';

const temp = useTempDirs();
let service: Service;
let data: string;

beforeAll(async () => {
  data = await temp('ferry-snapshot-data-');
  service = await startService({ dataDir: data, adminToken: ADMIN });
});
afterAll(() => service.close());

async function control(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${service.emulator.baseUrl}/_emulator/${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  expect(res.status, `${method} /_emulator/${path}`).toBeLessThan(300);
  return res.status === 204 ? undefined : res.json();
}

describe('a snapshot taken during a mirror', () => {
  it('restores the state of its moment: whole documents only, and no lease left to block the next run', async () => {
    const src = await temp('ferry-snapshot-tree-');
    const sha = new Map<string, string>();
    for (let i = 0; i < FILES; i++) {
      const rel = `part-${String(i % 20).padStart(2, '0')}/file-${String(i).padStart(4, '0')}.txt`;
      const content = `file ${i}\n`.repeat(200);
      await mkdir(join(src, rel, '..'), { recursive: true });
      await writeFile(join(src, rel), content);
      sha.set(`/${rel}`, createHash('sha256').update(content).digest('hex'));
    }
    const client = service.client();
    const project = (await client.projects.create({ name: 'snapshot during a mirror', description: 'control API' })).objectIdentifier;
    const env = { ...service.env(), FERRY_STATE_DIR: await temp('ferry-snapshot-state-') };

    const mirroring = runFerry(['mirror', src, '--project', project, '--json'], env);
    // Taken once the run is well under way: a quarter of its uploads through the service's door.
    const start = service.emulator.traffic().requests;
    while (service.emulator.traffic().requests - start < FILES / 4) await new Promise((r) => setTimeout(r, 5));
    const taken = await control('POST', 'snapshots', { name: 'mid-mirror' });
    const first = await mirroring;
    expect(first.code, first.stderr).toBe(0);
    expect(onlyJson(first)).toMatchObject({ counts: expect.objectContaining({ uploaded: FILES }) });
    expect(taken.documents).toBeGreaterThan(0);
    expect(taken.documents).toBeLessThan(FILES);

    await control('POST', 'snapshots/mid-mirror/restore');
    const docs = await remoteFiles(client, project);
    expect(docs.length).toBe(taken.documents);
    for (const d of docs) {
      // Whole: the size of its file, and the fingerprint ferry sent with it is that file's.
      expect(d.size).toBe(Buffer.byteLength(`file ${Number(/file-(\d+)/.exec(d.path as string)![1])}\n`.repeat(200)));
      expect((d.metadata as { key: string; value: string }[] | null)?.find((m) => m.key === 'ferry.sha256')?.value).toBe(sha.get(d.path as string));
    }
    const check = await runFerry(['check', src, '--project', project, '--checksum', '--json'], env);
    expect(check.code, check.stderr).toBe(1);
    const report = onlyJson(check) as { matching: number; differenceCount: number; counts: Record<string, number> };
    expect(report.matching).toBe(taken.documents);
    expect(report.counts).toMatchObject({ changed: 0, missingOnTheService: FILES - taken.documents, onlyOnTheService: 0 });
    // The claim the run held when the snapshot was taken is not there, nor any other.
    expect(await client.projects.list({}, { leaseRecords: true }).all()).toEqual([]);

    // The next run, from nothing (a fresh state directory) and without waiting for a lease.
    const next = await runFerry(['mirror', src, '--project', project, '--json'], { ...env, FERRY_STATE_DIR: await temp('ferry-snapshot-state-') });
    expect(next.code, next.stderr).toBe(0);
    expect(onlyJson(next)).toMatchObject({ counts: expect.objectContaining({ uploaded: FILES - taken.documents }) });
    const after = await runFerry(['check', src, '--project', project, '--json'], env);
    expect(after.code, after.stderr).toBe(0);
    expect(onlyJson(after)).toMatchObject({ matching: FILES, differenceCount: 0 });

    // A reset leaves no lease record either, and the seed's project takes a mirror at once.
    await control('POST', 'reset');
    expect(await service.client().projects.list({}, { leaseRecords: true }).all()).toEqual([]);
  });
});
