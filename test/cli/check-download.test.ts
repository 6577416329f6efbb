// `ferry check --download` reads every document back and compares its bytes, each checked as a
// pull checks them against the sha256 the document carries (issue 76): under the emulator's
// `corrupt` fault a body that does not match is read once more, and one that never matches is a
// difference naming the document (exit 1), never taken for a change of the local file.
import { describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { useTempDirs } from '../helpers/temp.js';
import { mirroredProject, useService } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';

const tempDir = useTempDirs();
const service = useService();
const FILES = { 'a.txt': 'alpha', 'sub/b.bin': randomBytes(200 * 1024), 'sub/c.txt': 'charlie' };

describe('ferry check --download', () => {
  it('reads every document back: all match without faults, and the bytes read are counted', async () => {
    const dir = await tempDir('ferry-check-dl-');
    const project = await mirroredProject(service().client(), join(dir, 'src'), FILES, 'check download clean');
    const r = onlyJson(await runFerry(['check', join(dir, 'src'), '--project', project, '--download', '--json'], service().env()));
    expect(r).toMatchObject({ status: 'matching', exitCode: 0, matching: 3, differenceCount: 0 });
    // Each file hashed here and read back once from the service.
    const total = Object.values(FILES).reduce((n, c) => n + Buffer.byteLength(c), 0);
    expect(r.bytesHashed).toBe(2 * total);
  });

  it('bytes that never match the sha256 their document carries are a difference naming the document: exit 1', async () => {
    const dir = await tempDir('ferry-check-dl-');
    const project = await mirroredProject(service().client(), join(dir, 'src'), FILES, 'check download corrupt');
    service().emulator.setFaults('corrupt=1');
    try {
      const r = onlyJson(await runFerry(['check', join(dir, 'src'), '--project', project, '--download', '--json'], service().env()));
      expect(r).toMatchObject({ status: 'different', exitCode: 1, differenceCount: 3 });
      for (const d of r.differences as { kind: string; path: string; detail: string }[]) {
        expect(d.kind).toBe('changed');
        expect(d.detail).toMatch(/the service sent bytes that do not match the sha256 the document carries, twice \(it says [0-9a-f]{64}; sent [0-9a-f]{64}, then [0-9a-f]{64}\) \(document [0-9a-f-]{36}\)/);
      }
      // Without --download the documents' own sha256 is compared, nothing is read: all match.
      expect(onlyJson(await runFerry(['check', join(dir, 'src'), '--project', project, '--json'], service().env()))).toMatchObject({ exitCode: 0, matching: 3 });
    } finally {
      service().emulator.setFaults('');
    }
  });

  it('with half the bodies corrupted, a mismatch is read once more: no file is ever called changed for bytes the service garbled once', async () => {
    const dir = await tempDir('ferry-check-dl-');
    const project = await mirroredProject(service().client(), join(dir, 'src'), FILES, 'check download half');
    service().emulator.setFaults('corrupt=0.5,seed=3');
    try {
      let last: Record<string, unknown> = {};
      for (let run = 0; run < 8 && last.exitCode !== 0; run++) {
        last = onlyJson(await runFerry(['check', join(dir, 'src'), '--project', project, '--download', '--json'], service().env()));
        for (const d of last.differences as { detail: string }[]) expect(d.detail).toContain('do not match the sha256 the document carries, twice');
      }
      expect(last).toMatchObject({ status: 'matching', exitCode: 0, matching: 3 });
    } finally {
      service().emulator.setFaults('');
    }
  });
});
