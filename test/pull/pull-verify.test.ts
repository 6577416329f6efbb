// Every byte a pull receives is checked against the sha256 its document carries (issue 76): the
// emulator's `corrupt` fault serves bodies of the same length with one byte flipped, status 200 or
// 206, and `ferry pull` runs as its own process against it over loopback HTTP.
import { describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { useTempDirs } from '../helpers/temp.js';
import { mirroredProject, useService } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';
import { keptPartialPath } from '../helpers/kept-partial.js';

const tempDir = useTempDirs();
const service = useService();
const MiB = 1024 * 1024;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** Small (written at once), mid-sized (streamed) and large (resumable) files. */
const FILES: Record<string, Buffer> = {
  'small.txt': Buffer.from('a small file\n'),
  'docs/mid.bin': randomBytes(300 * 1024),
  'docs/deep/other.bin': randomBytes(90 * 1024),
  'big.bin': randomBytes(17 * MiB),
};

async function project(name: string): Promise<string> {
  return mirroredProject(service().client(), join(await tempDir('ferry-verify-src-'), 'src'), FILES, name);
}

/** Every file under `dir`, relative path -> sha256 (temporary files included, by their names). */
async function tree(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const rel = join(e.parentPath, e.name).slice(dir.length + 1);
    if (rel === '.ferry-names.jsonl') continue;
    out[rel] = sha(await readFile(join(dir, rel)));
  }
  return out;
}

const wanted = Object.fromEntries(Object.entries(FILES).map(([k, v]) => [k, sha(v)]));

