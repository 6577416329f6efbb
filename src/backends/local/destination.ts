// A local folder as a destination (`ferry pull`). Each entry is written under a temporary name in
// its folder, given the source's time, and renamed into place: no half-written file ever sits
// under its final name, and a file with the entry's size and time is one that landed. A file in
// the way that ferry did not write is never overwritten: the entry fails as a conflict. Each run
// first looks at every file an earlier run wrote (holds): one deleted here is written again, one
// changed here is a conflict, or replaced under overwrite-changed. Names follow the rules probed in
// the folder (probe.ts, name-rules.ts, namer.ts), recorded in it for a restore (names-record.ts).
import {
  close as closeFd,
  closeSync,
  constants,
  copyFileSync,
  createReadStream,
  existsSync,
  futimes as futimesFd,
  fstatSync,
  futimesSync,
  lstatSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { access, lstat, mkdir, rm } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import type { Mark } from '../../marks.js';
import { promisify } from 'node:util';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import { ConfigurationError, FerryError } from '../../api/errors.js';
import type { FileEntry, PartialContent } from '../../sync/types.js';
import { visible } from '../../text.js';
import type { CheckpointStore, ItemFingerprint, ItemRecord, WrittenItem } from '../../store/types.js';
import { sha256Of } from '../../sync/checksum.js';
import type { Drifted } from '../../sync/drift.js';
import { LocalNamer } from './namer.js';
import type { LocalNamesSetting, NameRules } from '../name-rules.js';
import { NamesFileWriter, readNamesFile } from '../names-record.js';
import { probeFolder, rulesFor } from './probe.js';
import type { Slot } from '../../slots.js';
import type { Destination, Placement, WriteContext } from '../../sync/engine.js';
import { keptPartial, partialName, removePartials, resumableName, RESUMABLE_MIN, type ResumeIdentity } from '../partials.js';
import { writeDrained, writeFlowing } from './block-write.js';
import { LinkRejectedError, createNew, openOwn } from '../own-files.js';
import { CheckCounts, ContentCheck, ContentMismatchError, verifiedTwice } from '../content-check.js';

/** Files up to this size are written with synchronous calls once their bytes are in (writeSmall). */
const SYNC_WRITE_MAX = 64 * 1024;

const closeAsync = promisify(closeFd);
const futimesAsync = promisify(futimesFd);

/** A local file is in the way and ferry did not write it: kept, and the entry fails. */
export class LocalConflictError extends FerryError {}

/** The content was not as long as its source said: the file is not kept. */
class WrongSizeError extends FerryError {}

/** The disk filled: every other write would fail alike, so the run stops, as on a destination that cannot be used (exit 2). */
export class DiskFullError extends ConfigurationError {
  override get mark(): Mark {
    return 'fatal';
  }
}

export interface LocalPlacement extends Placement {
  /** The path under the root, after the name rule. */
  local: string;
  /** Why the entry cannot be written, when something is in the way. */
  conflict?: string;
  /** The file is already there, as this entry would write it (an earlier run's write). */
  landed?: boolean;
  /** A file ferry wrote and someone changed is there, and overwrite-changed replaces it. */
  replace?: boolean;
}

export interface LocalFolderOptions {
  root: string;
  store: CheckpointStore;
  jobKey: string;
  /** Case-insensitive file system (default: probed in the root; true under windows rules stated). */
  caseInsensitive?: boolean | undefined;
  /** --local-names: the rules names are written by (default auto: probed in the root). */
  localNames?: LocalNamesSetting | undefined;
  /** --overwrite-changed: a file ferry wrote and someone changed since is replaced by the document's version. */
  overwriteChanged?: boolean | undefined;
  /** --backup-dir: where a file replaced under overwriteChanged is moved first (by its path under the root). */
  backupDir?: string | undefined;
  /** --ignore-checksum: the bytes received are not checked against the sha256 an entry says it has. */
  ignoreChecksum?: boolean | undefined;
  /** Plan only: nothing is created or removed. */
  dryRun?: boolean | undefined;
  /** Where a download that could not continue from its kept bytes says why. */
  logger?: Pick<Logger, 'warn'> | undefined;
}

/** How the names of this destination are written, as the summary says it. */
export interface LocalNamesUsed {
  rules: NameRules;
  /** stated (--local-names), recorded (the folder's record of names: the rules an earlier pull wrote it by), probed (what the folder refused), or assumed (a dry run writes no probe). */
  how: 'stated' | 'recorded' | 'probed' | 'assumed';
  caseInsensitive: boolean;
  /** The step file times are compared at. */
  timeStepMs: number;
  /** The probe names the folder refused, when probed. */
  refused?: string[];
}

/** Renamed names, replaced files and refused folders listed in the summary; the rest are counted. */
const LISTED = 1_000;

/** A rename or mkdir refused for the name itself (not for a missing folder or a full disk). */
const NAME_REJECTIONS = new Set(['EINVAL', 'EILSEQ', 'ENAMETOOLONG']);

/** What an errno means when a file system refuses a name, in words. */
function explainRejection(code: string | undefined): string {
  if (code === 'EINVAL') return 'EINVAL: the file system does not take this name';
  if (code === 'EILSEQ') return 'EILSEQ: the file system cannot store these characters';
  if (code === 'ENAMETOOLONG') return 'ENAMETOOLONG: the name is too long for the file system';
  if (code === 'ENOENT') return 'ENOENT: the file system refused the name as if its folder were missing (exFAT and FAT do this for names they do not take)';
  return code ?? 'refused';
}

/** A component the file system refused by name: mapped with the strict rules, then said if refused again. */
class NameRejected extends Error {
  constructor(
    readonly component: number,
    readonly code: string | undefined,
    readonly path: string,
  ) {
    super(`the file system refused ${path} (${explainRejection(code)})`);
  }
}

export class LocalFolderDestination implements Destination<LocalPlacement> {
  readonly description: string;
  /** A file renamed into place with the entry's size and time is recognised without an intent. */
  readonly needsIntent = false;
  /** Nothing here is answered from another entry's write: no set of claimed ids is kept for it. */
  readonly asksClaimed = false;
  /**
   * Folders made ready (created, or cleared of a killed run's temporary files), each once;
   * true for a folder this run created: nothing can be in the way there.
   */
  private readonly ready = new Map<string, Promise<boolean>>();
  private namer = new LocalNamer('posix', false);
  private used: LocalNamesUsed = { rules: 'posix', how: 'assumed', caseInsensitive: false, timeStepMs: 1 };
  private names: NamesFileWriter | undefined;
  private readonly renamed: { key: string; local: string; why: string }[] = [];
  private renamedCount = 0;
  /** Folders that could not be made without going through a link or over a file. */
  private readonly foldersRefused: { key: string; why: string }[] = [];
  private readonly replaced: { key: string; local: string; backup?: string }[] = [];
  private replacedCount = 0;
  /** Documents whose bytes were checked against their sha256, and those that carry none. */
  private readonly checks = new CheckCounts(LISTED);

  constructor(private readonly o: LocalFolderOptions) {
    this.description = o.root;
  }

  /** Once per run, however often asked (the job checks the folder before it takes the lock). */
  prepare(): Promise<void> {
    this.prepared ??= this.makeRoot();
    return this.prepared;
  }

  private prepared: Promise<void> | undefined;

  private async makeRoot(): Promise<void> {
    const stated = this.o.localNames !== undefined && this.o.localNames !== 'auto' ? this.o.localNames : undefined;
    if (this.o.dryRun) {
      // A dry run writes no probe: the rules stated, or those of the machine's own disks.
      const caseInsensitive = this.o.caseInsensitive ?? stated === 'windows';
      this.use({ rules: stated ?? 'posix', how: stated ? 'stated' : 'assumed', caseInsensitive, timeStepMs: 1 });
      return;
    }
    try {
      await mkdir(this.o.root, { recursive: true });
    } catch (err) {
      // Nothing was attempted: the destination itself is not a folder ferry can use (exit 2). A
      // recursive mkdir on a read-only mount may say ENOENT: the nearest folder there tells.
      const code = (await writableCode(this.o.root)) ?? (err as NodeJS.ErrnoException).code;
      const why =
        code === 'EEXIST' || code === 'ENOTDIR' ? 'it (or a folder above it) is a file, not a folder' : code === 'EROFS' ? 'its file system is mounted read-only; nothing was downloaded' : code === 'EACCES' ? 'this user may not write there (EACCES); nothing was downloaded' : `it cannot be made (${code ?? (err as Error).message})`;
      throw new ConfigurationError(`cannot pull into ${this.o.root}: ${why}`);
    }
    // A folder an earlier pull wrote keeps the rules it was written by: probing it again could give
    // other ones (a copy moved to another disk), and every mapped name would land a second time.
    // Read once: the rules from its header here, its lines by the writer below.
    const record = await readNamesFile(this.o.root).catch((err: unknown) => {
      // Nothing is written through a link planted at the record's name: the folder is refused whole (exit 2).
      throw err instanceof LinkRejectedError ? new ConfigurationError(`cannot pull into ${this.o.root}: ${err.message}`) : err;
    });
    const recorded = stated ? undefined : record?.header;
    const facts = await probeFolder(this.o.root, { names: !stated && !recorded });
    const rules = stated ?? recorded?.rules ?? rulesFor(facts);
    // A copy kept under Windows' rules is read by Windows, which folds case (ntfs-3g itself tells it apart).
    const caseInsensitive = this.o.caseInsensitive ?? (recorded ? recorded.caseInsensitive : rules === 'windows' || facts.caseInsensitive);
    const how = stated ? 'stated' : recorded ? 'recorded' : 'probed';
    this.use({ rules, how, caseInsensitive, timeStepMs: facts.timeStepMs, ...(how === 'probed' ? { refused: facts.rejected } : {}) });
    this.names = new NamesFileWriter(this.o.root, { rules: this.used.rules === 'windows' ? 'windows' : 'posix', caseInsensitive });
    await this.names.open(record);
  }

  private use(used: LocalNamesUsed): void {
    this.used = used;
    this.namer = new LocalNamer(used.rules, used.caseInsensitive);
  }

  expect(count: number): void {
    this.namer.reserve(count);
  }

  /** The local path a pull gives a key (the manifest writer asks it too: the same answer as the write's). */
  localOf(key: string): string {
    return this.namer.map(key).local;
  }

  async settle(inFlight: ItemRecord[]): Promise<Map<string, { remoteId: string }>> {
    const landed = new Map<string, { remoteId: string }>();
    const cleaned = new Set<string>();
    for (const item of inFlight) {
      const local = this.namer.map(item.sourceKey).local;
      const final = join(this.o.root, local);
      // Temporary files a killed run left in this folder go first.
      const dir = dirname(final);
      if (!cleaned.has(dir)) {
        cleaned.add(dir);
        // Never through a link: a folder reached by one is somebody else's.
        if (await plainFolderInside(this.o.root, dir)) await removePartials(dir, this.o.jobKey);
      }
      const st = await lstat(final).catch(() => undefined);
      if (st?.isFile() && st.size === item.size && this.sameTime(st.mtimeMs, item.mtimeMs)) landed.set(item.sourceKey, { remoteId: written(local, item.size, item.mtimeMs) });
    }
    return landed;
  }

  /**
   * The folder is a truth too: each file an earlier run wrote is looked at where it was written.
   * Gone: written again. Another size, or a time other than the one ferry gave it (at the step
   * the file system keeps): changed by someone, and met as a file in the way.
   */
  async holds(items: WrittenItem[]): Promise<Map<string, Drifted>> {
    const drifted = new Map<string, Drifted>();
    await Promise.all(
      items.map(async (item) => {
        const was = parseWritten(item.remoteId);
        if (!was) return;
        // Its path is this run's too: a new document that would land on it is told apart.
        this.namer.claim(was.local, item.sourceKey);
        this.names?.note(was.local, item.sourceKey);
        const st = await lstat(join(this.o.root, was.local)).catch(() => undefined);
        if (!st) drifted.set(item.sourceKey, { kind: 'missing', why: 'deleted here since ferry wrote it: downloaded again' });
        else if (!st.isFile() || st.size !== was.size || !this.sameTime(st.mtimeMs, was.mtimeMs)) {
          drifted.set(item.sourceKey, { kind: 'changed', why: `changed here since ferry wrote it (${describeLocal(st)}; ferry wrote ${was.size} bytes dated ${new Date(was.mtimeMs).toISOString()})` });
        }
      }),
    );
    return drifted;
  }

  async ensureFolder(key: string): Promise<void> {
    if (this.o.dryRun) return;
    try {
      await this.folderOf(key);
    } catch (err) {
      // Not the end of the pull: the folder is reported, and each document for it fails with the reason.
      if (!(err instanceof LocalConflictError)) throw err;
      if (this.foldersRefused.length < LISTED) this.foldersRefused.push({ key, why: err.message });
    }
  }

  /**
   * Makes the folder a key maps to (true when this run created it). A component the file system
   * refuses by name is mapped with the strict rules and tried again; refused again, it is a
   * conflict naming the rule it broke, never a raw error.
   */
  private async folderOf(key: string): Promise<boolean> {
    for (;;) {
      const mapped = this.namer.map(key, true);
      if (mapped.why) this.noteRename(key, mapped.local, mapped.why);
      try {
        const created = await this.readyFolder(join(this.o.root, mapped.local));
        this.names?.note(mapped.local, key);
        return created;
      } catch (err) {
        if (!(err instanceof NameRejected)) throw err;
        const prefix = key.split('/').slice(0, err.component + 1).join('/');
        this.namer.strict(prefix);
        // Another file of the folder may have switched it already: tried again while the strict form is another path.
        if (this.namer.map(key, true).local === mapped.local) {
          throw new LocalConflictError(`refused: the folder "${visible(err.path)}" (${explainRejection(err.code)}), even with every character Windows or a share might refuse written in FULLWIDTH`);
        }
      }
    }
  }

  async place(entry: Pick<FileEntry, 'key' | 'size' | 'mtimeMs' | 'marker' | 'expectedSha256'>): Promise<LocalPlacement> {
    const key = entry.key;
    const slash = key.lastIndexOf('/');
    // The folder first: a folder refused by name is mapped before the file's path is.
    const fresh = this.o.dryRun ? false : slash < 0 ? await this.readyFolder(this.o.root) : await this.folderOf(key.slice(0, slash));
    const { local, why } = this.namer.map(key);
    if (why) this.noteRename(key, local, why);
    const placement: LocalPlacement = { parentId: null, local };
    // In a folder this run created, nothing is in the way: no look needed.
    if (fresh) return placement;
    const st = await lstat(join(this.o.root, local)).catch(() => undefined);
    const known = this.o.store.fingerprint(this.o.jobKey, key);
    if (st?.isFile() && st.size === entry.size && this.sameTime(st.mtimeMs, entry.mtimeMs) && (await this.holdsThis(entry, known, join(this.o.root, local)))) {
      // What this entry would write is there: a run stopped after the rename wrote it.
      placement.landed = true;
    } else if (st) {
      const ours = parseWritten(known?.remoteId);
      const wroteHere = st.isFile() && ours?.local === local;
      // A file ferry wrote keeps its name in the record whatever its state now (changed here, in conflict).
      if (wroteHere) this.names?.note(local, key);
      if (wroteHere && ours.size === st.size && this.sameTime(st.mtimeMs, ours.mtimeMs)) {
        // The file ferry wrote for the document before this one: replaced.
      } else if (wroteHere && this.o.overwriteChanged) {
        placement.replace = true;
      } else if (wroteHere) {
        placement.conflict = `changed here since ferry wrote it (${describeLocal(st)}; ferry wrote ${ours.size} bytes dated ${new Date(ours.mtimeMs).toISOString()}); it was kept and the project's version not written (overwrite-changed replaces it)`;
      } else {
        placement.conflict = st.isFile()
          ? `a local file ferry did not write (or that changed since) is in the way (${st.size} bytes, modified ${new Date(st.mtimeMs).toISOString()}; the document: ${entry.size} bytes of ${new Date(entry.mtimeMs).toISOString()}); it was kept`
          : 'a local folder or other entry is in the way; it was kept';
      }
    }
    return placement;
  }

  /**
   * Whether a file of the entry's size and time at its path is the entry's (a run stopped after
   * the rename wrote it), not the version before it: one ferry wrote for another document of the
   * same size within the service's time resolution looks the same. So the store's record decides
   * where it names another document; where it names none (a fresh store), the file is read once
   * and compared with the sha256 the document carries, when it carries one.
   */
  private async holdsThis(entry: Pick<FileEntry, 'marker' | 'expectedSha256'>, known: ItemFingerprint | undefined, path: string): Promise<boolean> {
    if (entry.marker !== undefined && known?.state === 'uploaded' && known.sha256 && known.sha256 !== entry.marker) return false;
    if (known?.state === 'uploaded' || !entry.expectedSha256 || this.o.ignoreChecksum) return true;
    return (await sha256Of(createReadStream(path)).catch(() => undefined)) === entry.expectedSha256;
  }

  async write(entry: FileEntry, placement: LocalPlacement, ctx?: Pick<WriteContext, 'slot' | 'cancel'>): Promise<{ remoteId: string; found?: boolean }> {
    if (placement.conflict) throw new LocalConflictError(`conflict: ${placement.conflict}`);
    if (placement.landed) return { remoteId: written(placement.local, entry.size, entry.mtimeMs), found: true };
    const dir = dirname(join(this.o.root, placement.local));
    await this.readyFolder(dir);
    // The backup's folder made first, never through a link (as the pulled folder's are).
    if (placement.replace && this.o.backupDir) {
      await mkdir(this.o.backupDir, { recursive: true });
      await makeFolderInside(this.o.backupDir, dirname(join(this.o.backupDir, placement.local)));
    }
    const done = await verifiedTwice(
      (fresh) => this.writeOnce(entry, placement, dir, new ContentCheck(entry.key, this.o.ignoreChecksum ? undefined : entry.expectedSha256), fresh, ctx),
      (err) => this.o.logger?.warn({ key: entry.key }, `the content did not match its sha256 (the document says ${err.expected}; received ${err.received.join(', ')}): downloaded once more from the start`),
    );
    if (!this.o.ignoreChecksum) this.checks.count(entry);
    return done;
  }

  /** One attempt at the entry's bytes, checked against `check` before they take its name; `fresh`: never continued from kept bytes. */
  private async writeOnce(entry: FileEntry, placement: LocalPlacement, dir: string, check: ContentCheck, fresh: boolean, ctx?: Pick<WriteContext, 'slot' | 'cancel'>): Promise<{ remoteId: string }> {
    if (entry.openFrom && entry.size >= RESUMABLE_MIN) return this.writeResumable(entry, placement, dir, check, fresh, ctx);
    const temp = join(dir, partialName(this.o.jobKey));
    if (entry.size <= SYNC_WRITE_MAX) return this.writeSmall(entry, placement, temp, check, ctx?.slot);
    const body = entry.openAsync ? await entry.openAsync(ctx?.slot) : entry.open();
    try {
      return await this.writeBody(entry, placement, { path: temp, flags: 'wx', from: 0 }, body, check, ctx?.cancel);
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
  }

  /**
   * A large file from a source that can send part of its content: the bytes an earlier attempt
   * kept are continued from when the source sends exactly the rest of the same version of the same
   * document (partials.ts); otherwise the file starts over. A failed attempt keeps its bytes, unless
   * they are not the document's (a wrong size, a sha256 that does not match). The kept bytes are
   * hashed first, so the file is checked whole: a partial stitched onto other bytes is caught.
   */
  private async writeResumable(entry: FileEntry, placement: LocalPlacement, dir: string, check: ContentCheck, fresh: boolean, ctx?: Pick<WriteContext, 'slot' | 'cancel'>): Promise<{ remoteId: string }> {
    const openFrom = entry.openFrom as NonNullable<FileEntry['openFrom']>;
    const id: ResumeIdentity = { key: entry.key, marker: entry.marker ?? '', size: entry.size };
    const kept = await keptPartial(dir, this.o.jobKey, id);
    let got = await openFrom(kept && !fresh && kept.size < entry.size ? kept.size : 0, ctx?.slot);
    if (kept && got.from > 0 && !kept.sameVersion(got.version ?? '')) {
      // The same document, other bytes: its content was replaced under it. Never stitched.
      this.o.logger?.warn({ key: entry.key }, 'the content changed since its first bytes were kept (another ETag): downloaded whole');
      got.body.on('error', () => undefined).destroy();
      got = await openFrom(0, ctx?.slot);
    }
    if (kept && got.from === 0) await rm(kept.path, { force: true });
    const temp = got.from > 0 ? (kept as { path: string }).path : join(dir, resumableName(this.o.jobKey, id, got.version ?? ''));
    try {
      // Starting over: what stands at the name (a leftover of this document's, kept whole) makes way.
      if (got.from === 0) await rm(temp, { force: true });
      if (got.from > 0 && check.verifiable) await hashKept(temp, got.from, check);
      return await this.writeBody(entry, placement, { path: temp, flags: got.from > 0 ? 'a' : 'wx', from: got.from }, got.body, check, ctx?.cancel, got.drain);
    } catch (err) {
      // Bytes that are not the document's are never continued from.
      if (err instanceof WrongSizeError || err instanceof ContentMismatchError) await rm(temp, { force: true });
      throw err;
    }
  }

  /**
   * The body written after the `from` bytes already at `file.path`, dated, and renamed into place.
   * One descriptor for the bytes and the time (no second lookup of the path), closed here. A plain
   * descriptor, not a FileHandle: measured on 10,000 files of 4 KiB, the handle's bookkeeping made
   * the same five system calls 25 % slower.
   */
  private async writeBody(entry: FileEntry, placement: LocalPlacement, file: { path: string; flags: string; from: number }, body: Readable, check: ContentCheck, cancel: AbortSignal | undefined, drain?: PartialContent['drain']): Promise<{ remoteId: string }> {
    let fd: number | undefined;
    try {
      // Through the one owner of files ferry keeps: a link at the name is refused, never followed.
      fd = file.flags === 'a' ? openOwn(file.path, 'append') : createNew(file.path);
      let bytes = file.from;
      try {
        const seen = check.verifiable ? (chunk: Buffer) => check.update(chunk) : undefined;
        bytes += drain ? await writeDrained(fd, drain, cancel, seen) : await writeFlowing(fd, body, cancel, seen);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOSPC') throw this.diskFull(entry, fd);
        throw err;
      } finally {
        body.destroy();
      }
      if (bytes !== entry.size) throw new WrongSizeError(`the content of ${entry.key} was ${bytes} bytes, not the ${entry.size} its source said`);
      check.verify();
      // The time first, the name last: a file under its final name is whole and dated.
      const time = new Date(entry.mtimeMs);
      await futimesAsync(fd, time, time);
      const closing = fd;
      fd = undefined;
      await closeAsync(closing);
      return { remoteId: written(this.moveIntoPlace(file.path, placement, entry.key), entry.size, entry.mtimeMs) };
    } finally {
      if (fd !== undefined) await closeAsync(fd).catch(() => undefined);
    }
  }

  /** The disk is full: every other file would fail alike, so the run stops, saying what this one still needs. */
  private diskFull(entry: FileEntry, fd: number): DiskFullError {
    let have = 0;
    try {
      have = fstatSync(fd).size;
    } catch {
      // The count is advice; the refusal stands without it.
    }
    const need = Math.max(entry.size - have, 0);
    return new DiskFullError(`the disk holding ${this.o.root} is full (ENOSPC): ${entry.key} still needs ${need} bytes (${have} of its ${entry.size} are written${entry.openFrom && entry.size >= RESUMABLE_MIN ? ', kept for the next run to continue from' : ''}); free space there and run again`);
  }

  /**
   * A small file: its bytes are read from the network first (at most SYNC_WRITE_MAX of them, so
   * memory stays bounded), then written, dated and renamed with synchronous calls, the same steps
   * as a large file's. Measured on 10,000 files of 4 KiB: five thread-pool round trips per file
   * made the pull 0.89 of a bare download loop; these five calls on the main thread, 1.19.
   */
  private async writeSmall(entry: FileEntry, placement: LocalPlacement, temp: string, check: ContentCheck, slot: Slot | undefined): Promise<{ remoteId: string }> {
    const body = entry.openAsync ? await entry.openAsync(slot) : entry.open();
    const chunks: Buffer[] = [];
    let bytes = 0;
    try {
      for await (const chunk of body as AsyncIterable<Buffer>) {
        bytes += chunk.length;
        if (bytes > entry.size) break;
        chunks.push(chunk);
      }
    } finally {
      body.destroy();
    }
    if (bytes !== entry.size) {
      const was = bytes > entry.size ? `more than ${entry.size}` : String(bytes);
      throw new FerryError(`the content of ${entry.key} was ${was} bytes, not the ${entry.size} its source said`);
    }
    for (const chunk of chunks) check.update(chunk);
    check.verify();
    let fd: number | undefined;
    try {
      fd = createNew(temp);
      const content = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      for (let done = 0; done < content.length; ) done += writeSync(fd, content, done, content.length - done);
      // The time first, the name last: a file under its final name is whole and dated.
      const time = new Date(entry.mtimeMs);
      futimesSync(fd, time, time);
      const closing = fd;
      fd = undefined;
      closeSync(closing);
      return { remoteId: written(this.moveIntoPlace(temp, placement, entry.key), entry.size, entry.mtimeMs) };
    } catch (err) {
      if (fd !== undefined) closeSync(fd);
      rmSync(temp, { force: true });
      throw err;
    }
  }

  /** Creates the folder, or clears it of a killed run's temporary files; true when it is new. */
  private readyFolder(dir: string): Promise<boolean> {
    if (this.o.dryRun) return Promise.resolve(false);
    let ready = this.ready.get(dir);
    if (!ready) {
      ready = makeFolderInside(this.o.root, dir).then(async (created) => {
        if (created) return true;
        await removePartials(dir, this.o.jobKey);
        return false;
      });
      this.ready.set(dir, ready);
    }
    return ready;
  }

  /**
   * The last step of a write: the whole, dated temporary file renamed to its name (a changed local
   * file moved aside first, under overwrite-changed and a backup folder). A name the file system
   * refuses although the rules allowed it is mapped with the strict rules and tried once more.
   * Returns the path the file has.
   */
  private moveIntoPlace(temp: string, placement: LocalPlacement, key: string): string {
    let local = placement.local;
    if (placement.replace) this.replace(key, local);
    try {
      renameSync(temp, join(this.o.root, local));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      const byName = NAME_REJECTIONS.has(code ?? '') || (code === 'ENOENT' && existsSync(temp));
      if (!byName || this.namer.isStrict(key)) {
        if (byName) throw new LocalConflictError(`refused: the file system did not take the name "${visible(local)}" (${explainRejection(code)}), even with every character Windows or a share might refuse written in FULLWIDTH`);
        throw err;
      }
      const refused = local;
      this.namer.strict(key);
      const strict = this.namer.map(key);
      local = strict.local;
      if (lstatSync(join(this.o.root, local), { throwIfNoEntry: false })) throw new LocalConflictError(`conflict: the file system refused "${visible(refused)}" (${explainRejection(code)}), and something is in the way at its strict form "${visible(local)}"; it was kept`);
      try {
        renameSync(temp, join(this.o.root, local));
      } catch (again) {
        const code2 = (again as NodeJS.ErrnoException).code;
        throw new LocalConflictError(`refused: the file system did not take the name "${visible(refused)}" (${explainRejection(code)}), nor "${visible(local)}" (${explainRejection(code2)})`);
      }
      this.noteRename(key, local, strict.why ?? `the file system refused it (${explainRejection(code)})`, true);
    }
    this.names?.note(local, key);
    return local;
  }

  /** A local file ferry wrote and someone changed, replaced under overwrite-changed: moved to the backup folder first, when there is one. */
  private replace(key: string, local: string): void {
    const entry = { key, local } as { key: string; local: string; backup?: string };
    if (this.o.backupDir) {
      // Its folder was made by write(), without a link on the way. Anything at the name (a link
      // too, never followed) keeps its place: the backup takes the time as well.
      let backup = join(this.o.backupDir, local);
      if (lstatSync(backup, { throwIfNoEntry: false })) backup = `${backup}.${new Date().toISOString().replace(/[:.]/g, '-')}`;
      try {
        renameSync(join(this.o.root, local), backup);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
        // Another file system: copied to a new file (never through a link), then removed (never before the copy is whole).
        copyFileSync(join(this.o.root, local), backup, constants.COPYFILE_EXCL);
        rmSync(join(this.o.root, local));
      }
      entry.backup = backup;
    }
    this.replacedCount++;
    if (this.replaced.length < LISTED) this.replaced.push(entry);
  }

  report(): Record<string, unknown> {
    return {
      renamed: this.renamed,
      renamedCount: this.renamedCount,
      caseInsensitive: this.used.caseInsensitive,
      localNames: this.used,
      ...(this.foldersRefused.length ? { foldersRefused: this.foldersRefused } : {}),
      ...(this.replacedCount ? { replacedLocally: { count: this.replacedCount, files: this.replaced } } : {}),
      ...this.checks.report(),
    };
  }

  /** Closes the record of names (the job calls it when the run ends). */
  close(): void {
    this.names?.close();
  }

  private noteRename(key: string, local: string, why: string, again = false): void {
    const known = this.renamed.find((r) => r.key === key);
    if (known) {
      if (again) Object.assign(known, { local, why });
      return;
    }
    this.renamedCount++;
    if (this.renamed.length < LISTED) this.renamed.push({ key, local, why });
  }

  private sameTime(statMs: number, wantedMs: number): boolean {
    return sameTime(statMs, wantedMs, this.used.timeStepMs);
  }
}

/** The first `from` bytes of a kept partial, hashed into `check` before the rest is appended. */
async function hashKept(path: string, from: number, check: ContentCheck): Promise<void> {
  for await (const chunk of createReadStream(path, { start: 0, end: from - 1, highWaterMark: 1 << 20 })) check.update(chunk as Buffer);
}

function describeLocal(st: { size: number; mtimeMs: number }): string {
  return `now ${st.size} bytes, modified ${new Date(st.mtimeMs).toISOString()}`;
}

/** The name rule of a segment under posix rules (what a pull on ext4 or APFS writes; the test's short form). */
export function mapSegment(segment: string): { name: string; why?: string } {
  return new LocalNamer('posix', false).segment(segment, segment);
}

/**
 * File times go through seconds as a float (utimes): a millisecond time may come back a hair off;
 * a file system that keeps coarser times (exFAT 10 ms, FAT 2 s) is compared at its own step, so
 * that an untouched file never reads as changed.
 */
function sameTime(statMs: number, wantedMs: number, stepMs: number): boolean {
  return Math.abs(statMs - wantedMs) < stepMs;
}

/** What ferry wrote at a path, as the checkpoint records it (the item's remote id). */
function written(local: string, size: number, mtimeMs: number): string {
  return JSON.stringify({ local, size, mtimeMs });
}

function parseWritten(remoteId: string | null | undefined): { local: string; size: number; mtimeMs: number } | undefined {
  if (!remoteId?.startsWith('{')) return undefined;
  try {
    return JSON.parse(remoteId) as { local: string; size: number; mtimeMs: number };
  } catch {
    return undefined;
  }
}

/**
 * Makes `dir` exist below `root` without ever going through a symbolic link: each component under
 * the root is looked at (lstat) and made when missing, one at a time. A link or a file in the way
 * refuses the folder (every document for it is a failed item with this reason): a pull writes only
 * beneath its destination. The root itself is the user's to choose, link or not. True when the
 * last component was made by this call.
 */
async function makeFolderInside(root: string, dir: string): Promise<boolean> {
  const rel = relative(root, dir);
  if (rel === '') return false;
  if (rel.startsWith('..') || isAbsolute(rel)) throw new LocalConflictError(`refused: ${dir} is not inside ${root}`);
  let path = root;
  let created = false;
  for (const [i, part] of rel.split(sep).entries()) {
    path = join(path, part);
    const st = await lstat(path).catch((err: NodeJS.ErrnoException) => {
      // A name the file system cannot even look up is not there: mkdir says why.
      if (err.code === 'ENOENT' || NAME_REJECTIONS.has(err.code ?? '')) return undefined;
      throw err;
    });
    if (!st) {
      await mkdir(path).catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'EEXIST') return;
        // Its parent is there (made or looked at just before): ENOENT too is the name refused.
        if (NAME_REJECTIONS.has(err.code ?? '') || err.code === 'ENOENT') throw new NameRejected(i, err.code, relative(root, path));
        throw new LocalConflictError(`refused: the folder ${visible(relative(root, path))} cannot be made (${err.code ?? err.message})`);
      });
      created = true;
      // Made by another writer at the same moment: look again, it must be a folder.
      const again = await lstat(path);
      if (!again.isDirectory() || again.isSymbolicLink()) throw new LocalConflictError(`refused: ${visible(relative(root, path))} became something other than a folder while it was made`);
      continue;
    }
    created = false;
    if (st.isSymbolicLink()) throw new LocalConflictError(`refused: a symbolic link is in the way at ${visible(relative(root, path))}; ferry never writes through a link (remove it, or pull elsewhere)`);
    if (!st.isDirectory()) throw new LocalConflictError(`refused: a local file is in the way at ${visible(relative(root, path))} where a folder must be; it was kept`);
  }
  return created;
}

/** EROFS or EACCES when the nearest existing folder at or above `path` cannot be written, else undefined. */
async function writableCode(path: string): Promise<string | undefined> {
  for (let dir = path; ; dir = dirname(dir)) {
    const st = await lstat(dir).catch(() => undefined);
    if (st?.isDirectory()) {
      return access(dir, constants.W_OK).then(
        () => undefined,
        (err: NodeJS.ErrnoException) => (err.code === 'EROFS' || err.code === 'EACCES' ? err.code : undefined),
      );
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/** Whether `dir` is a folder below `root` reached without any symbolic link (nothing is made). */
async function plainFolderInside(root: string, dir: string): Promise<boolean> {
  const rel = relative(root, dir);
  if (rel.startsWith('..') || isAbsolute(rel)) return false;
  let path = root;
  for (const part of rel === '' ? [] : rel.split(sep)) {
    path = join(path, part);
    const st = await lstat(path).catch(() => undefined);
    if (!st || st.isSymbolicLink() || !st.isDirectory()) return false;
  }
  return true;
}

