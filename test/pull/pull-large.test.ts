// Large files pulled from a stream (src/backends/local/block-write.ts, writeFlowing): each chunk
// written at once as it flows, in pieces of 64 KiB. Sizes on each side of a piece, of 1 MiB and of
// several MiB plus a remainder come back byte for byte.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { mirroredProject, startService, type Service } from '../helpers/service.js';
import { pull } from '../../jobs/pull.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';

let service: Service;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.close());

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('a pull of large files', () => {
  it('writes each byte once, in order, whatever the file\'s size against the block', async () => {
    const MiB = 1024 * 1024;
    const files: Record<string, Buffer> = {
      'just-over-small.bin': randomBytes(64 * 1024 + 1),
      'one-block.bin': randomBytes(MiB),
      'block-and-one.bin': randomBytes(MiB + 1),
      'several.bin': randomBytes(5 * MiB + 12_345),
    };
    const dir = await mkdtemp(join(tmpdir(), 'ferry-pull-large-'));
    const client = service.client();
    const project = await mirroredProject(client, join(dir, 'src'), files, 'large files pulled');
    const store = new SqliteCheckpointStore(join(dir, 'pull.sqlite'));
    try {
      const out = join(dir, 'out');
      const summary = await pull({ project, dir: out }, { client, store });
      expect(summary.counts).toMatchObject({ uploaded: 4, failed: 0 });
      for (const [name, content] of Object.entries(files)) expect(sha(await readFile(join(out, name))), name).toBe(sha(content));
      // Nothing but the files: no temporary name left behind.
      expect((await readdir(out)).filter((n) => !n.startsWith('.ferry')).sort()).toEqual(Object.keys(files).sort());
    } finally {
      store.close();
    }
  });
});
