// A manifest loaded for a run: its rows in a scratch SQLite file, one row per path, looked up as
// the source's entries go by, so that a million rows cost disk, not memory. A row's path meets an
// entry's key as the same string, or else as the same string once both are composed (NFC): macOS
// names its files decomposed, a spreadsheet types them composed. Two rows that are one path once
// composed are refused, as two rows of one path are.
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { openScratchDb, type ScratchDb } from '../store/scratch-db.js';
import { visible } from '../text.js';
import { hash53 } from '../hashed-keys.js';
import type { EntryAttributes, FileEntry, Source, SourceEntry } from '../sync/types.js';
import { ManifestError, placeOf, readManifest, SETTINGS, type ManifestRow, type ReadOptions, type SettingName } from './read.js';

export { ManifestError, delimiterFlag, manifestFormat, placeOf, type ManifestRow } from './read.js';

/** How many rows, spread over the sheet, are looked for in the folder before the first upload. */
const LOOKED_AT = 1_000;
/** Fewer of them naming a file than this share: the sheet was made for another tree (exit 2). */
const MATCHED_SHARE = 0.5;
/** Rows written per transaction while loading. */
const LOAD_BATCH = 2_000;
/** Entries whose rows are looked up in one statement. */
const LOOKUP_BATCH = 256;
import { UNMATCHED_SHOWN, WITHOUT_ROW_LISTED } from './said.js';

export { manifestLine, UNMATCHED_SHOWN, type ManifestOutcome } from './said.js';
import type { ManifestOutcome } from './said.js';

/** What every document of the run carries unless its row says otherwise (--metadata, --ocr-strategy…). */
export interface RunWide {
  metadata?: Record<string, string> | undefined;
  ocrStrategy?: string | undefined;
  ocrEngine?: string | undefined;
  coordinateExtractionStrategy?: string | undefined;
}

interface StoredRow {
  id: number;
  path: string;
  line: number;
  attrs: string;
}

/** Which Unicode form a name is written in, in words. */
function formOf(name: string): string {
  return name === name.normalize('NFC') ? 'composed, NFC' : name === name.normalize('NFD') ? 'decomposed, NFD' : 'mixed forms';
}

/** The form rows are keyed by: composed (NFC). An ASCII key is its own (most are, and NFC costs). */
function composed(key: string): string {
  return /^[\x00-\x7f]*$/.test(key) ? key : key.normalize('NFC');
}

export class Manifest {
  /** Which rows an entry met, by row id (a byte each: a million rows, a megabyte). */
  private seen: Uint8Array;
  private readonly byKey: Database.Statement;
  private readonly db: Database.Database;

  private constructor(
    readonly file: string,
    private readonly scratch: ScratchDb,
    readonly rows: number,
  ) {
    const db = scratch.db;
    this.db = db;
    this.seen = new Uint8Array(rows + 1);
    this.byKey = db.prepare('SELECT id, path, line, attrs FROM rows WHERE key = ?');
    this.byKeys = db.prepare('SELECT id, key, path, line, attrs FROM rows WHERE key IN (SELECT value FROM json_each(?))');
  }

  private readonly byKeys: Database.Statement;

