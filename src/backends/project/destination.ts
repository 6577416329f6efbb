// A project's documents as a destination: entries become documents in the folder tree (created
// through the folder extension, flattened into the nearest folder where it is missing), each
// upload settled by its batch id, name, folder and size after an unclear failure or a crash.
import { posix } from 'node:path';
import type { Readable } from 'node:stream';
import type { FerryClient } from '../../api/client.js';
import type { CoordinateExtractionStrategy, OCREngine, OCRStrategy } from '../../api/types.js';
import { SourceChangedError, SourceGoneError, type EntryAttributes, type FileEntry } from '../../sync/types.js';
import type { CheckpointStore, ItemFingerprint, ItemRecord } from '../../store/types.js';
import type { Adoptable, AdoptedCopy, Destination, WriteContext } from '../../sync/engine.js';
import { UNKNOWN_MTIME } from '../../sync/decide.js';
import { judgePresent, type PresentDocument } from '../../sync/judge.js';
import { fingerprintEntry } from '../fingerprint.js';
import { ContentChangedError, MEASURING_DIGEST, SourceReadError, type FileInput } from '../../api/multipart.js';
import { spool } from './spool.js';
import { CheckCounts, ContentMismatchError, verifiedTwice } from '../content-check.js';
import { ProjectSource, attributesOf, requireProject } from './source.js';
import { identityMetadata, readIdentity } from './identity.js';
import { RemoteFolders, joinPath, type Placement } from './folders.js';
import { BatchIndex, LandedLookups, RELATIVE_PATH_KEY, fileName } from './landed.js';
import { PresentDocuments, markReader } from './present.js';
import { listedAfter, listedInstant, type Listed } from '../../api/listed.js';
import { waitOutsideSlot } from '../../slots.js';

/**
 * Files from this size on are hashed as they are sent, where the service allows it (hashWhileSending):
 * below it, the read before the upload comes from the page cache and costs less than a second
 * form layout is worth.
 */
const HASH_WHILE_SENDING_MIN = 8 * 1024 * 1024;

export interface ProjectDestinationOptions {
  client: FerryClient;
  store: CheckpointStore;
  project: string;
  jobKey: string;
  /** Folder path under the project root, `/`-separated ('' for the root). */
  base: string;
  ocrEngine?: OCREngine | undefined;
  ocrStrategy?: OCRStrategy | undefined;
  coordinateExtractionStrategy?: CoordinateExtractionStrategy | undefined;
  /** Extra key/value metadata on every document. */
  metadata?: Record<string, string> | undefined;
  /** Plan only: folders are looked up, never created. */
  dryRun?: boolean | undefined;
  /**
   * What the job's change marker is, as a cold start reads it back from a document: the content's
   * sha256 (a folder or zip), or the id of the document it was copied from (a migration).
   */
  markers?: 'content' | 'origin' | undefined;
  /**
   * Before a write on a warm run, find the entry already at its path with its content (uploaded by
   * another store since): default true. False where the run's batch must hold every file it counts.
   */
  findPresent?: boolean | undefined;
  /**
   * The project was made by this run a moment ago, under the run's lease (a migration's new
   * target): it is known to exist and to be empty, so it is neither looked up nor listed.
   */
  madeByThisRun?: boolean | undefined;
  /** A cold start reads what each document carries (a manifest compares it): more memory per page, so only when asked. */
  inventoryAttributes?: boolean | undefined;
  /**
   * The identity of what a document found at a key carries (TransferOptions.adoptedAttributes: the
   * manifest's), compared with the entry's when a warm run finds a document holding its content.
   */
  identityOf?: ((key: string, attributes: EntryAttributes | undefined) => string | null) | undefined;
  /**
   * Proof that listings show every earlier run's writes (the run's lease, or the bound waited):
   * a cold start, a warm look into a folder and finding a folder read absence from them.
   */
  listed: Listed;
}

