// A first SIGTERM or Ctrl-C ends `watch` and `report` as every command ends on a signal
// (docs/cli.md, *Exit codes*; issue 77): under --json one JSON object, status `interrupted`,
// exit 3, naming what the command had opened; nothing is changed.
import { describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { useTempDirs } from '../helpers/temp.js';
import { useService, writeTree } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';

const tempDir = useTempDirs();
/** Documents stay in processing for the whole test: a watch has something to wait for. */
const service = useService({ processing: { minDelayMs: 600_000, maxDelayMs: 600_000, seed: 1 } });

describe('watch stopped by a signal', () => {
  for (const sig of ['SIGTERM', 'SIGINT'] as const) {
    it(`${sig} while it waits: one JSON object, interrupted, exit 3, naming the batch`, async () => {
      const dir = await tempDir('ferry-watch-signal-');
      await writeTree(join(dir, 'src'), { 'a.txt': 'alpha' });
      const project = (await service().client().projects.create({ name: `watch ${sig}`, description: '' })).objectIdentifier;
      const state = join(dir, 'state.sqlite');
      expect((await runFerry(['mirror', join(dir, 'src'), '--project', project, '--state', state], service().env())).code).toBe(0);
      // Signalled once it has asked the service about the batch twice: it is waiting.
      const before = service().emulator.traffic().requests;
      let child: ChildProcess | undefined;
      const timer = setInterval(() => {
        if (child && service().emulator.traffic().requests >= before + 3) {
          clearInterval(timer);
          child.kill(sig);
        }
      }, 20);
      const r = await runFerry(['watch', '--run', 'last', '--state', state, '--json'], service().env(), (c) => (child = c));
      clearInterval(timer);
      expect(r.code, r.stderr).toBe(3);
      const answer = onlyJson(r);
      expect(answer).toMatchObject({ command: 'watch', status: 'interrupted', exitCode: 3, watched: expect.stringContaining(`project ${project}, made by run 1`) });
      expect(String(answer.error)).toContain(`${sig} received`);
    });
  }
});

describe('report stopped by a signal', () => {
  it('SIGTERM while it reads a slow listing: one JSON object, interrupted, exit 3, naming the batch it opened', async () => {
    const dir = await tempDir('ferry-report-signal-');
    await writeTree(join(dir, 'src'), { 'a.txt': 'alpha', 'b.txt': 'bravo' });
    const project = (await service().client().projects.create({ name: 'report SIGTERM', description: '' })).objectIdentifier;
    const state = join(dir, 'state.sqlite');
    expect((await runFerry(['mirror', join(dir, 'src'), '--project', project, '--state', state], service().env())).code).toBe(0);
    // Every listing request now takes ten seconds; the signal comes once the report has asked.
    service().emulator.setFaults({ latencyMs: 10_000 });
    try {
      const before = service().emulator.traffic().requests;
      let child: ChildProcess | undefined;
      const timer = setInterval(() => {
        if (child && service().emulator.traffic().requests > before) {
          clearInterval(timer);
          child.kill('SIGTERM');
        }
      }, 20);
      const r = await runFerry(['report', '--run', 'last', '--state', state, '--json'], service().env(), (c) => (child = c));
      clearInterval(timer);
      expect(r.code, r.stderr).toBe(3);
      const answer = onlyJson(r);
      expect(answer).toMatchObject({ command: 'report', status: 'interrupted', exitCode: 3, reported: expect.stringContaining(`project ${project}, made by run 1`) });
      expect(String(answer.error)).toContain('SIGTERM received');
    } finally {
      service().emulator.setFaults({});
    }
  });
});