describe('a pull checks what it receives against the sha256 the document carries', () => {
  it('a body corrupted on every attempt fails its item by name with both hashes: exit 1, nothing under its name', async () => {
    const p = await project('verify-always');
    const out = join(await tempDir('ferry-verify-out-'), 'out');
    service().emulator.setFaults('corrupt=1');
    try {
      const result = onlyJson(await runFerry(['pull', p, out, '--state', join(out, '..', 'state.sqlite'), '--json'], service().env()));
      expect(result).toMatchObject({ status: 'failed', exitCode: 1, counts: { downloaded: 0, failed: 4 } });
      const errors = result.errors as { key: string; error: string }[];
      expect(errors.map((e) => e.key).sort()).toEqual(Object.keys(FILES).sort());
      for (const e of errors) {
        expect(e.error).toContain('did not match its sha256 2 times');
        expect(e.error).toContain(`the source says ${wanted[e.key]}`);
        // Both attempts' hashes named, neither the right one.
        const received = /received ([0-9a-f]{64}), then ([0-9a-f]{64})/.exec(e.error);
        expect(received, e.error).not.toBeNull();
        expect(received![1]).not.toBe(wanted[e.key]);
      }
      // No wrong file under a document's name, and no partial left behind.
      expect(await tree(out)).toEqual({});
    } finally {
      service().emulator.setFaults('');
    }
  });

  it('--ignore-checksum takes the bytes as they come, as asked: exit 0, nothing counted as checked', async () => {
    const p = await project('verify-ignored');
    const base = await tempDir('ferry-verify-out-');
    service().emulator.setFaults('corrupt=1');
    try {
      const result = onlyJson(await runFerry(['pull', p, join(base, 'out'), '--state', join(base, 'state.sqlite'), '--ignore-checksum', '--json'], service().env()));
      expect(result).toMatchObject({ status: 'succeeded', exitCode: 0, counts: { downloaded: 4, failed: 0 } });
      expect(result.contentCheck).toBeUndefined();
      // The bytes are the corrupted ones: the flag did switch the check off.
      expect((await tree(join(base, 'out')))['small.txt']).not.toBe(wanted['small.txt']);
    } finally {
      service().emulator.setFaults('');
    }
  });

  it('with half the bodies corrupted, every file that lands is right, and reruns end with every file right', async () => {
    const p = await project('verify-half');
    const base = await tempDir('ferry-verify-out-');
    const out = join(base, 'out');
    service().emulator.setFaults('corrupt=0.5,seed=3');
    try {
      let last: Record<string, unknown> = {};
      let sawMismatch = false;
      for (let run = 0; run < 8; run++) {
        const ran = await runFerry(['pull', p, out, '--state', join(base, 'state.sqlite'), '--json'], { ...service().env(), FERRY_LOG_LEVEL: 'warn' });
        last = onlyJson(ran);
        if (ran.stderr.includes('did not match its sha256')) sawMismatch = true;
        const landed = await tree(out);
        // Whatever landed is the document's content: a wrong file never stands under its name.
        for (const [rel, digest] of Object.entries(landed)) expect(digest, rel).toBe(wanted[rel]);
        if ((last.errors as { error: string }[]).some((e) => e.error.includes('did not match its sha256'))) sawMismatch = true;
        if (last.exitCode === 0) break;
        expect(last.exitCode).toBe(1);
      }
      expect(last).toMatchObject({ status: 'succeeded', exitCode: 0 });
      expect(await tree(out)).toEqual(wanted);
      // The fault did fire (a first attempt's mismatch retried, or an item failed twice).
      expect(sawMismatch).toBe(true);
    } finally {
      service().emulator.setFaults('');
    }
  });

  it('counts what it checked, and names the documents that carry no sha256', async () => {
    const p = await project('verify-counts');
    // A document uploaded without ferry's identity (another tool): nothing to check it against.
    const client = service().client();
    const batch = (await import('node:crypto')).randomUUID();
    await client.documents.upload(p, { stream: (await import('node:stream')).Readable.from([Buffer.from('from elsewhere')]), size: 14, filename: 'foreign.txt' }, { documentUploadIdentifier: batch });
    const base = await tempDir('ferry-verify-out-');
    const out = join(base, 'out');
    const result = onlyJson(await runFerry(['pull', p, out, '--state', join(base, 'state.sqlite'), '--json'], service().env()));
    expect(result).toMatchObject({ status: 'succeeded', exitCode: 0, contentCheck: { verified: 4, unverifiable: 1, unverifiableKeys: ['foreign.txt'] } });
    const text = await runFerry(['pull', p, join(base, 'again'), '--state', join(base, 'state2.sqlite')], service().env());
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('content checked: 4 matched the sha256 their documents carry; 1 carried no sha256 and could not be checked');
  });

  it('a resumed download under the corrupt fault: the rest sent garbled fails the file by name, exit 1, no file and no partial left; a rerun without the fault lands it', async () => {
    const p = await project('verify-resume-corrupt');
    const base = await tempDir('ferry-verify-out-');
    const out = join(base, 'out');
    // The document's own first 8 MiB kept, as a killed pull leaves them.
    await writeFile(await keptPartialPath(service(), p, out, 'big.bin'), FILES['big.bin']!.subarray(0, 8 * MiB));
    const state = join(base, 'state.sqlite');
    service().emulator.setFaults('corrupt=1');
    try {
      const result = onlyJson(await runFerry(['pull', p, out, '--state', state, '--include', 'big.bin', '--json'], service().env()));
      expect(result).toMatchObject({ status: 'failed', exitCode: 1, counts: { downloaded: 0, failed: 1 } });
      expect(result.errors).toEqual([{ key: 'big.bin', error: expect.stringContaining('did not match its sha256 2 times') }]);
      expect(await tree(out)).toEqual({});
    } finally {
      service().emulator.setFaults('');
    }
    const again = onlyJson(await runFerry(['pull', p, out, '--state', state, '--include', 'big.bin', '--json'], service().env()));
    expect(again).toMatchObject({ status: 'succeeded', exitCode: 0, counts: { downloaded: 1 } });
    expect(await tree(out)).toEqual({ 'big.bin': wanted['big.bin'] });
  });

  it('a resumed download is checked whole: kept bytes that are not the document\'s are caught, and the file downloaded again from the start', async () => {
    const p = await project('verify-resume');
    const base = await tempDir('ferry-verify-out-');
    const out = join(base, 'out');
    // A kept partial of the right name and length holding other bytes (a partial stitched onto the wrong file).
    await writeFile(await keptPartialPath(service(), p, out, 'big.bin'), randomBytes(8 * MiB));
    const result = onlyJson(await runFerry(['pull', p, out, '--state', join(base, 'state.sqlite'), '--json'], service().env()));
    expect(result).toMatchObject({ status: 'succeeded', exitCode: 0, counts: { downloaded: 4, failed: 0 } });
    expect(await tree(out)).toEqual(wanted);
  });
});