export class ProjectDestination implements Destination<Placement> {
  readonly description: string;
  readonly folders: RemoteFolders;
  private readonly landed: LandedLookups;
  private readonly present: PresentDocuments;
  /** This run listed the whole destination (a cold start, --resync): what it holds is known. */
  private listedWhole = false;
  /** Content from a service (a migration) received and sent: checked against its sha256, or not checkable. */
  private readonly checks = new CheckCounts(1_000);

  constructor(private readonly o: ProjectDestinationOptions) {
    this.description = `project ${o.project}${o.base ? `/${o.base}` : ''}`;
    this.folders = new RemoteFolders(o.client, o.project, o.store, o.jobKey, o.base, o.dryRun === true);
    this.landed = new LandedLookups(o.client, o.project);
    const identityOf = o.identityOf;
    // A document's key under the base, from its logical path (`/base/key`).
    const keyOf = (path: string) => path.slice(o.base ? o.base.length + 2 : 1);
    this.present = new PresentDocuments(o.client, o.project, markReader(o.markers ?? 'content'), o.listed, identityOf ? (path, doc) => identityOf(keyOf(path), attributesOf(doc, o.project)) : undefined);
    if (o.madeByThisRun) this.folders.startEmpty();
  }

  async prepare(): Promise<void> {
    if (this.o.madeByThisRun) return;
    await requireProject(this.o.client, this.o.project, 'used');
  }

  async settle(inFlight: ItemRecord[]): Promise<Map<string, { remoteId: string }>> {
    const landed = new Map<string, { remoteId: string }>();
    const indexes = new Map<string, BatchIndex>();
    for (const item of inFlight) {
      if (!item.uploadId) continue;
      let index = indexes.get(item.uploadId);
      if (!index) {
        index = await BatchIndex.load(this.o.client, this.o.project, item.uploadId);
        indexes.set(item.uploadId, index);
      }
      const wanted = { name: posix.basename(item.sourceKey), parentId: item.parentId, size: item.size, notId: item.remoteId };
      const doc = index.claim({ ...wanted, relativePath: undefined }) ?? index.claim({ ...wanted, relativePath: joinPath(this.o.base, item.sourceKey) });
      if (doc?.objectIdentifier) landed.set(item.sourceKey, { remoteId: doc.objectIdentifier });
    }
    return landed;
  }

  ensureFolder(key: string): Promise<void> {
    return this.folders.ensure(key);
  }

  /**
   * The document an item became, found in its folder by its name (`searchText`): one page read, no
   * walk of a large folder. Undefined when the search does not give it (a service whose search
   * matches names otherwise): the dry run then names no keys.
   */
  async carried(entry: FileEntry, known: ItemFingerprint): Promise<EntryAttributes | undefined> {
    if (!known.remoteId) return undefined;
    const { parentId } = await this.folders.place(entry.key);
    const query = { searchText: posix.basename(entry.key), hidePackagedFiles: false, ...(parentId ? { parentObjectIdentifier: parentId } : {}) };
    for await (const doc of this.o.client.documents.list(this.o.project, query)) {
      if (doc.objectIdentifier === known.remoteId) return attributesOf(doc, this.o.project);
    }
    return undefined;
  }

  place(entry: Pick<FileEntry, 'key'>): Promise<Placement> {
    return this.folders.place(entry.key);
  }

  async write(entry: FileEntry, placement: Placement, ctx: WriteContext): Promise<{ remoteId: string; sha256: string | undefined; found?: boolean }> {
    try {
      // Content from a service that names its sha256 (a migration) is checked as it is sent, and
      // sent once more from the start when it did not match (content-check.ts).
      const done = await verifiedTwice(
        () => this.upload(entry, placement, ctx),
        (err) => this.o.client.transport.logger.warn({ key: entry.key }, `the content sent did not match the source's sha256 (${err.expected}; sent ${err.received.join(', ')}); sent once more from the start`),
      );
      if (entry.openAsync && !done.found) this.checks.count(entry);
      return done;
    } catch (err) {
      throw sourceSide(err);
    }
  }

