// `pull --manifest-out FILE`: the manifest that would give every pulled file's document the same
// metadata again (a round trip into another project, or a sheet to edit). Streamed: each file's
// path and metadata go to a scratch JSON Lines file as the pull's listing passes them; the key
// set (the columns) is all that is held; the CSV (csv-stringify), or the workbook where the name
// ends in .xlsx (workbook-write.ts), is written at the end, beside the file and renamed over it, so
// a reader never sees half of one.
import { createReadStream, createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { replaceWhole } from '../backends/own-files.js';
import { createInterface } from 'node:readline';
import { once } from 'node:events';
import { pipeline } from 'node:stream/promises';
import { csvStringify } from '../libraries.js';
import { scratchFolder } from '../scratch.js';
import { LOCAL_PATH_COLUMN } from './read.js';
import { writeWorkbook } from './workbook-write.js';
import { mappedSource } from '../sync/mapped-source.js';
import type { FileEntry, Source, SourceEntry } from '../sync/types.js';

export class ManifestWriter {
  private readonly keys = new Set<string>();
  private out: ReturnType<typeof createWriteStream> | undefined;
  private folder: string | undefined;
  private files = 0;

  /** Whether any file landed under another path than its document's (a name the file system could not hold). */
  private mapped = false;

  constructor(
    readonly file: string,
    /** The local path a pull gives a key: in the column ferry.localPath when any differs from the document's. */
    private readonly localOf: (key: string) => string,
  ) {}

  /** The source, each file it gives noted for the manifest. */
  tap(inner: Source): Source {
    const note = (entry: SourceEntry): SourceEntry => {
      if (entry.kind === 'file') this.note(entry);
      return entry;
    };
    return mappedSource(inner, note);
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
    const local = this.localOf(entry.key);
    if (local !== entry.key) this.mapped = true;
    this.out?.write(`${JSON.stringify([entry.key, local, metadata])}\n`);
  }

  /** Writes the CSV: `path`, then one column per key seen, sorted; an empty cell where a file has no such key. */
  async finish(): Promise<{ file: string; rows: number; columns: string[] }> {
    const out = this.out;
    if (!out || !this.folder) throw new Error('ManifestWriter.finish before open');
    out.end();
    await once(out, 'close');
    const columns = [...this.keys].sort();
    const lines = createInterface({ input: createReadStream(join(this.folder, 'rows.jsonl')), crlfDelay: Infinity });
    // `path` is the document's (a mirror of the pulled folder gives it back: folder/pulled-names.ts);
    // where the file has another, ferry.localPath says where it is (read back as information only).
    const mapped = this.mapped;
    const rows = async function* () {
      yield ['path', ...(mapped ? [LOCAL_PATH_COLUMN] : []), ...columns];
      for await (const line of lines) {
        if (!line) continue;
        const [path, local, metadata] = JSON.parse(line) as [string, string, Record<string, string>];
        yield [path, ...(mapped ? [local] : []), ...columns.map((c) => metadata[c] ?? '')];
      }
    };
    // Written new beside the file and renamed over it: a link at its name is replaced, never followed.
    await replaceWhole(this.file, async (file) => {
      // A byte-order mark and CRLF: Excel opens it as UTF-8, as it saves "CSV UTF-8". A cell holding
      // a lone CR or LF is quoted too (csv-stringify quotes the record delimiter, CRLF, alone): Python's
      // csv and LibreOffice would otherwise read it as two rows.
      if (/\.xlsx$/i.test(this.file)) await writeWorkbook(rows(), file);
      else await pipeline(rows(), csvStringify().stringify({ bom: true, record_delimiter: 'windows', quoted_match: /[\r\n]/ }), file);
    });
    return { file: this.file, rows: this.files, columns };
  }

  async dispose(): Promise<void> {
    this.out?.destroy();
    if (this.folder) await rm(this.folder, { recursive: true, force: true });
  }
}
