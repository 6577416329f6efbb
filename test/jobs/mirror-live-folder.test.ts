// A mirror of a live folder (an inbox, a scanner's drop folder): a file the walk saw that is gone
// when its upload opens it is skipped as removed during the run, not failed; a file that changes
// while it is read is tried once more, then skipped as changing, as rclone does (issue 76).
// `ferry mirror` runs as its own process against the emulator.
import { describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { appendFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { useTempDirs } from '../helpers/temp.js';
import { remoteFiles, useService, writeTree } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';

const tempDir = useTempDirs();
const service = useService();
const MiB = 1024 * 1024;

async function newProject(name: string): Promise<string> {
  return (await service().client().projects.create({ name, description: 'a live folder' })).objectIdentifier;
}

/** Calls `then` once the emulator has received `bytes` more than when asked; polls every 20 ms. */
function onceReceived(bytes: number, then: () => void): () => void {
  const from = service().emulator.traffic().bytesReceived;
  const timer = setInterval(() => {
    if (service().emulator.traffic().bytesReceived - from < bytes) return;
    clearInterval(timer);
    then();
  }, 20);
  return () => clearInterval(timer);
}

describe('a mirror of a folder that changes while it runs', () => {
  it('a file removed after the walk saw it is skipped as removed during the run: exit 0, said once', async () => {
    const src = join(await tempDir('ferry-live-'), 'src');
    await writeTree(src, { 'a-big.bin': randomBytes(4 * MiB), 'b.txt': 'bbb', 'sub/c.txt': 'ccc' });
    const project = await newProject('live-removed');
    const state = join(src, '..', 'state.sqlite');
    // The big file first and alone, slowed: the others wait in the backlog while one is removed.
    const stop = onceReceived(256 * 1024, () => rmSync(join(src, 'b.txt')));
    const r = await runFerry(['mirror', src, '--project', project, '--state', state, '--concurrency', '1', '--bwlimit', '1M', '--json'], service().env());
    stop();
    const summary = onlyJson(r);
    expect(summary, r.stderr).toMatchObject({ status: 'succeeded', exitCode: 0, counts: { uploaded: 2, failed: 0, skipped: 1 } });
    expect(summary.problems).toEqual([{ key: 'b.txt', reason: expect.stringContaining('removed during the run') }]);
    expect((await remoteFiles(service().client(), project)).map((d) => d.path).sort()).toEqual(['/a-big.bin', '/sub/c.txt']);
    // The next run does not mention it.
    const again = onlyJson(await runFerry(['mirror', src, '--project', project, '--state', state, '--json'], service().env()));
    expect(again).toMatchObject({ status: 'succeeded', exitCode: 0, counts: { failed: 0 } });
    expect(JSON.stringify(again)).not.toContain('b.txt');
  });

  it('a file that keeps changing while it is read is tried once more, then skipped as changing: exit 0', async () => {
    const src = join(await tempDir('ferry-live-'), 'src');
    await writeTree(src, { 'growing.log': randomBytes(2 * MiB), 'steady.txt': 'steady' });
    const project = await newProject('live-changing');
    // A writer appending to the log for as long as the mirror runs.
    const writer = setInterval(() => appendFileSync(join(src, 'growing.log'), 'another line\n'), 5);
    try {
      const r = await runFerry(['mirror', src, '--project', project, '--state', join(src, '..', 'state.sqlite'), '--concurrency', '1', '--bwlimit', '4M', '--json'], service().env());
      const summary = onlyJson(r);
      expect(summary, r.stderr).toMatchObject({ status: 'succeeded', exitCode: 0, counts: { uploaded: 1, failed: 0, skipped: 1 } });
      expect(summary.problems).toEqual([{ key: 'growing.log', reason: expect.stringMatching(/changing: it changed while it was read, twice/) }]);
    } finally {
      clearInterval(writer);
    }
    expect((await remoteFiles(service().client(), project)).map((d) => d.path)).toEqual(['/steady.txt']);
  });
});