  private async upload(entry: FileEntry, placement: Placement, ctx: WriteContext): Promise<{ remoteId: string; sha256: string | undefined; found?: boolean }> {
    const { client, project } = this.o;
    const flattenedPath = placement.flattenedPath;
    const name = fileName(entry.key);
    // What the entry carries (a document migrated from elsewhere) goes over the job's defaults.
    const a = entry.attributes ?? {};
    // Content read from a request (a migration) is not fetched twice for a fingerprint: the
    // document it came from names it instead. A large file is hashed as it is sent, where the
    // service reads fields after the file and nothing at its path needs its content compared.
    const whileSending = await this.hashWhileSending(entry, placement);
    // What the source says its bytes are (a migrated document's ferry.sha256), compared with them
    // before the upload completes: as they are sent, where the service reads fields after the
    // file (the body stops short on a mismatch); from a spool before sending, where it reads them
    // first (spool.ts). Either way the document says the sha256 of the bytes it holds.
    const fromService = entry.openAsync !== undefined && entry.path === undefined;
    const expected = fromService ? entry.expectedSha256 : undefined;
    const afterFile = fromService && client.transport.formOrder === 'any';
    const sha256 = entry.sha256 ?? (entry.openAsync || whileSending ? (fromService && !afterFile ? expected : undefined) : await fingerprint(entry));
    const identityOf = (sha: string | undefined) => identityMetadata({ path: joinPath(this.o.base, entry.key), size: entry.size, sha256: sha, mtimeMs: entry.mtimeMs, source: a.origin, sourceProject: a.originProject, attrs: entry.attributesDigest });
    const identity = identityOf(sha256);
    // A warm store does not know what another store uploaded since: the newest document at the
    // path, when it holds this content, may be the entry's (judge.ts, judgePresent).
    const mark = this.o.markers === 'origin' ? a.origin : sha256;
    if (mark) {
      const there = await this.presentFor(entry, placement, mark);
      if (judgePresent(entry, there, ctx.previous, ctx.claimed) === 'taken') return { remoteId: there!.remoteId, sha256, found: true };
    }
    const wanted = { name, parentId: placement.parentId, size: entry.size, relativePath: flattenedPath, notId: ctx.previous };
    // An earlier attempt failed and may have landed: the transport's own look after it failed too
    // (its listing refused), and after a whole listing (a cold start) `present` is not asked. So
    // the batch is looked at here, in a listing begun the bound after that failure.
    if (ctx.failedAt !== undefined) {
      const lag = this.o.client.transport.listingLag;
      // The wait needs no worker: the slot goes to another item meanwhile.
      await waitOutsideSlot(ctx.slot, () => listedAfter(lag, ctx.failedAt!));
      const there = await this.landed.find(ctx.uploadId, wanted, ctx.claimed, listedInstant(lag, ctx.failedAt));
      if (there?.objectIdentifier) return { remoteId: there.objectIdentifier, sha256: sha256 ?? readIdentity(there.metadata)?.sha256, found: true };
    }
    const metadataWith = (id: Record<string, string>) => ({ ...this.o.metadata, ...a.metadata, ...id, ...(flattenedPath ? { [RELATIVE_PATH_KEY]: flattenedPath } : {}) });
    const metadata = metadataWith(identity);
    // The sha256 the last attempt sent after the file, once it got that far.
    let sent: string | undefined;
    const ocrEngine = (a.ocrEngine as OCREngine | undefined) ?? this.o.ocrEngine;
    const ocrStrategy = (a.ocrStrategy as OCRStrategy | undefined) ?? this.o.ocrStrategy;
    const coordinateExtractionStrategy = (a.coordinateExtractionStrategy as CoordinateExtractionStrategy | undefined) ?? this.o.coordinateExtractionStrategy;
    const spooled = fromService && !afterFile ? await spool(await (entry.openAsync as NonNullable<FileEntry['openAsync']>)(ctx.slot), entry.size, entry.key, expected, a.contentType) : undefined;
    // A source that names no sha256: the document says the one its bytes have all the same.
    if (spooled && sha256 === undefined) Object.assign(metadata, identityMetadata({ sha256: spooled.sha256 }));
    try {
      const file: FileInput = spooled
        ? spooled.file
        : entry.path
          ? { path: entry.path, size: entry.size, filename: name }
          : entry.openAsync
            ? // Content that arrives by request: asked for first, so that a source that fails never starts an upload.
              { stream: await entry.openAsync(ctx.slot), size: entry.size, filename: name, ...(a.contentType ? { contentType: a.contentType } : {}) }
            : { open: () => entry.open() as Readable, size: entry.size, filename: name, ...(a.contentType ? { contentType: a.contentType } : {}) };
      const upload = client.documents.upload(
        project,
        file,
        {
          documentUploadIdentifier: ctx.uploadId,
          ...(placement.parentId ? { parentObjectIdentifier: placement.parentId } : {}),
          source: 'local',
          ...(ocrEngine ? { ocrEngine } : {}),
          ...(ocrStrategy ? { ocrStrategy } : {}),
          ...(coordinateExtractionStrategy ? { coordinateExtractionStrategy } : {}),
          ...(whileSending || afterFile
            ? {
                metadataAfterFile: (sha: string) => {
                  // Bytes that are not the source's never complete an upload: the body stops here.
                  if (afterFile && expected !== undefined && sha !== MEASURING_DIGEST && sha !== expected) throw new ContentMismatchError(entry.key, expected, [sha]);
                  sent = sha;
                  return metadataWith(identityOf(sha));
                },
              }
            : Object.keys(metadata).length
              ? { metadata }
              : {}),
        },
        // Not aborted on SIGINT/SIGTERM: an upload on the wire is let finish and recorded; only no
        // new attempt starts and no retry is waited for (the intent settles it on the next run).
        // A hard cutoff (`cancel`) abandons it on the wire: the next run settles it the same way.
        { didItLand: (since) => this.landed.find(ctx.uploadId, wanted, ctx.claimed, since), ...(ctx.slot ? { slot: ctx.slot } : {}), ...(ctx.stopping ? { stopBeforeSend: ctx.stopping } : {}), ...(ctx.cancel ? { signal: ctx.cancel } : {}), ...(ctx.gate ? { beforeSend: ctx.gate } : {}), ...(ctx.fence ? { fence: ctx.fence } : {}) },
      );
      // A content response the upload did not read to the end is closed, not left holding a connection.
      const doc = await upload.catch((err: unknown) => {
        if ('stream' in file) file.stream.destroy();
        throw err;
      });
      // The service's reading of a form's file name is not shown: a name it stored otherwise is said.
      const storedAs = typeof doc.name === 'string' && doc.name !== name ? doc.name : undefined;
      // Hashed while sent: what the document says it holds; failing that, what the last attempt sent
      // (the first call is the length's measure, with no real digest), else the file read again.
      const hashed = whileSending ? (readIdentity(doc.metadata)?.sha256 ?? (sent !== undefined && sent !== MEASURING_DIGEST ? sent : await fingerprint(entry))) : (sha256 ?? spooled?.sha256 ?? sent);
      return { remoteId: doc.objectIdentifier as string, sha256: hashed, ...(storedAs !== undefined ? { storedAs } : {}) };
    } finally {
      await spooled?.dispose();
    }
  }

