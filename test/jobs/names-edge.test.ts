// Names that once broke the walk: a lone byte-order mark beside a control character (the folder is
// re-read as bytes, and a stripped BOM made an empty name: an endless walk), U+2028 and U+2029.
// Every file ends uploaded or failed with its reason, and the walk ends.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { remoteFiles, startService, type Service } from '../helpers/service.js';
import { mirror } from '../../jobs/mirror.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';
import { visible } from '../../src/sources/names.js';

let service: Service;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.close());

describe('names at the edge of the walk', () => {
  it('a lone BOM, a BOM-prefixed name, U+2028, U+2029 and a control character in one folder: each once, the walk ends', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-names-edge-'));
    const src = join(dir, 'src');
    await mkdir(join(src, 'sub'), { recursive: true });
    const names = ['\ufeff', '\ufeffbom.txt', 'line\u2028sep.txt', 'para\u2029sep.txt', 'plain.txt'];
    for (const n of names) {
      await writeFile(join(src, n), `content of ${n}`);
      await writeFile(join(src, 'sub', n), `sub content of ${n}`);
    }
    await writeFile(join(src, '\x01'), 'control');
    await mkdir(join(src, 'folder\u2028x', 'deeper'), { recursive: true });
    await writeFile(join(src, 'folder\u2028x', 'deeper', 'in.txt'), 'inside a folder with a separator');
    const client = service.client();
    const project = (await client.projects.create({ name: 'edge names', description: 'x' })).objectIdentifier;
    const store = new SqliteCheckpointStore(join(dir, 'state.sqlite'));
    try {
      const summary = await mirror({ source: src, project, progress: false }, { client, store });
      // The control character is refused by ferry; a name that is only a byte-order mark reaches the
      // emulator, whose form parser (busboy) drops a leading BOM and then refuses the empty name:
      // a failed item with the service's reason, never renamed, never dropped (issue 19 carries it).
      expect(summary.counts).toMatchObject({ discovered: 12, uploaded: 9, failed: 3, skipped: 0 });
      expect(summary.errors.map((e) => e.key).sort()).toEqual([String.raw`\x01`, '\ufeff', 'sub/\ufeff'].sort());
      expect(summary.errors.find((e) => e.key === '\ufeff')?.error).toMatch(/answered 400/);
      const again = await mirror({ source: src, project, progress: false }, { client, store });
      expect(again.counts).toMatchObject({ discovered: 12, uploaded: 0, failed: 3 });
    } finally {
      store.close();
    }
    const remote = (await remoteFiles(client, project)).map((d) => d.path ?? '').sort();
    const carried = names.filter((n) => n !== '\ufeff');
    expect(remote).toEqual([...carried.map((n) => `/${n}`), ...carried.map((n) => `/sub/${n}`), '/folder\u2028x/deeper/in.txt'].sort());
  });

  it('shows separators and a byte-order mark escaped', () => {
    expect(visible('a\u2028b\u2029c\ufeffd')).toBe('a\\u2028b\\u2029c\\ufeffd');
  });
});
