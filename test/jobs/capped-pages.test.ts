// A service that silently caps page sizes (the emulator with maxPageSize 7, as `ferry emulator
// --max-page-size 7`): a 250-document project is read whole by the mirror's settling after a
// crash, by the report and by `ferry api --paginate`. Before paging read past short pages, each
// stopped after the first 7.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { remoteFiles, startService, writeTree, type Service } from '../helpers/service.js';
import { onlyJson, runFerry } from '../helpers/cli.js';
import { mirror, mirrorJobKey } from '../../jobs/mirror.js';
import { check } from '../../jobs/check.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';

const DOCS = 250;
const CAP = 7;

let service: Service;
beforeAll(async () => {
  service = await startService({ maxPageSize: CAP });
});
afterAll(() => service.close());

async function tree(failing = 0): Promise<{ dir: string; src: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-capped-'));
  const src = join(dir, 'src');
  const files: Record<string, string> = {};
  for (let i = 0; i < DOCS; i++) files[i < failing ? `f${i}__fail_badFile__.txt` : `f${i}.txt`] = `document ${i}`;
  await writeTree(src, files);
  return { dir, src };
}

describe(`a service capping pages at ${CAP}`, () => {
  it('caps silently: a page of 100 asked for answers 7 items and the true totalCount', async () => {
    const client = service.client();
    const page = await client.projects.list({}, { pageSize: 100 }).page(1);
    const all = await client.projects.list({}, { pageSize: 100 });
    let n = 0;
    for await (const _ of all) n++;
    expect(page.items.length).toBeLessThanOrEqual(CAP);
    expect(n).toBe(page.totalCount);
  });

  it(`mirror settles ${DOCS} in-flight uploads after a crash from every page: none sent again`, async () => {
    const { dir, src } = await tree();
    const client = service.client();
    const project = (await client.projects.create({ name: 'capped-settle', description: 'settling' })).objectIdentifier;
    const state = join(dir, 'state.sqlite');
    let store = new SqliteCheckpointStore(state);
    const first = await mirror({ source: src, project }, { client, store });
    expect(first.counts.uploaded).toBe(DOCS);
    store.close();

    // As if the process had died after every request went out and before any answer was recorded.
    const db = new Database(state);
    db.prepare("UPDATE items SET state = 'in-flight', remote_id = NULL").run();
    db.close();

    store = new SqliteCheckpointStore(state);
    expect(store.inFlight(mirrorJobKey(service.emulator.baseUrl, { source: src, project }))).toHaveLength(DOCS);
    const rerun = await mirror({ source: src, project }, { client, store });
    store.close();
    expect(rerun.counts).toMatchObject({ reconciled: DOCS, uploaded: 0, failed: 0 });
    expect(await remoteFiles(client, project)).toHaveLength(DOCS);
  });

  it('the report lists every failed file and ferry api --paginate reads every document', async () => {
    const failing = 30;
    const { dir, src } = await tree(failing);
    const client = service.client();
    const project = (await client.projects.create({ name: 'capped-report', description: 'report' })).objectIdentifier;
    const playbook = (await client.playbooks.create({ name: 'capped', isPrivate: false, organizationWide: true })).objectIdentifier;
    const state = join(dir, 'state.sqlite');
    const up = await runFerry(['upload', src, '--project', project, '--playbook', playbook, '--state', state, '--json'], service.env());
    expect(up.code, up.stderr).toBe(1);
    const batch = (onlyJson(up) as { batches: { uploadIdentifier: string }[] }).batches[0]!.uploadIdentifier;

    const report = await runFerry(['report', '--playbook', playbook, '--upload', batch, '--format', 'json', '--state', state], service.env());
    expect(report.code, report.stderr).toBe(0);
    const parsed = JSON.parse(report.stdout) as { failedFiles: { localPath: string }[]; totals?: unknown };
    expect(parsed.failedFiles).toHaveLength(failing);
    expect(new Set(parsed.failedFiles.map((f) => f.localPath)).size).toBe(failing);

    const api = await runFerry(['api', 'GET', `/projects/${project}/documents`, '-F', 'flattenList=true', '--paginate'], service.env());
    expect(api.code, api.stderr).toBe(0);
    const docs = JSON.parse(api.stdout) as { name: string }[];
    expect(docs).toHaveLength(DOCS);
    expect(new Set(docs.map((d) => d.name)).size).toBe(DOCS);
  });

  describe('a run says the cap once, and a recorded pageSize stops it asking for more', () => {
    let src: string;
    let dir: string;
    let project: string;
    beforeAll(async () => {
      ({ dir, src } = await tree());
      const client = service.client();
      project = (await client.projects.create({ name: 'capped-warn', description: 'warnings' })).objectIdentifier;
      const store = new SqliteCheckpointStore(join(dir, 'seed.sqlite'));
      expect((await mirror({ source: src, project }, { client, store })).counts.uploaded).toBe(DOCS);
      store.close();
    });
    // A fresh store: the run reads the project's documents whole, in pages.
    const cold = async (pageSize?: number) => {
      const client = service.client(pageSize === undefined ? {} : { pageSize });
      const store = new SqliteCheckpointStore(join(dir, `cold-${pageSize ?? 'none'}.sqlite`));
      try {
        return await mirror({ source: src, project }, { client, store });
      } finally {
        store.close();
      }
    };
    const serviceSaid = (s: { problems: { key: string; reason: string }[] }) => s.problems.filter((p) => p.key === '(service)').map((p) => p.reason);

    it('nothing recorded: one warning naming the page given and asked for, nothing sent again', async () => {
      const run = await cold();
      expect(run.status).toBe('succeeded');
      expect(run.counts).toMatchObject({ discovered: DOCS, uploaded: 0, failed: 0 });
      const said = serviceSaid(run);
      expect(said).toHaveLength(1);
      expect(said[0]).toMatch(new RegExp(`the service at \\S+ caps its pages: it gave ${CAP} items where a page of \\d+ was asked .*Every item was still read.*ferry doctor --probe --write-profile records the cap`));
    });

    it('ferry check says it too, and finds the project matching', async () => {
      const report = await check({ source: src, project }, service.client());
      expect(report.differenceCount).toBe(0);
      expect(report.matching).toBe(DOCS);
      expect(report.problems).toEqual([{ key: '(service)', reason: expect.stringMatching(/^warning: the service at \S+ caps its pages: it gave 7 items where a page of \d+ was asked/) }]);
      const recorded = await check({ source: src, project }, service.client({ pageSize: CAP }));
      expect(recorded.problems).toEqual([]);
    });

    it(`pageSize ${CAP} recorded: no page is asked larger, nothing is said`, async () => {
      const run = await cold(CAP);
      expect(run.counts).toMatchObject({ discovered: DOCS, uploaded: 0, failed: 0 });
      expect(serviceSaid(run)).toEqual([]);
    });

    it('a larger pageSize recorded than the service now gives: the run says the service changed', async () => {
      const run = await cold(CAP + 3);
      expect(run.counts).toMatchObject({ discovered: DOCS, uploaded: 0, failed: 0 });
      const said = serviceSaid(run);
      expect(said).toHaveLength(1);
      expect(said[0]).toMatch(new RegExp(`lower than the profile records \\(pageSize ${CAP + 3}\\): it gave ${CAP} items where a page of ${CAP + 3} was asked.*Measure it again`));
    });
  });
});
