// What a migration asks of the target, counted on the wire: a target project the run itself made
// is known to be empty, so it is neither looked up nor listed (not for a cold start, not for its
// folders) before the documents go in; a target found again by a fresh store is listed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { migrate } from '../../jobs/migrate.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';
import { countingDispatcher, mirroredProject, remoteFiles, remoteFolders, startService, whereFoldersExist, type Service } from '../helpers/service.js';

let service: Service;
let dir: string;

beforeAll(async () => {
  service = await startService();
  dir = await mkdtemp(join(tmpdir(), 'ferry-migrate-requests-'));
});
afterAll(async () => {
  await service?.close();
});

describe('migrate into a project it makes', () => {
  it('never lists the new target project; a second migration from a fresh store lists it and copies nothing', async () => {
    const src = service.client({}, 0);
    const tree = { 'root.txt': 'root', 'a/two.txt': 'two', 'a/b/c/one.txt': 'one', 'x/three.txt': 'three', 'a/b/c/d/e/deep.txt': 'deep' };
    const project = await mirroredProject(src, join(dir, 'tree'), tree, 'migrated whole');

    const counting = countingDispatcher();
    const dst = service.client({ dispatcher: counting.dispatcher }, 1);
    const store = new SqliteCheckpointStore(join(dir, 'first.sqlite'));
    const first = await migrate({ projects: [project] }, { from: src, to: dst, store });
    store.close();
    const report = (first.projects as { target: string; outcome: string }[])[0]!;
    expect(report.outcome).toBe('created');
    expect(first.counts).toMatchObject({ uploaded: 6, failed: 0 });
    const target = report.target;
    expect(counting.count('GET', new RegExp(`^/projects/${target}/documents$`))).toBe(0);
    expect(counting.count('GET', new RegExp(`^/projects/${target}$`))).toBe(0);
    const check = service.client({}, 1);
    expect((await remoteFiles(check, target)).map((d) => d.path).sort()).toEqual(Object.keys(tree).map((k) => `/${k}`).sort());
    expect((await remoteFolders(check, target)).sort()).toEqual(whereFoldersExist(['/a', '/a/b', '/a/b/c', '/a/b/c/d', '/a/b/c/d/e', '/x']));

    // Another store, the same pair: the project an earlier run made is found, listed, and nothing is copied.
    const again = new SqliteCheckpointStore(join(dir, 'second.sqlite'));
    const second = await migrate({ projects: [project] }, { from: src, to: dst, store: again });
    again.close();
    expect((second.projects as { outcome: string }[])[0]!.outcome).toBe('existing');
    expect(second.counts).toMatchObject({ uploaded: 0, failed: 0 });
    expect(counting.count('GET', new RegExp(`^/projects/${target}/documents$`))).toBeGreaterThan(0);
  });
});