  /** Reads and checks the whole file before the run sends anything: a bad row is exit 2 naming it. */
  static async load(file: string, opts: ReadOptions = {}): Promise<Manifest> {
    const scratch = await openScratchDb('manifest');
    const { db } = scratch;
    try {
      db.exec('CREATE TABLE rows (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, path TEXT NOT NULL, line INTEGER NOT NULL, attrs TEXT NOT NULL)');
      const insert = db.prepare('INSERT INTO rows (id, key, path, line, attrs) VALUES (?, ?, ?, ?, ?)');
      const earlier = db.prepare('SELECT path, line FROM rows WHERE key = ?');
      let id = 0;
      let batch: ManifestRow[] = [];
      const write = db.transaction((rows: ManifestRow[]) => {
        for (const row of rows) {
          const key = composed(row.path);
          try {
            insert.run(++id, key, row.path, row.line, JSON.stringify({ m: row.metadata, s: row.settings }));
          } catch (err) {
            if ((err as { code?: string }).code !== 'SQLITE_CONSTRAINT_UNIQUE') throw err;
            const first = earlier.get(key) as { path: string; line: number };
            const same = first.path === row.path ? 'the same path' : 'the same path once composed (NFC)';
            throw new ManifestError(`--manifest ${visible(file)}: ${placeOf(file, row.line)}: "${visible(row.path)}" has a row already, on ${placeOf(file, first.line)} (${same}); one row per file`);
          }
        }
      });
      for await (const row of readManifest(file, opts)) {
        batch.push(row);
        if (batch.length >= LOAD_BATCH) {
          write(batch);
          batch = [];
        }
      }
      write(batch);
      return new Manifest(file, scratch, id);
    } catch (err) {
      await scratch.close();
      throw err;
    }
  }

  /** The row for a source entry's key, if any; `note` records that an entry met it. */
  lookup(key: string, note = true): ManifestRow | undefined {
    const found = (this.byKey.get(composed(key)) ?? undefined) as StoredRow | undefined;
    return found && this.row(found, note, key);
  }

  /**
   * Per row, a hash of the non-ASCII key that met it (made at the first such key: 8 bytes a row):
   * a second file meeting the same row under another form of the name is refused.
   */
  private metBy: Float64Array | undefined;

  /** Refuses a row met by two files whose names are one text in two Unicode forms (NFC and NFD). */
  private once(found: StoredRow, key: string): void {
    if (/^[\x00-\x7f]*$/.test(key)) return;
    this.metBy ??= new Float64Array(this.rows + 1);
    const h = hash53(key) + 1;
    const had = this.metBy[found.id] as number;
    if (had === 0) this.metBy[found.id] = h;
    else if (had !== h) {
      const other = key === key.normalize('NFC') ? key.normalize('NFD') : key.normalize('NFC');
      throw new ManifestError(`--manifest ${visible(this.file)}: ${placeOf(this.file, found.line)} ("${visible(found.path)}") names two files of the source, the same name in two Unicode forms: "${visible(key)}" (${formOf(key)}) and "${visible(other)}" (${formOf(other)}); rename one of them`);
    }
  }

  /**
   * The rows of many keys at once, by the key as given (a listing's batch: one statement, not one
   * per entry; a million lookups one by one cost 7.4 s, most of it stepping into the driver).
   */
  lookupMany(keys: readonly string[]): Map<string, ManifestRow> {
    const found = new Map<string, ManifestRow>();
    if (keys.length === 0) return found;
    const byComposed = new Map<string, string[]>();
    for (const key of keys) {
      const c = composed(key);
      const list = byComposed.get(c);
      if (list) list.push(key);
      else byComposed.set(c, [key]);
    }
    for (const stored of this.byKeys.all(JSON.stringify([...byComposed.keys()])) as (StoredRow & { key: string })[]) {
      const row = this.row(stored, false);
      for (const key of byComposed.get(stored.key) ?? []) {
        this.met(stored, key);
        found.set(key, row);
      }
    }
    return found;
  }

  /** Notes that the entry `key` met the row. */
  private met(found: StoredRow, key: string): void {
    this.seen[found.id] = 1;
    this.once(found, key);
  }

  private row(found: StoredRow, note: boolean, key?: string): ManifestRow {
    if (note && key !== undefined) this.met(found, key);
    const attrs = JSON.parse(found.attrs) as { m: Record<string, string>; s: ManifestRow['settings'] };
    return { line: found.line, path: found.path, metadata: attrs.m, settings: attrs.s };
  }

