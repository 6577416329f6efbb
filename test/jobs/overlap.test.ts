// Cron runs that overlap: two `ferry upload` (and two `ferry mirror`) of the same tree into the
// same place, started at the same moment, six times each. Every file must end on the service
// exactly once; the run refused by the lock exits 4 and still prints one JSON object.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { remoteFiles, startService, writeTree, type Service } from '../helpers/service.js';
import { onlyJson, runFerry, type CliResult } from '../helpers/cli.js';

const ROUNDS = 6;
const FILES = 60;

let service: Service;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.close());

async function tree(): Promise<{ dir: string; src: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-overlap-'));
  const src = join(dir, 'src');
  const files: Record<string, string> = {};
  for (let i = 0; i < FILES; i++) files[`${i % 3 === 0 ? 'sub/' : ''}f${i}.txt`] = `file ${i}`;
  await writeTree(src, files);
  return { dir, src };
}

/** Both runs' outcomes: either one was refused (exit 4, one JSON object saying so) or they did not overlap. */
function checkPair(a: CliResult, b: CliResult): void {
  const codes = [a.code, b.code].sort();
  for (const r of [a, b]) {
    const answer = onlyJson(r);
    if (r.code === 4) {
      expect(answer).toMatchObject({ status: 'locked', exitCode: 4 });
      expect(String(answer.error)).toContain('is already working on this job');
    }
  }
  expect(codes[0], `${a.stderr}\n${b.stderr}`).toBe(0);
  expect([0, 4]).toContain(codes[1]);
}

async function expectEachOnce(project: string): Promise<void> {
  const docs = await remoteFiles(service.client(), project);
  const paths = docs.map((d) => d.path ?? '').sort();
  expect(new Set(paths).size).toBe(paths.length);
  expect(paths).toHaveLength(FILES);
}

// One test per round: each has its own tree, project and store, and none needs more than the two
// runs it starts, however slow the machine.
describe.each(['upload', 'mirror'] as const)('overlapping ferry %s runs', (kind) => {
  it.each(Array.from({ length: ROUNDS }, (_, round) => round))(`round %i: two started at once, every file exactly once`, async (round) => {
    const client = service.client();
    const { dir, src } = await tree();
    const project = (await client.projects.create({ name: `overlap-${kind}-${round}`, description: 'two at once' })).objectIdentifier;
    const args = [kind, src, '--project', project, '--state', join(dir, 'state.sqlite'), '--json'];
    if (kind === 'upload') args.push('--playbook', (await client.playbooks.create({ name: `overlap ${round}`, isPrivate: false, organizationWide: true })).objectIdentifier);
    const [a, b] = await Promise.all([runFerry(args, service.env()), runFerry(args, service.env())]);
    checkPair(a, b);
    await expectEachOnce(project);
  });
});
