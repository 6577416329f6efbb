// The content of a tar's entries, asked for by a run in any order and any number of times.
//  - A plain tar is read where each entry's bytes lie (the offset tar-stream reports): every
//    entry at once, retries free, as a zip's.
//  - A gzip stream cannot be entered in the middle, so a compressed tar is read again from its
//    start by a cursor that walks forward serving the entries asked for, in the order of the
//    archive. A run asks for them nearly in that order (the engine hands out its writes so), but
//    not exactly: the small entries a cursor walks past are kept for a while (CACHE_BYTES in all),
//    so that one asked a moment late is still served; one asked for after that (a retry of a big
//    file, say) starts another cursor from the start of the archive: counted as a re-read.
import { createReadStream } from 'node:fs';
import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import tar from 'tar-stream';
import { drain, type TarEntry } from './header.js';

export interface TarContent {
  /** The bytes of entry `index` (its data at `at` in the uncompressed archive, `size` long). */
  open(index: number, at: number, size: number): Readable;
  /** Reads from the start of the archive beyond the first (compressed archives only). */
  readonly rereads: number;
  close(): void;
}

export function openContent(path: string, gzip: boolean): TarContent {
  if (!gzip) {
    return {
      open: (_index, at, size) => (size === 0 ? Readable.from([]) : createReadStream(path, { start: at, end: at + size - 1 })),
      rereads: 0,
      close: () => undefined,
    };
  }
  return new GzipContent(path);
}

/** Resolves when a stream written to takes more, or is gone (listeners removed either way). */
function drained(out: PassThrough): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      out.off('drain', done).off('close', done);
      resolve();
    };
    out.on('drain', done).on('close', done);
  });
}

/** Entries at most this size are kept when a cursor walks past them. */
const CACHED_ENTRY = 4 * 1024 * 1024;
/** All the kept entries together. */
const CACHE_BYTES = 32 * 1024 * 1024;
/** Cursors open at once; an idle one beyond this is closed. */
const MAX_CURSORS = 4;

interface Ask {
  index: number;
  size: number;
  out: PassThrough;
}

class GzipContent implements TarContent {
  rereads = 0;
  private started = 0;
  private readonly cursors = new Set<Cursor>();
  private readonly cache = new Map<number, Buffer>();
  private cached = 0;

  constructor(private readonly path: string) {}

  open(index: number, _at: number, size: number): Readable {
    const kept = this.cache.get(index);
    if (kept) return Readable.from([kept]);
    const out = new PassThrough();
    const ask = { index, size, out };
    // The cursor furthest on that has not passed it; else a new one from the start.
    let best: Cursor | undefined;
    for (const c of this.cursors) if (c.next <= index && (!best || c.next > best.next)) best = c;
    if (!best) {
      if (this.started++ > 0) this.rereads++;
      this.trim();
      best = new Cursor(this.path, this);
      this.cursors.add(best);
    }
    best.ask(ask);
    return out;
  }

  /** A cursor walked past a small entry nobody asked for yet: kept, the oldest let go beyond the budget. */
  keep(index: number, bytes: Buffer): void {
    this.cache.set(index, bytes);
    this.cached += bytes.length;
    for (const [i, b] of this.cache) {
      if (this.cached <= CACHE_BYTES) break;
      this.cache.delete(i);
      this.cached -= b.length;
    }
  }

  /** Whether an entry is already kept (a cursor need not keep it twice). */
  has(index: number): boolean {
    return this.cache.has(index);
  }

  ended(cursor: Cursor): void {
    this.cursors.delete(cursor);
  }

  private trim(): void {
    if (this.cursors.size < MAX_CURSORS) return;
    for (const c of this.cursors) {
      if (c.idle) {
        c.close();
        this.cursors.delete(c);
        if (this.cursors.size < MAX_CURSORS) return;
      }
    }
  }

  close(): void {
    for (const c of this.cursors) c.close();
    this.cursors.clear();
    this.cache.clear();
  }
}