  /**
   * Rows no entry met: the paths the source lacks. `takes` leaves out the paths the run's patterns
   * exclude (those files are there, only not carried).
   */
  unmatched(takes?: (key: string) => boolean): { count: number; paths: string[] } {
    const out = { count: 0, paths: [] as string[] };
    for (const row of this.db.prepare('SELECT id, path FROM rows ORDER BY id').iterate() as IterableIterator<{ id: number; path: string }>) {
      if (this.seen[row.id] || takes?.(row.path) === false) continue;
      out.count++;
      out.paths.push(row.path);
    }
    return out;
  }

  /**
   * The rows checked against an archive before anything is sent, as `meet` checks them against a
   * folder: its entries listed once (streamed; a tar is read through for it), and fewer than half of
   * the rows naming an entry is exit 2, saying so. Where every entry sits under one folder the rows
   * leave out (an archive tool's wrapping folder), the hint is --strip-components 1.
   */
  async meetEntries(source: Source, opts: { partial?: boolean | undefined; stripped?: boolean | undefined } = {}): Promise<void> {
    if (opts.partial || this.rows === 0) return;
    const met = new Uint8Array(this.rows + 1);
    const metUnder = new Uint8Array(this.rows + 1);
    /** The first folder every entry shares: undefined before the first, null once two differ. */
    let top: string | null | undefined;
    for await (const entry of source.entries()) {
      if (entry.kind !== 'file') continue;
      const id = this.rowIdOf(entry.key);
      if (id !== undefined) met[id] = 1;
      const slash = entry.key.indexOf('/');
      const first = slash < 0 ? null : entry.key.slice(0, slash);
      top = top === undefined || top === first ? first : null;
      const under = slash < 0 ? undefined : this.rowIdOf(entry.key.slice(slash + 1));
      if (under !== undefined) metUnder[under] = 1;
    }
    const matched = met.reduce((n, v) => n + v, 0);
    if (matched >= this.rows * MATCHED_SHARE) return;
    const wrapped = typeof top === 'string' && !opts.stripped && metUnder.reduce((n, v) => n + v, 0) >= this.rows * MATCHED_SHARE;
    const hint = wrapped ? `Every entry of the archive sits under "${visible(top as string)}/", which the rows leave out: --strip-components 1 takes it off. ` : '';
    throw new ManifestError(
      `--manifest ${visible(this.file)}: ${matched === 0 ? `none of its ${this.rows} row${this.rows === 1 ? '' : 's'}` : `of its ${this.rows} rows only ${matched} (under half)`} name${matched === 0 ? 's' : ''} an entry of ${visible(source.description)}; nothing was sent. ` +
        `${hint}--manifest-partial runs all the same, each file without a row uploaded without its metadata (the service keeps every version: adding it later makes a second one)`,
    );
  }

  /** The id of the row a key meets (as lookup finds it), noting nothing. */
  private rowIdOf(key: string): number | undefined {
    return ((this.byKey.get(composed(key)) ?? undefined) as StoredRow | undefined)?.id;
  }

  /** Rows whose `\\` the run reads as folder separators (a sheet made on Windows), once `meet` has run. */
  separatorsRead = 0;

