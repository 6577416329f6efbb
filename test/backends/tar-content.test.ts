// The content of a compressed tar's entries, asked for out of order and more than once: each
// served exact; small entries a cursor walked past served from what it kept, a big one asked
// again after it was passed read from the start again (counted). And the tar source over it.
import { describe, expect, it } from 'vitest';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { once } from 'node:events';
import { createHash, randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import tar from 'tar-stream';
import { openContent } from '../../src/backends/tar/content.js';
import { sha256Of } from '../../src/sync/checksum.js';
import { openSource } from '../../src/backends/index.js';

async function tarOf(entries: { name: string; data: Buffer }[]): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  pack.on('data', (c: Buffer) => chunks.push(c));
  const ended = once(pack, 'end');
  for (const e of entries) pack.entry({ name: e.name, size: e.data.length }, e.data);
  pack.finalize();
  await ended;
  return Buffer.concat(chunks);
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('a compressed tar read in any order', () => {
  it('serves every entry exact, late small ones from what was kept, a big one passed by read from the start again', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-tar-content-'));
    const entries = Array.from({ length: 40 }, (_, i) => ({ name: `f${i}`, data: randomBytes(i === 5 ? 6 * 1024 * 1024 : 1000 + i) }));
    const file = join(dir, 'a.tar.gz');
    await writeFile(file, gzipSync(await tarOf(entries)));
    const content = openContent(file, true);
    try {
      // Asked 10, then 3 (passed by, small: kept), then 5 (passed by, 6 MiB: not kept), then 39 and 10 again.
      const order = [10, 3, 5, 39, 10, 0];
      for (const i of order) {
        const e = entries[i] as { data: Buffer };
        expect(await sha256Of(content.open(i, 0, e.data.length)), `entry ${i}`).toBe(sha(e.data));
      }
      // 0 and 3 came from the kept entries, 10 the second time too; 5 needed a second cursor.
      expect(content.rereads).toBe(1);
      // Several at once, in reverse: each exact.
      const all = await Promise.all([...entries.keys()].reverse().map(async (i) => [i, await sha256Of(content.open(i, 0, (entries[i] as { data: Buffer }).data.length))] as const));
      for (const [i, digest] of all) expect(digest, `entry ${i}`).toBe(sha((entries[i] as { data: Buffer }).data));
    } finally {
      content.close();
    }
  });

  it('a reader that stops early does not stall the entries after it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-tar-early-'));
    const entries = [{ name: 'big', data: randomBytes(3 * 1024 * 1024) }, { name: 'after', data: randomBytes(2000) }];
    const file = join(dir, 'b.tar.gz');
    await writeFile(file, gzipSync(await tarOf(entries)));
    const content = openContent(file, true);
    try {
      const big = content.open(0, 0, entries[0]!.data.length);
      const after = content.open(1, 0, entries[1]!.data.length);
      await once(big, 'readable');
      big.destroy(); // an upload that failed half way
      expect(await sha256Of(after)).toBe(sha(entries[1]!.data));
    } finally {
      content.close();
    }
  });

  it('a reader that lets go of an entry another cursor was handed does not hold that cursor: a retry of the entry is still served', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-tar-handed-'));
    const entries = Array.from({ length: 6 }, (_, i) => ({ name: `e${i}`, data: randomBytes(i === 3 ? 5 * 1024 * 1024 : 500) }));
    const file = join(dir, 'c.tar.gz');
    await writeFile(file, gzipSync(await tarOf(entries)));
    const content = openContent(file, true);
    const size = entries[3]!.data.length;
    try {
      // Two reads of entry 3 at once (an upload and its retry): the first is served, the second handed on.
      const first = content.open(3, 0, size);
      const second = content.open(3, 0, size);
      expect(await sha256Of(first)).toBe(sha(entries[3]!.data));
      second.destroy(); // its attempt ended (an answer of 429): the stream is let go
      // A third read, as the next retry: served, not left waiting behind the one let go.
      expect(await sha256Of(content.open(3, 0, size))).toBe(sha(entries[3]!.data));
      expect(await sha256Of(content.open(5, 0, 500))).toBe(sha(entries[5]!.data));
    } finally {
      content.close();
    }
  });

  it('the tar source gives each file its sha256 from the one read, and the plain tar its bytes in place', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-tar-source-'));
    const entries = [{ name: 'a/one.txt', data: Buffer.from('one') }, { name: 'a/two.txt', data: randomBytes(70_000) }];
    for (const [name, bytes] of [['plain.tar', await tarOf(entries)], ['gz.tar.gz', gzipSync(await tarOf(entries))]] as const) {
      await writeFile(join(dir, name), bytes);
      const source = await openSource(join(dir, name));
      try {
        const files = [];
        for await (const e of source.entries()) if (e.kind === 'file') files.push(e);
        expect(files.map((f) => f.key)).toEqual(['a/one.txt', 'a/two.txt']);
        for (const [i, f] of files.entries()) {
          expect(f.sha256, name).toBe(sha(entries[i]!.data));
          expect(await sha256Of(f.open()), name).toBe(sha(entries[i]!.data));
        }
      } finally {
        await source.close();
      }
    }
  });
});
