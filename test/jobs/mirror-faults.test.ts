// The service failing about 15% of requests (429, 503, resets before and after the work was done):
// the mirror still ends with every file exactly once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { mirror } from '../../jobs/mirror.js';
import { AdaptiveConcurrency } from '../../src/runner/adaptive.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';
import { remoteFiles, startService, writeTree, type Service } from '../helpers/service.js';

let service: Service;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.close());

describe('mirror under faults', () => {
  it('uploads every file exactly once while 429, 503 and connection resets hit ~15% of requests', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-faults-'));
    const files: Record<string, string> = {};
    for (let i = 0; i < 200; i++) files[`d${i % 7}/f${i}.txt`] = `file ${i}`.repeat(1 + (i % 9));
    await writeTree(join(dir, 'src'), files);
    const client = service.client({ retry: { maxRetries: 8, baseDelayMs: 2, maxDelayMs: 20, maxRetryAfterMs: 20 } });
    const project = (await client.projects.create({ name: 'faults', description: 'flaky service' })).objectIdentifier;

    service.emulator.setFaults({ probabilities: { '429': 0.04, '503': 0.04, reset: 0.035, 'reset-after': 0.035 }, seed: 11 });
    const store = new SqliteCheckpointStore(join(dir, 'state.sqlite'));
    let summary;
    try {
      summary = await mirror({ source: join(dir, 'src'), project, itemRetry: { retries: 6, baseDelayMs: 5, maxDelayMs: 50 } }, { client, store });
    } finally {
      service.emulator.setFaults({});
      store.close();
    }
    expect(summary.errors).toEqual([]);
    expect(summary.counts).toMatchObject({ discovered: 200, uploaded: 200, failed: 0 });

    const remote = await remoteFiles(client, project);
    const paths = remote.map((d) => d.path);
    expect(new Set(paths).size).toBe(paths.length);
    expect(remote).toHaveLength(200);
    for (const doc of remote) expect(doc.size).toBe(Buffer.byteLength(files[(doc.path ?? '').slice(1)] ?? ''));
  });
});

describe('an upload whose answer is lost, and the look that would tell refused too', () => {
  it('a cold run (the destination listed whole) does not upload the file a second time on its item retry: it looks first', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-lost-answer-'));
    await writeTree(join(dir, 'src'), { 'only.txt': 'the one file' });
    const client = service.client({ retry: { maxRetries: 2, baseDelayMs: 2, maxDelayMs: 20, maxRetryAfterMs: 20 } });
    const project = (await client.projects.create({ name: 'lost answer', description: 'x' })).objectIdentifier;
    const documents = /^\/projects\/[^/]+\/documents$/;
    // The upload is made, its answer dropped; then the listing the transport asks "did it land?" is
    // refused at every attempt (3), after the cold start's own listing of the project (let through).
    service.emulator.setFaults({
      rules: [
        { kind: 'reset-after', method: 'POST', path: documents, times: 1 },
        { kind: '503', method: 'GET', path: documents, skip: 1, times: 3 },
      ],
    });
    const store = new SqliteCheckpointStore(join(dir, 'state.sqlite'));
    let summary;
    try {
      summary = await mirror({ source: join(dir, 'src'), project, itemRetry: { retries: 3, baseDelayMs: 5, maxDelayMs: 20 } }, { client, store });
    } finally {
      service.emulator.setFaults({});
      store.close();
    }
    expect(summary.errors).toEqual([]);
    // Found by the item retry's look, not sent again.
    expect(summary.counts).toMatchObject({ uploaded: 0, reconciled: 1, failed: 0 });
    expect(await remoteFiles(client, project)).toHaveLength(1);
  });
});