  /**
   * Checks the rows against a folder before anything is sent. A row written with `\\` between
   * folders names no file while the folder holds none of that name with `\\` in it and does
   * hold it with `/`: it is read with `/` (said in the summary). Then the rows are looked for,
   * a stat each, LOOKED_AT of them spread over the sheet: fewer than half name a file of the folder,
   * and the sheet was made for another tree (the folder's own name as a prefix, a drive letter):
   * exit 2 with what would fix it, before the first upload. `--manifest-partial` skips the refusal
   * (the run goes on knowingly).
   */
  async meet(root: string, opts: { partial?: boolean | undefined } = {}): Promise<void> {
    const isFile = (path: string) => lstat(join(root, path)).then((st) => st.isFile(), () => false);
    // A row names a file in whichever Unicode form either is written (macOS writes NFD): the path
    // as written, composed and decomposed. Two files that are one name in two forms are refused.
    const exists = async (path: string): Promise<boolean> => {
      const forms = [...new Set([path, path.normalize('NFC'), path.normalize('NFD')])];
      const found: string[] = [];
      for (const form of forms) if (await isFile(form)) found.push(form);
      if (found.length > 1) throw new ManifestError(`--manifest ${visible(this.file)}: "${visible(path)}" names two files of ${visible(root)}, the same name in two Unicode forms: "${visible(found[0] as string)}" (${formOf(found[0] as string)}) and "${visible(found[1] as string)}" (${formOf(found[1] as string)}); rename one of them`);
      return found.length === 1;
    };
    const page = (sql: string) => this.db.prepare(sql);
    const withBackslash = page("SELECT id, key, path FROM rows WHERE id > ? AND instr(path, '\\') > 0 ORDER BY id LIMIT 256");
    const rekey = page('UPDATE rows SET key = ? WHERE id = ?');
    for (let after = 0; ; ) {
      const rows = withBackslash.all(after) as { id: number; key: string; path: string }[];
      if (rows.length === 0) break;
      after = (rows[rows.length - 1] as { id: number }).id;
      const slashed = await Promise.all(rows.map(async (r) => ((await exists(r.path)) ? undefined : (await exists(r.path.replace(/\\/g, '/'))) ? r : undefined)));
      for (const r of slashed) {
        if (!r) continue;
        try {
          rekey.run(composed(r.path.replace(/\\/g, '/')), r.id);
        } catch (err) {
          if ((err as { code?: string }).code !== 'SQLITE_CONSTRAINT_UNIQUE') throw err;
          throw new ManifestError(`--manifest ${visible(this.file)}: "${visible(r.path)}", read with / between its folders, names a file another row names already; one row per file`);
        }
        this.separatorsRead++;
      }
    }
    if (opts.partial || this.rows === 0) return;
    // Rows spread evenly over the sheet, a stat each: a share, not a census (a million rows would be a million stats).
    const step = Math.max(1, Math.floor(this.rows / LOOKED_AT));
    const looked = page('SELECT id, key, path FROM rows WHERE (id - 1) % ? = 0 ORDER BY id LIMIT ?').all(step, LOOKED_AT) as { id: number; key: string; path: string }[];
    // As written, unless read with / for \\ (the key is then the path to look at).
    const found = await Promise.all(looked.map((r) => exists(r.key === composed(r.path) ? r.path : r.key)));
    const matched = found.filter(Boolean).length;
    if (matched >= looked.length * MATCHED_SHARE) return;
    const missing = looked.filter((_, i) => !found[i]).map((r) => r.path);
    const sample = missing.slice(0, 5);
    const how = matched === 0 ? `none of its ${this.rows} row${this.rows === 1 ? '' : 's'}` : `of ${looked.length === this.rows ? `its ${this.rows} rows` : `${looked.length} of its ${this.rows} rows, spread over the sheet,`} only ${matched} (under half)`;
    throw new ManifestError(
      `--manifest ${visible(this.file)}: ${how} name${matched === 0 ? 's' : ''} a file of ${visible(root)} (${sample.map((p) => `"${visible(p)}"`).join(', ')}${missing.length > sample.length ? ', …' : ''}${matched === 0 ? '' : ' do not'}); nothing was sent. ` +
        `${await hintFor(root, sample, exists)}--manifest-partial runs all the same, each file without a row uploaded without its metadata (the service keeps every version: adding it later makes a second one)`,
    );
  }

  async close(): Promise<void> {
    await this.scratch.close();
  }
}

