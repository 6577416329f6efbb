// A migration checks what it sends against the sha256 the source document carries (issue 76): the
// source region serves its content with a byte flipped (the emulator's `corrupt` fault). Where
// the service reads form fields after the file (`formOrder: any`), the upload is stopped before
// it completes and nothing lands; where it reads them first, the document is named. Either way
// the item fails by name with both hashes (exit 1), and at half the bodies corrupted, reruns end
// with every document right, each carrying the sha256 of its bytes. `ferry migrate` runs as its
// own process between two emulator processes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FerryClient } from '../../src/api/index.js';
import { mirror } from '../../jobs/mirror.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';
import { readIdentity } from '../../src/backends/project/identity.js';
import { onlyJson, runFerry } from '../helpers/cli.js';
import { startRegion, writeProfiles, type Region } from '../helpers/regions.js';
import { remoteFiles, writeTree } from '../helpers/service.js';
import { useTempDirs } from '../helpers/temp.js';
import { collect } from '../helpers/test-server.js';

const tempDir = useTempDirs();
let uk: Region;
let us: Region;
let dir: string;
let env: Record<string, string>;
let src: FerryClient;
let dst: FerryClient;

/** Held in memory by a spool, and (big.txt, over 1 MiB) in a scratch file. */
const FILES: Record<string, string> = { 'a.txt': 'alpha '.repeat(50), 'sub/b.txt': 'bravo '.repeat(3000), 'sub/deep/c.txt': 'charlie', 'big.txt': 'delta '.repeat(400_000) };
const sha = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');

beforeAll(async () => {
  [uk, us] = await Promise.all([startRegion(), startRegion()]);
  dir = await tempDir('ferry-migrate-verify-');
  // The same target twice: as a service that reads form fields first (the default), and after the file.
  env = await writeProfiles(join(dir, 'config.yaml'), { uk: { region: uk, tenant: 0 }, us: { region: us, tenant: 1 }, 'us-after': { region: us, tenant: 1 } });
  await appendFile(join(dir, 'config.yaml'), '    formOrder: any\n');
  src = uk.client(0);
  dst = us.client(1);
});
afterAll(async () => {
  await Promise.all([uk?.stop(), us?.stop()]);
});

/** The source region's faults, through its control API. */
async function sourceFaults(spec: string): Promise<void> {
  const token = (uk as unknown as { adminToken: string }).adminToken;
  const res = await fetch(`${uk.baseUrl}/_emulator/faults`, { method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ spec }) });
  expect(res.status).toBe(200);
}

async function sourceProject(name: string): Promise<string> {
  const project = await src.projects.create({ name, description: 'to be migrated' });
  const root = join(dir, 'trees', name);
  await writeTree(root, FILES);
  const store = new SqliteCheckpointStore(join(dir, `${name}.sqlite`));
  expect((await mirror({ source: root, project: project.objectIdentifier }, { client: src, store })).counts.uploaded).toBe(4);
  store.close();
  return project.objectIdentifier;
}

/** The target project made for `name`, and its documents' contents and ferry.sha256, newest at each path. */
async function onTarget(name: string): Promise<Record<string, { content: string; sha256: string | undefined; versions: number }>> {
  const project = (await dst.projects.list().all()).find((p) => p.name === name);
  if (!project) return {};
  const out: Record<string, { content: string; sha256: string | undefined; versions: number; added: number }> = {};
  for (const d of await remoteFiles(dst, project.objectIdentifier)) {
    const added = Date.parse(d.dateAdded!);
    const had = out[d.path!];
    if (had && had.added > added) {
      had.versions++;
      continue;
    }
    const content = Buffer.concat(await collect((await dst.documents.download(d)).body as AsyncIterable<Buffer>)).toString();
    out[d.path!] = { content, sha256: readIdentity(d.metadata)?.sha256, versions: (had?.versions ?? 0) + 1, added };
  }
  return Object.fromEntries(Object.entries(out).map(([k, { content, sha256, versions }]) => [k, { content, sha256, versions }]));
}

const migrate = (project: string, state: string, formOrder: 'any' | 'fields-first') =>
  runFerry(['migrate', '--from', 'uk', '--to', formOrder === 'any' ? 'us-after' : 'us', '--projects', project, '--state', join(dir, state), '--json'], env);

