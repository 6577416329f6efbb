// Upload batches end to end against the emulator: every failure rule, the report against the
// service's own failedReasonSummary, the retry policy, and credits running out.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { upload } from '../../jobs/upload.js';
import { DEFAULT_RETRY_POLICY } from '../../jobs/retry-policy.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';
import { renderReport } from '../../src/report/render.js';
import { remoteFiles, startService, writeTree, type Service } from '../helpers/service.js';

let service: Service;
beforeAll(async () => {
  service = await startService({ processing: { minDelayMs: 1, maxDelayMs: 20, seed: 5, ocrPageLimit: 5 } });
});
afterAll(() => service.close());
afterEach(() => {
  service.emulator.setFaults({});
  service.emulator.setCredits(service.emulator.tenants[0]!.name, 1_000_000);
  expect(service.emulator.contractViolations).toEqual([]);
});

// Built from halves so that no file of ours carries the antivirus test signature.
const EICAR = ['X5O!P%@AP[4\\PZX54(P^)7CC)7}$', 'EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*'].join('');
const pdf = (pages: number) => `%PDF-1.4\n${Array.from({ length: pages }, () => '<< /Type /Page >>\n').join('')}%%EOF\n`;

async function setup() {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-upload-'));
  const client = service.client();
  const project = (await client.projects.create({ name: `upload ${dir}`, description: 'batches' })).objectIdentifier;
  const playbook = (await client.playbooks.create({ name: `pb ${dir}`, isPrivate: false, organizationWide: true })).objectIdentifier;
  const store = new SqliteCheckpointStore(join(dir, 'state.sqlite'));
  return { dir, client, project, playbook, store, src: join(dir, 'src') };
}

