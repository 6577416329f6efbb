// `pull --manifest-out FILE`: the manifest that would give every pulled file's document the same
// metadata again (a round trip into another project, or a sheet to edit). Streamed: each file's
// path and metadata go to a scratch JSON Lines file as the pull's listing passes them; the key
// set (the columns) is all that is held; the CSV (csv-stringify) is written at the end, beside the
// file and renamed over it, so a reader never sees half of one.
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { dirname, basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { once } from 'node:events';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'csv-stringify';
import { scratchFolder } from '../scratch.js';
import type { FileEntry, Source, SourceEntry } from '../sync/types.js';

export class ManifestWriter {
  private readonly keys = new Set<string>();
  private out: ReturnType<typeof createWriteStream> | undefined;
  private folder: string | undefined;
  private files = 0;

  constructor(
    readonly file: string,
    /** The path a key is written as (the local name a pull gives it). */
    private readonly pathOf: (key: string) => string,
  ) {}

  /** The source, each file it gives noted for the manifest. */
  tap(inner: Source): Source {
    const note = (entry: SourceEntry): SourceEntry => {
      if (entry.kind === 'file') this.note(entry);
      return entry;
    };
    const wrapped: Source = {
      description: inner.description,
      prepare: () => inner.prepare(),
      close: () => inner.close(),
      entries: async function* (signal?: AbortSignal) {
        for await (const e of inner.entries(signal)) yield note(e);
      },
      ...(inner.batches ? { batches: async function* (signal?: AbortSignal) {
        for await (const batch of inner.batches!(signal)) yield batch.map(note);
      } } : {}),
      ...(inner.takes ? { takes: (key: string) => inner.takes!(key) } : {}),
    };
    Object.defineProperty(wrapped, 'expectedCount', { get: () => inner.expectedCount });
    return wrapped;
  }

  async open(): Promise<void> {
    this.folder = await scratchFolder('manifest-out');
    this.out = createWriteStream(join(this.folder, 'rows.jsonl'));
  }

  private note(entry: FileEntry): void {
    const metadata = entry.attributes?.metadata ?? {};
    for (const key of Object.keys(metadata)) this.keys.add(key);
    this.files++;
    // Backpressure is not waited for: a line is small, and the listing's pages bound the pace.
    this.out?.write(`${JSON.stringify([this.pathOf(entry.key), metadata])}\n`);
  }

  /** Writes the CSV: `path`, then one column per key seen, sorted; an empty cell where a file has no such key. */
  async finish(): Promise<{ file: string; rows: number; columns: string[] }> {
    const out = this.out;
    if (!out || !this.folder) throw new Error('ManifestWriter.finish before open');
    out.end();
    await once(out, 'close');
    const columns = [...this.keys].sort();
    const temporary = join(dirname(this.file), `.${basename(this.file)}.ferry-${process.pid}`);
    const lines = createInterface({ input: createReadStream(join(this.folder, 'rows.jsonl')), crlfDelay: Infinity });
    const rows = async function* () {
      yield ['path', ...columns];
      for await (const line of lines) {
        if (!line) continue;
        const [path, metadata] = JSON.parse(line) as [string, Record<string, string>];
        yield [path, ...columns.map((c) => metadata[c] ?? '')];
      }
    };
    try {
      // A byte-order mark and CRLF: Excel opens it as UTF-8, as it saves "CSV UTF-8".
      await pipeline(rows(), stringify({ bom: true, record_delimiter: 'windows' }), createWriteStream(temporary));
      await rename(temporary, this.file);
    } catch (err) {
      await rm(temporary, { force: true });
      throw err;
    }
    return { file: this.file, rows: this.files, columns };
  }

  async dispose(): Promise<void> {
    this.out?.destroy();
    if (this.folder) await rm(this.folder, { recursive: true, force: true });
  }
}