describe('a migration checks the bytes it sends against the source document\'s sha256', () => {
  for (const formOrder of ['any', 'fields-first'] as const) {
    it(`without faults (${formOrder}): every migrated document carries the sha256 of its bytes, one the source named none for too; the summary counts them`, async () => {
      const name = `verify clean ${formOrder}`;
      const project = await sourceProject(name);
      // A document another tool uploaded: no ferry.sha256 to check it against.
      await src.documents.upload(project, { stream: Readable.from([Buffer.from('from elsewhere')]), size: 14, filename: 'foreign.txt' }, { documentUploadIdentifier: randomUUID() });
      const r = onlyJson(await migrate(project, `clean-${formOrder}.sqlite`, formOrder));
      expect(r).toMatchObject({ status: 'succeeded', exitCode: 0, contentCheck: { verified: 4, unverifiable: 1, unverifiableKeys: ['foreign.txt'] } });
      const target = await onTarget(name);
      expect(Object.keys(target).sort()).toEqual(['/a.txt', '/big.txt', '/foreign.txt', '/sub/b.txt', '/sub/deep/c.txt']);
      for (const [path, doc] of Object.entries(target)) {
        expect(doc.content).toBe(path === '/foreign.txt' ? 'from elsewhere' : FILES[path.slice(1)]);
        expect(doc.sha256, path).toBe(sha(doc.content));
      }
    });
  }

  it('where the service reads fields after the file: a corrupted body never completes its upload; exit 1, each item named with both hashes', async () => {
    const project = await sourceProject('verify before end');
    await sourceFaults('corrupt=1');
    try {
      const result = await migrate(project, 'before.sqlite', 'any');
      const r = onlyJson(result);
      expect(r, result.stderr).toMatchObject({ status: 'failed', exitCode: 1, counts: { failed: 4 } });
      const errors = r.errors as { key: string; error: string }[];
      expect(errors).toHaveLength(4);
      for (const e of errors) expect(e.error).toMatch(/did not match its sha256 2 times \(the source says [0-9a-f]{64}; received [0-9a-f]{64}, then [0-9a-f]{64}\): nothing was written under its name/);
      // Nothing landed on the target.
      const target = await onTarget('verify before end');
      expect(target).toEqual({});
    } finally {
      await sourceFaults('');
    }
  });

  it('where the service reads fields first: the content is held and checked before it is sent; exit 1, nothing lands', async () => {
    const project = await sourceProject('verify spooled');
    await sourceFaults('corrupt=1');
    try {
      const r = onlyJson(await migrate(project, 'spooled.sqlite', 'fields-first'));
      expect(r).toMatchObject({ status: 'failed', exitCode: 1, counts: { failed: 4 } });
      for (const e of r.errors as { key: string; error: string }[]) expect(e.error).toMatch(/did not match its sha256 2 times .*: nothing was written under its name/);
      expect(await onTarget('verify spooled')).toEqual({});
    } finally {
      await sourceFaults('');
    }
  });

  for (const formOrder of ['any', 'fields-first'] as const) {
    it(`at half the bodies corrupted (${formOrder}): reruns end with every document right`, async () => {
      const name = `verify half ${formOrder}`;
      const project = await sourceProject(name);
      await sourceFaults('corrupt=0.5,seed=3');
      try {
        let last: Record<string, unknown> = {};
        for (let run = 0; run < 8 && last.exitCode !== 0; run++) last = onlyJson(await migrate(project, `half-${formOrder}.sqlite`, formOrder));
        expect(last).toMatchObject({ status: 'succeeded', exitCode: 0 });
      } finally {
        await sourceFaults('');
      }
      const target = await onTarget(name);
      expect(Object.keys(target).sort()).toEqual(['/a.txt', '/big.txt', '/sub/b.txt', '/sub/deep/c.txt']);
      for (const [path, doc] of Object.entries(target)) {
        expect(doc.content, path).toBe(FILES[path.slice(1)]);
        expect(doc.sha256, path).toBe(sha(doc.content));
      }
    });
  }
});