/** What would make the rows name files of the folder, when something plain would: a hint ending in a space, or ''. */
async function hintFor(root: string, sample: string[], exists: (path: string) => Promise<boolean>): Promise<string> {
  const first = (p: string) => p.replace(/^[/\\]+/, '').split(/[/\\]/)[0] ?? '';
  const prefix = first(sample[0] ?? '');
  const rest = (p: string) => p.replace(/^[/\\]+/, '').split(/[/\\]/).slice(1).join('/');
  if (prefix && sample.every((p) => first(p) === prefix) && (await Promise.all(sample.map((p) => exists(rest(p))))).some(Boolean)) {
    return `Every row starts with "${visible(prefix)}/", which ${visible(root)} does not hold: the paths are relative to the folder mirrored, so "${visible(rest(sample[0] as string))}" and not "${visible(sample[0] as string)}"; remove that prefix from the path column. `;
  }
  if (sample.some((p) => /^[A-Za-z]:[\\/]|^[/\\]/.test(p))) return 'The rows hold absolute paths (a drive letter, or a leading slash): the paths are relative to the folder mirrored. ';
  const folded = new Map<string, string>();
  for (const p of sample) {
    const dir = join(root, ...p.split('/').slice(0, -1));
    for (const name of await readdir(dir).catch(() => [] as string[])) folded.set(join(dir, name).normalize('NFC').toLowerCase(), name);
    const other = folded.get(join(root, p).normalize('NFC').toLowerCase());
    if (other !== undefined) return `"${visible(p)}" differs from the file "${visible(other)}" only by case or by Unicode form (NFC/NFD): write the paths as the files are named. `;
  }
  return '';
}

/**
 * What a document with this row carries over the run's own values: the row's metadata over
 * `--metadata`, each setting the row gives over the run's flag. Returned with the settings either
 * names, which are the ones its identity compares.
 */
export function effective(row: ManifestRow, runWide: RunWide): { metadata: Record<string, string>; settings: Partial<Record<SettingName, string>> } {
  const settings: Partial<Record<SettingName, string>> = {};
  for (const name of Object.keys(SETTINGS) as SettingName[]) {
    const value = row.settings[name] ?? runWide[name];
    if (value !== undefined) settings[name] = value;
  }
  return { metadata: { ...runWide.metadata, ...row.metadata }, settings };
}

/**
 * The identity of what a document carries, as the checkpoint store keeps it: its metadata (ferry's
 * own keys aside) and the settings named. Equal for a file and its document exactly when the
 * document carries what the row asks. An empty value and a missing key are one thing (an empty
 * cell is how every sheet says both): a key whose value is empty is left out.
 */
export function attributesDigest(metadata: Record<string, string>, settings: Partial<Record<SettingName, string>>): string {
  const sorted = (o: Record<string, string>) => Object.entries(o).filter(([, v]) => v !== '').sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash('sha256')
    .update(JSON.stringify([sorted(metadata), sorted(settings as Record<string, string>)]))
    .digest('base64url')
    .slice(0, 22);
}


/** The warning for rows that name no file: how many, and the first few paths (`run`: said by a run, which went on). */
export function unmatchedWarning(u: ManifestOutcome['unmatched'], run = false): string {
  const shown = u.paths.slice(0, UNMATCHED_SHOWN).map((p) => `"${p}"`).join(', ');
  const more = u.count > UNMATCHED_SHOWN ? `, … (--json lists all ${u.count}${run ? ' under manifest.unmatched' : ''})` : '';
  return `warning: ${u.count} row${u.count === 1 ? '' : 's'} of the manifest name${u.count === 1 ? 's' : ''} no file of the source: ${shown}${more}${run ? '; the run went on' : ''}`;
}

/** Said when rows were written with `\\` between folders and read with `/`. */
export function separatorsNote(count: number): string {
  return `${count} row${count === 1 ? '' : 's'} of the manifest use${count === 1 ? 's' : ''} \\ between folders (as Windows writes paths): read as /, since the folder holds those files under / and none with \\ in its name`;
}

const OVERLAY = Symbol('manifest overlay');

/** The manifest a source was opened with (ManifestOverlay.source), if any. */
export function overlayOf(source: Source): ManifestOverlay | undefined {
  return (source as { [OVERLAY]?: ManifestOverlay })[OVERLAY];
}