describe('a warm store overtaken by another, under faults', () => {
  it('finds every file the other uploaded, though the folder listing all its uploads await is refused again and again and its pages are cut short', async () => {
    // Pages of at most 7 whatever is asked: each folder of 30 is read over 5 pages.
    const capped = await startService({ maxPageSize: 7 });
    const dir = await mkdtemp(join(tmpdir(), 'ferry-overtaken-faults-'));
    const files: Record<string, string> = {};
    for (let i = 0; i < 120; i++) files[`d${i % 4}/f${i}.txt`] = `file ${i}`;
    await writeTree(join(dir, 'src'), files);
    const client = capped.client({ retry: { maxRetries: 12, baseDelayMs: 2, maxDelayMs: 20, maxRetryAfterMs: 20 } });
    const project = (await client.projects.create({ name: 'overtaken under faults', description: 'flaky service' })).objectIdentifier;
    const source = join(dir, 'src');
    const b = new SqliteCheckpointStore(join(dir, 'b.sqlite'));
    const a = new SqliteCheckpointStore(join(dir, 'a.sqlite'));
    try {
      // B lists the empty project (its pattern takes nothing), A uploads everything.
      expect((await mirror({ source, project, include: ['nothing'] }, { client, store: b })).counts.uploaded).toBe(0);
      expect((await mirror({ source, project }, { client, store: a })).counts.uploaded).toBe(120);
      // B's uploads into a folder all await one listing of it; its retries must not wait for a
      // slot those uploads hold (it ran in the slot of the first, and the run hung, exit 13).
      capped.emulator.setFaults({ probabilities: { '429': 0.2, '503': 0.2 }, seed: 5 });
      const concurrency = new AdaptiveConcurrency({ max: 16, slowFactor: Infinity });
      const warm = await mirror({ source, project, itemRetry: { retries: 6, baseDelayMs: 5, maxDelayMs: 50 } }, { client, store: b, concurrency });
      capped.emulator.setFaults({});
      expect(warm.errors).toEqual([]);
      expect(warm.counts).toMatchObject({ discovered: 120, uploaded: 0, reconciled: 120, failed: 0 });
      expect(await remoteFiles(client, project)).toHaveLength(120);
    } finally {
      capped.emulator.setFaults({});
      a.close();
      b.close();
      await capped.close();
    }
  });
});

describe('mirror against a rate-limited service', () => {
  // A limit no machine can miss: 5 requests a second with a burst of 6, while the job starts up
  // to 16 uploads at once. However slow the client, its opening wave outruns the bucket, so the
  // test does not depend on how many requests a second this machine can push.
  it('paces itself under the limit and still uploads every file exactly once', async () => {
    const limited = await startService({ rateLimit: { rps: 5, burst: 6 } });
    try {
      const dir = await mkdtemp(join(tmpdir(), 'ferry-ratelimit-'));
      const files: Record<string, string> = {};
      for (let i = 0; i < 20; i++) files[`f${i}.txt`] = `file ${i}`;
      await writeTree(join(dir, 'src'), files);
      const concurrency = new AdaptiveConcurrency({ max: 16, slowFactor: Infinity });
      // Up to 20 retries per request: with Retry-After honoured once refusals persist (the emulator
      // asks for whole seconds), no upload runs out of retries however long the queue grows.
      let refused = 0;
      let waitedAsAsked = 0;
      const onRetry = (info: { status?: number; serverAsked: boolean }) => {
        if (info.status === 429) refused++;
        if (info.serverAsked) waitedAsAsked++;
      };
      const client = limited.client({ retry: { maxRetries: 20, baseDelayMs: 2, maxDelayMs: 20 }, onRetry });
      const project = (await client.projects.create({ name: 'rate limited', description: 'x' })).objectIdentifier;
      const store = new SqliteCheckpointStore(join(dir, 'state.sqlite'));
      const summary = await mirror({ source: join(dir, 'src'), project, concurrency: 16 }, { client, store, concurrency });
      store.close();
      expect(summary.counts).toMatchObject({ uploaded: 20, failed: 0 });
      // The service pushed back, and the job listened: it waited the Retry-After asked for once
      // refusals persisted, and paces itself once two windows of answers (64) say so, which a
      // job of 20 files reaches only at times.
      const pacing = client.transport.pacing;
      console.log(`${refused} requests refused, ${waitedAsAsked} Retry-After waited; pacing ${JSON.stringify(pacing)}`);
      expect(refused).toBeGreaterThan(0);
      expect(waitedAsAsked).toBeGreaterThan(0);
      const remote = await remoteFiles(client, project);
      expect(new Set(remote.map((d) => d.path)).size).toBe(20);
      expect(remote).toHaveLength(20);
    } finally {
      await limited.close();
    }
  });
});
