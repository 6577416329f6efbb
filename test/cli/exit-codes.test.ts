// Every row of the exit-code table in docs/cli.md, shown by the commands users run: each code is
// reached the way the table says, and the table itself is read so that a new row needs a case here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { startService, writeTree, type Service } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';
import { mirrorJobKey } from '../../jobs/mirror.js';

let service: Service;
let dir: string;
const UNKNOWN = '00000000-0000-4000-8000-000000000000';
beforeAll(async () => {
  // Processing slow enough that a batch outlasts a --timeout of 1 ms (row 5: the first look finds
  // it processing), and quick enough that a tenant without credits sees its documents fail (row 6).
  service = await startService({ processing: { minDelayMs: 2_000, maxDelayMs: 2_000, seed: 1 } });
  dir = await mkdtemp(join(tmpdir(), 'ferry-exits-'));
  await writeTree(join(dir, 'src'), { 'a.txt': 'a', 'b.txt': 'b' });
  await writeFile(join(dir, 'a-file'), 'not a folder');
});
afterAll(() => service.close());

const state = (name: string) => join(dir, `${name}.sqlite`);
const wrongSecret = () => ({ ...service.env(), FERRY_CLIENT_SECRET: 'not-the-secret' });

/** The commands that show each row: [what, args, env?]. */
const ROWS: Record<number, [string, () => string[], (() => Record<string, string>)?][]> = {
  0: [
    ['a mirror dry run', () => ['mirror', join(dir, 'src'), '--project', service.project, '--dry-run', '--state', state('dry')]],
    ['a pull dry run', () => ['pull', service.project, join(dir, 'out-dry'), '--dry-run', '--state', state('pull-dry')]],
    ['a mirror that carries everything', () => ['mirror', join(dir, 'src'), '--project', service.project, '--state', state('ok')]],
  ],
  1: [
    ['a mirror with a name it cannot carry', () => ['mirror', join(dir, 'bad'), '--project', service.project, '--state', state('bad')]],
    ['verify of a file that is not an archive', () => ['playbooks', 'verify', join(dir, 'a-file')]],
  ],
  2: [
    ['an unknown flag', () => ['mirror', join(dir, 'src'), '--no-such-flag']],
    ['no credentials', () => ['mirror', join(dir, 'src'), '--project', service.project], () => ({ FERRY_BASE_URL: service.env().FERRY_BASE_URL! })],
    ['a source that is not there', () => ['mirror', join(dir, 'nope'), '--project', service.project, '--state', state('nope')]],
    ['a pull into a file', () => ['pull', service.project, join(dir, 'a-file'), '--state', state('pull-file')]],
    ['a project id that is not an id', () => ['pull', 'not-an-id', join(dir, 'out')]],
  ],
  3: [
    ['a mirror with a wrong secret', () => ['mirror', join(dir, 'src'), '--project', service.project, '--state', state('s1')], wrongSecret],
    ['a pull with a wrong secret', () => ['pull', service.project, join(dir, 'out-secret'), '--state', state('s2')], wrongSecret],
    ['a mirror into an unknown project', () => ['mirror', join(dir, 'src'), '--project', UNKNOWN, '--state', state('s3')]],
    ['a pull of an unknown project', () => ['pull', UNKNOWN, join(dir, 'out-unknown'), '--state', state('s4')]],
  ],
  4: [['a mirror whose lock another live run holds', () => ['mirror', join(dir, 'src'), '--project', service.project, '--state', state('locked')]]],
  5: [['an upload whose batch is still processing at --timeout', () => ['upload', join(dir, 'src'), '--project', service.project, '--playbook', playbook, '--to', 'exit5', '--timeout', '1ms', '--state', state('timeout')]]],
  6: [['an upload into a tenant without processing credits', () => ['upload', join(dir, 'src'), '--project', service.project, '--playbook', playbook, '--to', 'exit6', '--state', state('credits')]]],
  8: [
    ['a mirror at its --max-files', () => ['mirror', join(dir, 'src'), '--project', service.project, '--to', 'exit8', '--max-files', '1', '--state', state('limit')]],
    ['an upload at its --max-files (its batch left open for the next run)', () => ['upload', join(dir, 'src'), '--project', service.project, '--playbook', playbook, '--to', 'exit8-upload', '--max-files', '1', '--state', state('limit-upload')]],
  ],
};
let playbook = '';

describe('exit codes, one row of docs/cli.md at a time', () => {
  it('the table in docs/cli.md has exactly the rows shown below', async () => {
    const docs = await readFile(new URL('../../docs/cli.md', import.meta.url), 'utf8');
    const table = docs.slice(docs.indexOf('## Exit codes'), docs.indexOf('\n## ', docs.indexOf('## Exit codes') + 5));
    const codes = [...table.matchAll(/^\| (\d+(?:, \d+)*) \|/gm)].flatMap((m) => (m[1] as string).split(', ').map(Number));
    // 7 (a lease lost) is shown by test/jobs/lease-processes.test.ts, a holder stopped past its
    // TTL; 130 and 143 (a second signal) by test/cli/interrupt.test.ts: a plain run shows neither.
    expect(codes).toEqual([...Object.keys(ROWS).map(Number), 7, 130, 143].sort((a, b) => a - b));
  });

  for (const [code, cases] of Object.entries(ROWS)) {
    it(`exit ${code}: ${cases.map((c) => c[0]).join('; ')}`, async () => {
      const client = service.client();
      if (code === '1') await writeTree(join(dir, 'bad'), { 'ok.txt': 'ok', 'ctl\u0001.txt': 'x' });
      if (code === '5' || code === '6' || code === '8') playbook = (await client.playbooks.create({ name: `exit ${code}`, isPrivate: false, organizationWide: true })).objectIdentifier;
      const tenant = service.emulator.tenants[0]!.name;
      if (code === '6') service.emulator.setCredits(tenant, 0);
      let holder: { store: SqliteCheckpointStore; key: string } | undefined;
      if (code === '4') {
        const store = new SqliteCheckpointStore(state('locked'));
        const key = mirrorJobKey(service.emulator.baseUrl, { source: join(dir, 'src'), project: service.project });
        const run = store.startRun({ job: 'mirror', jobKey: key, params: {}, uploadId: null });
        expect(store.acquireLock(key, 'this-test', run.id)).toMatchObject({ ok: true });
        holder = { store, key };
      }
      try {
        for (const [what, args, env] of cases) {
          const r = await runFerry([...args(), '--json'], env ? env() : service.env());
          expect(r.code, `${what}: ${r.stderr}`).toBe(Number(code));
          // Whatever the exit, one JSON object naming it; no stack trace.
          expect(onlyJson(r).exitCode, what).toBe(Number(code));
          expect(r.stderr, what).not.toMatch(/\n\s+at /);
        }
      } finally {
        if (code === '6') service.emulator.setCredits(tenant, 1_000_000);
        holder?.store.releaseLock(holder.key, 'this-test');
        holder?.store.close();
      }
    });
  }
});
