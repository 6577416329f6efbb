// A large download that stopped keeps its bytes, and the next attempt continues from them only when
// the source sends exactly the rest of the same content (src/backends/partials.ts): a local
// folder destination in a real temp folder, with a real store, and sources that send what each
// case needs (the rest, the whole instead, another version, another document, too many bytes).
import { afterEach, describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, readdir, stat, utimes, writeFile } from 'node:fs/promises';
import { useTempDirs } from '../helpers/temp.js';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { LocalFolderDestination } from '../../src/backends/local/destination.js';
import { RESUMABLE_KEPT_MS, RESUMABLE_MIN, removePartials, resumableName } from '../../src/backends/partials.js';
import { SqliteCheckpointStore } from '../../src/store/index.js';
import type { FileEntry, PartialContent } from '../../src/sync/types.js';

const MiB = 1024 * 1024;
const JOB = 'pull job key';
const tempDir = useTempDirs();
const stores: SqliteCheckpointStore[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function destination(): Promise<{ root: string; dest: LocalFolderDestination }> {
  const base = await tempDir('ferry-resume-');
  const root = join(base, 'out');
  await mkdir(root);
  const store = new SqliteCheckpointStore(join(base, 'state.sqlite'));
  stores.push(store);
  const dest = new LocalFolderDestination({ root, store, jobKey: JOB });
  await dest.prepare();
  return { root, dest };
}

/** Content sent in 256 KiB chunks, failing after `failAfter` bytes when given. */
function body(content: Buffer, failAfter?: number): Readable {
  return Readable.from(
    (function* () {
      for (let at = 0; at < content.length; at += 256 * 1024) {
        if (failAfter !== undefined && at >= failAfter) throw Object.assign(new Error('the connection dropped'), { code: 'ECONNRESET' });
        yield content.subarray(at, Math.min(at + 256 * 1024, content.length));
      }
    })(),
  );
}

interface Sent {
  /** The offsets asked for, in order. */
  asked: number[];
}

/** An entry of `content` whose source answers a request from `offset` with `answer(offset)`. */
function entry(key: string, content: Buffer, marker: string, answer: (offset: number) => PartialContent, sent: Sent = { asked: [] }): FileEntry {
  return {
    kind: 'file',
    key,
    size: content.length,
    mtimeMs: Date.parse('2026-01-02T03:04:05Z'),
    marker,
    open: () => body(content),
    openFrom: async (offset) => {
      sent.asked.push(offset);
      return answer(offset);
    },
  };
}

/** A source that honours ranges, with the content's version `version`. */
const ranged = (content: Buffer, version: string, failAfter?: number) => (offset: number): PartialContent => ({ body: body(content.subarray(offset), failAfter === undefined ? undefined : failAfter - offset), from: offset, version });

async function write(dest: LocalFolderDestination, e: FileEntry): Promise<void> {
  await dest.write(e, await dest.place(e));
}

/** The temporary files left in `dir`. */
async function partials(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((n) => n.endsWith('.partial'));
}

describe('a large download that stopped', () => {
  const content = randomBytes(RESUMABLE_MIN + 3 * MiB + 12_345);

  it('keeps its bytes, and the next attempt asks for the rest only and writes the file whole', async () => {
    const { root, dest } = await destination();
    const sent: Sent = { asked: [] };
    await expect(write(dest, entry('big.bin', content, 'doc-1', ranged(content, '"v1"', 9 * MiB), sent))).rejects.toThrow(/dropped/);
    const [kept] = await partials(root);
    expect(kept).toBe(resumableName(JOB, { key: 'big.bin', marker: 'doc-1', size: content.length }, '"v1"'));
    const keptBytes = (await stat(join(root, kept!))).size;
    // Whole blocks of what came: more than half of it, none of what never did.
    expect(keptBytes).toBeGreaterThanOrEqual(8 * MiB);
    expect(keptBytes).toBeLessThanOrEqual(9 * MiB);
    expect((await readFile(join(root, kept!))).equals(content.subarray(0, keptBytes))).toBe(true);

    await write(dest, entry('big.bin', content, 'doc-1', ranged(content, '"v1"'), sent));
    expect(sent.asked).toEqual([0, keptBytes]);
    expect(sha(await readFile(join(root, 'big.bin')))).toBe(sha(content));
    expect(await partials(root)).toEqual([]);
  });

  it('starts over when the source sends the whole content instead of the rest, appending nothing twice', async () => {
    const { root, dest } = await destination();
    await expect(write(dest, entry('big.bin', content, 'doc-1', ranged(content, '"v1"', 5 * MiB)))).rejects.toThrow(/dropped/);
    expect(await partials(root)).toHaveLength(1);
    const sent: Sent = { asked: [] };
    // A service that ignores Range: the whole body, from byte 0.
    await write(dest, entry('big.bin', content, 'doc-1', () => ({ body: body(content), from: 0, version: '"v1"' }), sent));
    expect(sent.asked).toHaveLength(1);
    expect(sent.asked[0]).toBeGreaterThan(0);
    expect((await stat(join(root, 'big.bin'))).size).toBe(content.length);
    expect(sha(await readFile(join(root, 'big.bin')))).toBe(sha(content));
    expect(await partials(root)).toEqual([]);
  });

  it('never stitches the rest of another version onto the kept bytes: asked again from 0', async () => {
    const { root, dest } = await destination();
    await expect(write(dest, entry('big.bin', content, 'doc-1', ranged(content, '"v1"', 5 * MiB)))).rejects.toThrow(/dropped/);
    const changed = randomBytes(content.length);
    const sent: Sent = { asked: [] };
    const warned: string[] = [];
    const logged = new LocalFolderDestination({ root, store: stores[0]!, jobKey: JOB, logger: { warn: (_o: unknown, m?: string) => void warned.push(String(m)) } as never });
    await logged.prepare();
    // The same document, the rest of other content (another ETag): refused, then the whole.
    await write(logged, entry('big.bin', changed, 'doc-1', ranged(changed, '"v2"'), sent));
    expect(sent.asked[0]).toBeGreaterThan(0);
    expect(sent.asked[1]).toBe(0);
    expect(warned.join('\n')).toMatch(/another ETag/);
    expect(sha(await readFile(join(root, 'big.bin')))).toBe(sha(changed));
    expect(await partials(root)).toEqual([]);
  });

  it('drops the bytes kept of an older document at the same path, and fetches the new one whole', async () => {
    const { root, dest } = await destination();
    await expect(write(dest, entry('big.bin', content, 'doc-1', ranged(content, '"v1"', 5 * MiB)))).rejects.toThrow(/dropped/);
    const newer = randomBytes(content.length);
    const sent: Sent = { asked: [] };
    await write(dest, entry('big.bin', newer, 'doc-2', ranged(newer, '"v9"'), sent));
    expect(sent.asked).toEqual([0]);
    expect(sha(await readFile(join(root, 'big.bin')))).toBe(sha(newer));
    expect(await partials(root)).toEqual([]);
  });

  it('keeps nothing of a content longer than its source said', async () => {
    const { root, dest } = await destination();
    const longer = Buffer.concat([content, Buffer.from('more')]);
    await expect(write(dest, entry('big.bin', content, 'doc-1', () => ({ body: body(longer), from: 0 })))).rejects.toThrow(/not the \d+ its source said/);
    expect(await readdir(root)).not.toContain('big.bin');
    expect(await partials(root)).toEqual([]);
  });
});

describe('leftovers of a folder made ready', () => {
  it('removes the files fetched whole and resumable ones unclaimed for a week; keeps younger ones and other jobs\'', async () => {
    const dir = await tempDir('ferry-leftovers-');
    const young = resumableName(JOB, { key: 'a.bin', marker: 'd', size: 1 }, '');
    const old = resumableName(JOB, { key: 'b.bin', marker: 'd', size: 1 }, '');
    const others = resumableName('another job', { key: 'c.bin', marker: 'd', size: 1 }, '');
    const lookalike = '.ferry-00000000-00000000-00000000-00000000.partial';
    for (const n of [young, old, others, lookalike]) await writeFile(join(dir, n), 'bytes');
    const now = Date.now();
    const past = new Date(now - RESUMABLE_KEPT_MS - 60_000);
    await utimes(join(dir, old), past, past);
    await removePartials(dir, JOB, now);
    expect((await readdir(dir)).sort()).toEqual([young, others, lookalike].sort());
  });
});