describe('ferry upload', () => {
  it('reports exactly the failedReasonSummary of the service and lists every failed file with its local path', async () => {
    const { client, project, playbook, store, src } = await setup();
    await writeTree(src, {
      'good/contract.pdf': pdf(2),
      'good/notes.txt': 'plain notes',
      'bad/archive.7z': '7z bytes',
      'bad/virus.txt': EICAR,
      'bad/empty.txt': '',
      'bad/fake.pdf': 'not a pdf at all',
      'bad/huge.pdf': pdf(9),
      'flaky/a__fail_uploadFailure__.txt': 'x',
      'flaky/b__fail_unknownException__.txt': 'x',
      'flaky/c__fail_fileScanTimedOut__.txt': 'x',
      'flaky/d__fail_outOfMemory__.txt': 'x',
    });
    const result = await upload({ source: src, project, playbook, name: 'every rule', ocrStrategy: 'always', firstPollMs: 20 }, { client, store });
    store.close();

    expect(result.batches).toHaveLength(1);
    const batch = result.batches[0]!;
    const details = await client.documentUploads.details(playbook, batch.uploadIdentifier);
    expect(details.dateCompleted).not.toBeNull();
    const summary = details.failedReasonSummary as Record<string, number>;
    const report = batch.report!;
    expect(report.totals).toMatchObject({ files: 11, completed: 2, failed: 9, processing: 0 });
    expect(Object.fromEntries(report.reasons.map((r) => [r.reason, r.count]))).toEqual(Object.fromEntries(Object.entries(summary).filter(([, n]) => n > 0)));
    expect(summary).toMatchObject({ unsupportedFileType: 1, maliciousFile: 1, badFile: 2, ocrPageLimitExceeded: 1, uploadFailure: 1, unknownException: 1, fileScanTimedOut: 1, outOfMemory: 1, insufficientCredits: 0 });
    expect(report.failedFiles.map((f) => [f.localPath, f.reason]).sort()).toEqual([
      ['bad/archive.7z', 'unsupportedFileType'],
      ['bad/empty.txt', 'badFile'],
      ['bad/fake.pdf', 'badFile'],
      ['bad/huge.pdf', 'ocrPageLimitExceeded'],
      ['bad/virus.txt', 'maliciousFile'],
      ['flaky/a__fail_uploadFailure__.txt', 'uploadFailure'],
      ['flaky/b__fail_unknownException__.txt', 'unknownException'],
      ['flaky/c__fail_fileScanTimedOut__.txt', 'fileScanTimedOut'],
      ['flaky/d__fail_outOfMemory__.txt', 'outOfMemory'],
    ]);
    const text = renderReport(report, 'text');
    expect(text).toContain('badFile');
    expect(text).toContain('bad/huge.pdf');
    const csv = renderReport(report, 'csv');
    expect(csv.split('\r\n').filter(Boolean)).toHaveLength(10);
    expect(result.remainingFailures).toMatchObject({ badFile: 2 });
  });

  it('retries transient failures into a new batch until they clear, and leaves permanent ones reported', async () => {
    const { client, project, playbook, store, src } = await setup();
    await writeTree(src, { 'ok.txt': 'fine', 'flaky-1.txt': 'one', 'flaky-2.txt': 'two', 'broken.pdf': 'not a pdf' });
    // Every document of the first batch fails with uploadFailure, except the bad PDF (badFile wins).
    service.emulator.setFaults({ failReasons: { uploadFailure: 1 } });
    const result = await upload(
      {
        source: src,
        project,
        playbook,
        firstPollMs: 20,
        retryFailed: true,
        // The fault clears once the first batch has settled, as a transient fault would.
        onPoll: (d) => {
          if ((d.processingDocumentCount ?? 0) === 0) service.emulator.setFaults({});
        },
      },
      { client, store },
    );
    store.close();
    expect(result.batches).toHaveLength(2);
    expect(result.batches[0]!.report!.reasons.map((r) => [r.reason, r.count])).toEqual([['uploadFailure', 3], ['badFile', 1]]);
    expect(result.batches[1]!.summary.counts.uploaded).toBe(3);
    expect(result.batches[1]!.report!.totals).toMatchObject({ files: 3, completed: 3, failed: 0 });
    expect(result.remainingFailures).toEqual({});
    // The retried files now have a good document; the failed first ones are superseded, not deleted.
    const docs = await remoteFiles(client, project);
    expect(docs.filter((d) => d.name === 'flaky-1.txt').map((d) => d.uploadSuccessful).sort()).toEqual([false, true]);
    expect(result.batches[1]!.summary.superseded).toHaveLength(3);
  });

  it('never retries permanent failures', async () => {
    const { client, project, playbook, store, src } = await setup();
    await writeTree(src, { 'x.7z': 'a', 'y.txt': '' });
    const result = await upload({ source: src, project, playbook, firstPollMs: 20, retryFailed: true }, { client, store });
    store.close();
    expect(result.batches).toHaveLength(1);
    expect(result.remainingFailures).toEqual({ badFile: 1, unsupportedFileType: 1 });
  });

  it('retries ocrPageLimitExceeded only with a configured OCR fallback', async () => {
    const { client, project, playbook, store, src } = await setup();
    await writeTree(src, { 'long.pdf': pdf(12) });
    const result = await upload(
      { source: src, project, playbook, firstPollMs: 20, retryFailed: true, ocrStrategy: 'always', policy: { ...DEFAULT_RETRY_POLICY, ocrFallback: 'never' } },
      { client, store },
    );
    store.close();
    expect(result.batches).toHaveLength(2);
    expect(result.batches[0]!.report!.reasons[0]!.reason).toBe('ocrPageLimitExceeded');
    expect(result.batches[1]!.report!.totals.completed).toBe(1);
    const docs = await remoteFiles(client, project);
    expect(docs.map((d) => d.ocrStrategy).sort()).toEqual(['always', 'never']);
  });

  it('stops at once when the tenant runs out of credits', async () => {
    const { client, project, playbook, store, src } = await setup();
    await writeTree(src, { 'a.txt': 'a', 'b.txt': 'b', 'c__fail_uploadFailure__.txt': 'c' });
    service.emulator.setCredits(service.emulator.tenants[0]!.name, 0);
    const result = await upload({ source: src, project, playbook, firstPollMs: 20, retryFailed: true }, { client, store });
    store.close();
    expect(result.creditsExhausted).toBe(true);
    expect(result.batches).toHaveLength(1);
    expect(result.remainingFailures.insufficientCredits).toBe(2);
  });
});