  /**
   * The newest document at the entry's path holding its content (`mark`: the job's marker of it,
   * read from the entry when not given), with the identity of what it carries (judgePresent
   * decides). Not asked after a whole listing, nor where the run must hold every file in its own batch.
   */
  async presentFor(entry: FileEntry, placement: Placement, mark?: string): Promise<PresentDocument | undefined> {
    if (this.o.findPresent === false || this.listedWhole) return undefined;
    // A folder a dry run would create holds nothing yet, and its stand-in id is no id to list by:
    // the run, on a service that creates no folders, finds the file flattened into the deepest
    // folder that exists, and looks there (a service with folders has nothing of it there).
    if (this.folders.isPlanned(placement.parentId)) placement = { parentId: await this.folders.nearest(posix.dirname(entry.key)) };
    const path = `/${joinPath(this.o.base, entry.key)}`;
    let marker = mark ?? (this.o.markers === 'origin' ? entry.attributes?.origin : entry.sha256);
    if (marker === undefined) {
      // The content is read for its sha256 only where a document stands at the path.
      if (this.o.markers === 'origin' || !(await this.present.holds(placement.parentId, path))) return undefined;
      marker = await fingerprint(entry);
    }
    const there = await this.present.find(placement.parentId, path, marker);
    return there && { remoteId: there.id, attrs: there.attrs };
  }