/** One read of the compressed archive from its start, serving asks in archive order. */
class Cursor {
  /** The index of the next entry it will meet. */
  next = 0;
  private readonly asks: Ask[] = [];
  /** The ask whose entry is streaming now (taken out of `asks`): a cursor serving one is not idle. */
  private serving: Ask | undefined;
  private wake: (() => void) | undefined;
  private readonly file;
  private closed = false;

  constructor(
    path: string,
    private readonly owner: GzipContent,
  ) {
    this.file = createReadStream(path);
    void this.run(path);
  }

  get idle(): boolean {
    return this.asks.length === 0 && this.serving === undefined;
  }

  ask(ask: Ask): void {
    this.asks.push(ask);
    this.asks.sort((a, b) => a.index - b.index);
    this.wake?.();
  }

  close(): void {
    this.closed = true;
    this.file.destroy();
    this.serving?.out.destroy(new Error('the archive was closed while this entry was read'));
    this.wake?.();
  }

  private async run(path: string): Promise<void> {
    const extract = tar.extract({ allowUnknownFormat: true } as never);
    const reading = pipeline(this.file, createGunzip(), extract);
    reading.catch(() => undefined);
    try {
      for await (const item of extract) {
        const entry = item as unknown as TarEntry;
        const index = this.next;
        // Nothing asked: wait here (the stream stays paused) until something is, or the end.
        while (this.asks.length === 0 && !this.closed) await new Promise<void>((resolve) => (this.wake = resolve));
        if (this.closed) break;
        const wanted = this.asks.filter((a) => a.index === index);
        if (wanted.length > 0) {
          this.asks.splice(0, this.asks.length, ...this.asks.filter((a) => a.index !== index));
          await this.serve(entry, wanted, index);
        } else if (entry.header.size !== undefined && entry.header.size <= CACHED_ENTRY && !this.owner.has(index)) {
          const chunks: Buffer[] = [];
          for await (const chunk of entry) chunks.push(chunk);
          this.owner.keep(index, Buffer.concat(chunks));
        } else {
          await drain(entry);
        }
        this.next = index + 1;
        // Asks for entries already passed go to another cursor.
        for (const late of this.asks.filter((a) => a.index < this.next)) this.hand(late);
        this.asks.splice(0, this.asks.length, ...this.asks.filter((a) => a.index >= this.next));
      }
      if (!this.closed) await reading;
      for (const a of this.asks) a.out.destroy(new Error(`${path} holds no entry ${a.index + 1}: it changed since it was read`));
    } catch (err) {
      // Whoever was being served, or waits, learns why: a stream left neither ended nor failed would hang its upload.
      this.serving?.out.destroy(err as Error);
      for (const a of this.asks) a.out.destroy(err as Error);
    } finally {
      this.serving = undefined;
      this.asks.length = 0;
      this.owner.ended(this);
      this.file.destroy();
    }
  }

  /** Streams the entry to whoever asked (the first; any other ask of the same entry gets it kept, or a new cursor). */
  private async serve(entry: TarEntry, wanted: Ask[], index: number): Promise<void> {
    const [first, ...rest] = wanted as [Ask, ...Ask[]];
    this.serving = first;
    if (entry.header.size !== first.size) {
      first.out.destroy(new Error(`entry ${index + 1} of the archive is ${entry.header.size} bytes now, ${first.size} when it was read: the archive changed`));
      await drain(entry);
    } else {
      // The reader may stop early (a failed upload): what it left is drained so the cursor goes on.
      let abandoned = false;
      first.out.on('close', () => (abandoned = true));
      for await (const chunk of entry) {
        if (abandoned || first.out.destroyed) continue;
        if (!first.out.write(chunk)) await drained(first.out);
      }
      if (!first.out.destroyed) first.out.end();
    }
    this.serving = undefined;
    for (const again of rest) this.hand(again);
  }

  private hand(ask: Ask): void {
    const out = this.owner.open(ask.index, 0, ask.size);
    out.on('error', (err) => ask.out.destroy(err));
    // A reader that lets go of its stream lets go of this one too: a pipe only unpipes, and the
    // cursor serving it would wait on it for ever.
    ask.out.once('close', () => out.destroy());
    out.pipe(ask.out);
  }
}
