// A zip of 150,000 entries (past the fixed limit there once was) is planned whole, and one past
// --max-entries is refused before anything is read or written. Nothing here reaches what the strict
// emulator answers differently (no folder is made, no content served): run once (vitest.config.ts).
import { describe, expect, it } from 'vitest';
import { createWriteStream } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { once } from 'node:events';
import archiver from 'archiver';
import { mirror, planMirror } from '../../jobs/mirror.js';
import { RejectedArchive } from '../../src/backends/archive-guards.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';
import { remoteFiles, useService } from '../helpers/service.js';

const service = useService();

async function zipOf(path: string, entries: number): Promise<void> {
  const archive = archiver('zip', { store: true });
  const out = createWriteStream(path);
  archive.pipe(out);
  for (let i = 0; i < entries; i++) archive.append(`${i}`, { name: `d${Math.floor(i / 1000)}/e${i}.txt` });
  await archive.finalize();
  await once(out, 'close');
}

describe('a zip of many entries', () => {
  it('of 150,000 entries is planned whole; past --max-entries one is refused before anything is read', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-shape-zip-'));
    const client = service().client();
    const project = (await client.projects.create({ name: `shape zip ${dir}`, description: 'test' })).objectIdentifier;
    const store = new SqliteCheckpointStore(join(dir, 'state.sqlite'));
    await zipOf(join(dir, 'big-export.zip'), 150_000);
    const plan = await planMirror({ source: join(dir, 'big-export.zip'), project }, { client, store });
    expect(plan).toMatchObject({ new: 150_000, changed: 0, unchanged: 0, problemCount: 0 });
    await zipOf(join(dir, 'past-limit.zip'), 1_001);
    const refused = await mirror({ source: join(dir, 'past-limit.zip'), project, maxEntries: 1_000 }, { client, store }).catch((err: unknown) => err);
    store.close();
    expect(refused).toBeInstanceOf(RejectedArchive);
    expect((refused as Error).message).toMatch(/holds 1001 entries, more than the limit of 1000 \(--max-entries raises it\)/);
    expect(await remoteFiles(client, project)).toEqual([]);
  });
});