  /**
   * Whether the entry's sha256 is taken as it is sent rather than read first: a file on disk of
   * HASH_WHILE_SENDING_MIN or more, to a service that reads form fields after the file (its
   * profile's formOrder), in a job marked by content, where no document at its path needs
   * comparing with it first (the folder's picture has none there, or the run listed the project whole).
   */
  private async hashWhileSending(entry: FileEntry, placement: Placement): Promise<boolean> {
    if (entry.sha256 !== undefined || entry.path === undefined || entry.size < HASH_WHILE_SENDING_MIN) return false;
    if (this.o.client.transport.formOrder !== 'any' || this.o.markers === 'origin') return false;
    if (this.o.findPresent === false || this.listedWhole) return true;
    return !(await this.present.holds(placement.parentId, `/${joinPath(this.o.base, entry.key)}`));
  }

  /** The inventory's listing, once begun: its totalCount is what the project says it holds. */
  private listing: ProjectSource | undefined;

  get heldCount(): number | undefined {
    return this.listing?.expectedCount;
  }

  async *inventory(signal: AbortSignal): AsyncIterable<Adoptable | AdoptedCopy> {
    if (this.o.madeByThisRun) {
      this.listedWhole = true;
      return;
    }
    const listing = new ProjectSource(this.o.client, this.o.project, { from: this.o.base });
    this.listing = listing;
    // The folders it holds are learnt from the same listing, so that a cold run lists no parent
    // folder to find them: the newest at each path, as for documents (the folder extension
    // refuses a `/` in a name, so a path is a chain of folders). Kept to the end, one commit.
    const folders = new Map<string, string>();
    const learn = (relDir: string, id: string) => {
      if (!folders.has(relDir)) folders.set(relDir, id);
    };
    for await (const doc of listing.inventory(signal, learn, this.o.inventoryAttributes === true)) {
      if ('older' in doc) continue; // a superseded version: not adopted
      if ('copy' in doc) {
        yield doc;
        continue;
      }
      const id = doc.identity;
      const marker = this.o.markers === 'origin' ? id?.source : id?.sha256;
      yield { key: doc.key, remoteId: doc.remoteId, size: doc.size, mtimeMs: id?.mtimeMs ?? UNKNOWN_MTIME, sha256: marker ?? null, parentId: doc.parentId, ...(doc.attributes ? { attributes: doc.attributes } : {}) };
    }
    this.folders.learn([...folders].map(([relDir, id]) => ({ relDir, id })));
    if (!signal.aborted) this.listedWhole = true;
  }

  report(): Record<string, unknown> {
    return { folders: this.folders.stats, ...this.checks.report() };
  }
}

/** What a file's absence at its open means: gone since the walk saw it (a folder in its place too). */
const REMOVED = new Set(['ENOENT', 'ENOTDIR', 'EISDIR']);

/**
 * A failure of the source's side told to the engine by its mark: a file removed since the walk
 * saw it is gone (skipped, said), one that changed while read is read again by the engine.
 */
function sourceSide(err: unknown): unknown {
  if (err instanceof SourceReadError && REMOVED.has(err.code ?? '')) return new SourceGoneError(`removed during the run: the walk saw it, and it was ${err.code === 'EISDIR' ? 'a folder' : 'gone'} when its upload opened it (${err.code})`);
  if (err instanceof ContentChangedError) return new SourceChangedError(err.message);
  return err;
}

/** sha256 of the content, read once before the upload; unreadable is the item's fault, as in the upload. */
async function fingerprint(entry: FileEntry): Promise<string> {
  try {
    return await fingerprintEntry(entry);
  } catch (err) {
    throw new SourceReadError(entry.path ?? entry.key, err);
  }
}
