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
import { visible } from '../../src/text.js';

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
      const summary = await mirror({ source: src, project }, { client, store });
      // The control character is refused by ferry (a failed item with the reason, its key the name
      // itself, escaped where it is shown); a name that is only a byte-order mark is carried.
      expect(summary.counts).toMatchObject({ discovered: 12, uploaded: 11, failed: 1, skipped: 0 });
      expect(summary.errors.map((e) => e.key)).toEqual(['\x01']);
      expect(summary.errors[0]?.error).toMatch(/control characters/);
      const again = await mirror({ source: src, project }, { client, store });
      expect(again.counts).toMatchObject({ discovered: 12, uploaded: 0, failed: 1 });
    } finally {
      store.close();
    }
    const remote = (await remoteFiles(client, project)).map((d) => d.path ?? '').sort();
    const carried = names;
    expect(remote).toEqual([...carried.map((n) => `/${n}`), ...carried.map((n) => `/sub/${n}`), '/folder\u2028x/deeper/in.txt'].sort());
  });

  it('shows separators and a byte-order mark escaped', () => {
    expect(visible('a\u2028b\u2029c\ufeffd')).toBe('a\\u2028b\\u2029c\\ufeffd');
    // A literal backslash-n and a newline never look alike; a byte that was not UTF-8 shows as \xNN.
    expect(visible(String.raw`a\nb`)).toBe(String.raw`a\\nb`);
    expect(visible('a\nb')).toBe(String.raw`a\nb`);
    expect(visible('caf\udce9')).toBe(String.raw`caf\xe9`);
  });
});
