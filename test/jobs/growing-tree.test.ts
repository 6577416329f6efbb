// A tree that grows while it is walked: files written into every folder as the first upload
// leaves. Whether the walk meets a new file depends on whether it had read that folder yet;
// either way each file is accounted for once in the run that meets it, sent once, and the next
// run sends exactly the ones the first did not meet.
import { describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { Agent } from 'undici';
import { mirror } from '../../jobs/mirror.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';
import { remoteFiles, useService, writeTree } from '../helpers/service.js';

const service = useService();

describe('a tree that grows while it is walked', () => {
  it('each file is sent once, in the run that first meets it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-growing-'));
    const src = join(dir, 'src');
    const folders = Array.from({ length: 10 }, (_, i) => `folder-${i}`);
    await writeTree(src, Object.fromEntries(folders.flatMap((f) => Array.from({ length: 6 }, (_, j) => [`${f}/old-${j}.txt`, `${f} ${j}`]))));
    const added: string[] = [];
    // As the first upload leaves, two files appear in every folder (the walk is under way).
    const dispatcher = new Agent().compose((dispatch) => (options, handler) => {
      if (added.length === 0 && options.method === 'POST' && /\/documents$/.test(String(options.path).split('?')[0]!)) {
        for (const f of folders) {
          for (const name of ['new-a.txt', 'new-b.txt']) {
            writeFileSync(join(src, f, name), `${f} ${name}`);
            added.push(`${f}/${name}`);
          }
        }
      }
      return dispatch(options, handler);
    });
    const client = service().client({ dispatcher });
    const project = (await client.projects.create({ name: `growing ${dir}`, description: 'test' })).objectIdentifier;
    const store = new SqliteCheckpointStore(join(dir, 'state.sqlite'));

    const first = await mirror({ source: src, project }, { client, store });
    expect(added).toHaveLength(20);
    expect(first.counts.failed).toBe(0);
    // What the first run met, it sent: 60 old files and however many new ones its walk reached.
    expect(first.counts.uploaded).toBe(first.counts.discovered);
    expect(first.counts.discovered).toBeGreaterThanOrEqual(60);
    expect(first.counts.discovered).toBeLessThanOrEqual(80);

    const second = await mirror({ source: src, project }, { client, store });
    expect(second.counts).toMatchObject({ discovered: 80, uploaded: 80 - first.counts.discovered, failed: 0 });
    store.close();
    const paths = (await remoteFiles(client, project)).map((d) => d.path);
    expect(paths).toHaveLength(80);
    expect(new Set(paths).size).toBe(80);
  });
});
