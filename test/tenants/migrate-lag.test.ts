// Migrations into a region that lists late (the target emulator run with --listing-lag): two cold
// migrations of one project, one right after the other, each from a store that knows nothing,
// make one target project and copy every document once. Issue 44's case: before the bound, the
// second made a second project, both exiting 0.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FerryClient } from '../../src/api/index.js';
import { mirror } from '../../jobs/mirror.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';
import { onlyJson, runFerry } from '../helpers/cli.js';
import { startRegion, writeProfiles, type Region } from '../helpers/regions.js';
import { remoteFiles, writeTree } from '../helpers/service.js';

const LAG_MS = Number(process.env.FERRY_TEST_LAG_MS ?? 1_000);
let uk: Region;
let us: Region;
let dir: string;
let env: Record<string, string>;
let src: FerryClient;
let dst: FerryClient;
let map: string;

beforeAll(async () => {
  [uk, us] = await Promise.all([startRegion(), startRegion(['--listing-lag', `${LAG_MS}ms`])]);
  dir = await mkdtemp(join(tmpdir(), 'ferry-migrate-lag-'));
  env = await writeProfiles(join(dir, 'config.yaml'), { uk: { region: uk, tenant: 0 }, us: { region: us, tenant: 1 } });
  src = uk.client(0);
  dst = us.client(1);
  map = join(dir, 'map.yaml');
  await writeFile(map, `organizationMetadata:\n${us.tenants[1]!.organizationMetadata.map((d) => `  "${d.name}": ${d.objectIdentifier}`).join('\n')}\n`);
});
afterAll(async () => {
  await Promise.all([uk?.stop(), us?.stop()]);
});

describe('ferry migrate into a region that lists late', () => {
  it('two cold migrations of one project, one right after the other: one target project, every document once', async () => {
    const project = await src.projects.create({ name: 'Lagging target', description: 'to be migrated twice' });
    const tree: Record<string, string> = {};
    for (let i = 0; i < 24; i++) tree[`f${i % 3}/doc ${i}.txt`] = `doc ${i} `.repeat(1 + (i % 4));
    await writeTree(join(dir, 'tree'), tree);
    const store = new SqliteCheckpointStore(join(dir, 'seed.sqlite'));
    await mirror({ source: join(dir, 'tree'), project: project.objectIdentifier }, { client: src, store });
    store.close();

    const run = (state: string) => runFerry(['migrate', '--from', 'uk', '--to', 'us', '--projects', project.objectIdentifier, '--map', map, '--json', '--listing-lag', `${Math.ceil((LAG_MS * 4) / 3)}ms`, '--state', join(dir, state)], env);
    const first = await run('a.sqlite');
    expect(first.code, first.stdout + first.stderr).toBe(0);
    const second = await run('b.sqlite');
    expect(second.code, second.stdout + second.stderr).toBe(0);
    expect((onlyJson(second) as { counts: Record<string, number> }).counts.copied).toBe(0);

    // Read once the lag has passed: the check itself must not read late.
    await sleep(LAG_MS + 50);
    const targets = (await dst.projects.list().all()).filter((p) => p.name === 'Lagging target');
    expect(targets).toHaveLength(1);
    const paths = (await remoteFiles(dst, targets[0]!.objectIdentifier)).map((d) => d.path ?? '').sort();
    expect(paths).toEqual(Object.keys(tree).map((k) => `/${k}`).sort());
  });
});