/** A run's manifest applied to its source: each file with a row gets the row's attributes and their identity. */
export class ManifestOverlay {
  constructor(
    readonly manifest: Manifest,
    private readonly runWide: RunWide,
  ) {}

  /**
   * The source, each file entry carrying what its row says (and the identity of it). Closing it
   * closes the manifest too; `overlayOf` finds the overlay again.
   */
  source(inner: Source): Source {
    const self = this;
    const overlay = (entry: SourceEntry): SourceEntry => (entry.kind === 'file' ? this.entry(entry, this.manifest.lookup(entry.key)) : entry);
    const wrapped: Source & { [OVERLAY]?: ManifestOverlay } = {
      [OVERLAY]: this,
      description: inner.description,
      prepare: () => inner.prepare(),
      close: async () => {
        try {
          await inner.close();
        } finally {
          await this.manifest.close();
        }
      },
      entries: async function* (signal?: AbortSignal) {
        for await (const e of inner.entries(signal)) yield overlay(e);
      },
      // Batches look their rows up together.
      batches: async function* (this: void, signal?: AbortSignal) {
        const looked = (batch: SourceEntry[]) => {
          const rows = self.manifest.lookupMany(batch.filter((e) => e.kind === 'file').map((e) => e.key));
          return batch.map((e) => (e.kind === 'file' ? self.entry(e, rows.get(e.key)) : e));
        };
        if (inner.batches) {
          for await (const batch of inner.batches(signal)) yield looked(batch);
          return;
        }
        // A source of single entries (a zip, a tar) is read LOOKUP_BATCH at a time for this.
        let batch: SourceEntry[] = [];
        for await (const e of inner.entries(signal)) {
          batch.push(e);
          if (batch.length >= LOOKUP_BATCH) {
            yield looked(batch);
            batch = [];
          }
        }
        if (batch.length) yield looked(batch);
      },
      ...(inner.takes ? { takes: (key: string) => inner.takes!(key) } : {}),
      ...(inner.notes ? { notes: () => inner.notes!() } : {}),
    };
    Object.defineProperty(wrapped, 'expectedCount', { get: () => inner.expectedCount });
    return wrapped;
  }

  /** Files no row named, as the source gave them. */
  private readonly withoutRow = { count: 0, paths: [] as string[] };

  private entry(entry: FileEntry, row: ManifestRow | undefined): FileEntry {
    if (!row) {
      this.withoutRow.count++;
      if (this.withoutRow.paths.length < WITHOUT_ROW_LISTED) this.withoutRow.paths.push(entry.key);
      return entry;
    }
    const { metadata, settings } = effective(row, this.runWide);
    const attributes: EntryAttributes = { ...entry.attributes, metadata: row.metadata, ...row.settings };
    return { ...entry, attributes, attributesDigest: attributesDigest(metadata, settings) };
  }

  /** What the manifest did for a run over `source`: its rows, and those that named no file of it. */
  outcome(source: Source): ManifestOutcome {
    const read = this.manifest.separatorsRead;
    const unmatched = this.manifest.unmatched(source.takes?.bind(source));
    return { file: this.manifest.file, rows: this.manifest.rows, matched: this.manifest.rows - unmatched.count, withoutRow: this.withoutRow, unmatched, ...(read ? { separatorsRead: read } : {}) };
  }

  /**
   * The identity of what a document found on the service carries, for the file with this key:
   * compared on a cold start with the file's own. Null for a file with no row (not compared).
   */
  readonly adopted = (key: string, found: EntryAttributes | undefined): string | null => {
    const row = this.manifest.lookup(key, false);
    if (!row) return null;
    const { settings: named } = effective(row, this.runWide);
    const settings: Partial<Record<SettingName, string>> = {};
    for (const name of Object.keys(named) as SettingName[]) {
      const value = found?.[name];
      if (value !== undefined) settings[name] = value;
    }
    return attributesDigest(found?.metadata ?? {}, settings);
  };
}
