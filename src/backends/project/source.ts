// A project's documents as a source: the tree under a folder (or the root), each document an entry
// keyed by its path, its content streamed from its `url`. Documents never change (a changed file
// is a new document), so a document's id is its change marker. A path that holds several
// documents (a file uploaded again) is carried from the newest; a document without a `url` is
// reported with the reason, not pulled. The listing is read once, newest first, and entries flow
// out as it goes; per path one date is kept, as 16 bytes (hashed-keys.ts).
import { PassThrough, type Readable } from 'node:stream';
import { pathFilter, type PathPatterns } from '../../sync/patterns.js';
import type { FerryClient } from '../../api/client.js';
import { AuthenticationError, ConnectionError, NotFoundError, PermissionDeniedError, TimeoutError } from '../../api/errors.js';
import { JobAbortedError } from '../../runner/job.js';
import type { Document } from '../../api/types.js';
import { describeTarget } from '../../api/target.js';
import { hash53, NumberByKey } from '../../hashed-keys.js';
import { checkDecodedName, hasControl } from '../names.js';
import { OWN_METADATA, readIdentity, type Identity } from './identity.js';
import type { Slot } from '../../slots.js';
import { SourceError, SourceGoneError, type EntryAttributes, type PartialContent, type FileEntry, type Source, type SourceEntry } from '../../sync/types.js';
import { refusalOf } from '../../api/refusal.js';

/**
 * The metadata key of a flattened document (a service without folder creation): its path under the
 * project root, `/`-separated, without a leading slash (docs/cli.md, "Folders").
 */
export const RELATIVE_PATH_KEY = 'ferry.relativePath';

/**
 * Where a document belongs: its path, or for one that was flattened into another folder (a service
 * without folder creation) the path kept in ferry.relativePath.
 */
export function logicalPath(doc: Pick<Document, 'path' | 'name' | 'metadata'>): string | undefined {
  const kept = doc.metadata?.find((m) => m.key === RELATIVE_PATH_KEY)?.value;
  if (kept) return `/${kept}`;
  return doc.path ?? (doc.name ? `/${doc.name}` : undefined);
}

/**
 * The project must be there before a job starts. What stops the job is told apart once, for a
 * project read (pull, migrate) or written (mirror, upload): the token or a permission (exit 3, as
 * the error is), an unknown project (the service refused the job: exit 3), an unreachable host
 * (exit 3, naming the host); anything else is a plain refusal of the job.
 */
export async function requireProject(client: FerryClient, project: string, use: 'read' | 'used'): Promise<void> {
  if (takeVerified(client, project)) return;
  try {
    await client.projects.get(project);
  } catch (err) {
    if (err instanceof AuthenticationError || err instanceof PermissionDeniedError) throw err;
    if (err instanceof NotFoundError) throw new JobAbortedError(noSuchProject(client, project, err));
    // Say which host, not which project: the project was never asked about.
    throw unreachable(err) ?? new JobAbortedError(`project ${project} cannot be ${use}: ${(err as Error).message}`);
  }
}

/** A project the service does not know, said with where to look (the lease's check says the same). */
export function noSuchProject(client: FerryClient, project: string, err: NotFoundError): string {
  return `no project ${project} at ${describeTarget(client.target)} (the service answered ${err.status}): \`ferry ls\` lists the projects this client sees`;
}

/**
 * Projects a run's lease found before it was taken (lease-board's checkProject), by client: the
 * run's destination takes the finding once instead of asking again, so the check costs no request.
 * Taken, not kept: a later run asks again.
 */
const verified = new WeakMap<FerryClient, Set<string>>();

export function noteVerified(client: FerryClient, project: string): void {
  let set = verified.get(client);
  if (!set) verified.set(client, (set = new Set()));
  set.add(project);
}

function takeVerified(client: FerryClient, project: string): boolean {
  return verified.get(client)?.delete(project) ?? false;
}

/** A host that cannot be reached, said as the reason the job stopped (exit 3); undefined for other errors. */
export function unreachable(err: unknown): JobAbortedError | undefined {
  if (!(err instanceof ConnectionError || err instanceof TimeoutError)) return undefined;
  return new JobAbortedError(`the service cannot be reached at ${originOf(err.url)}: ${err.message}; check the address (FERRY_BASE_URL or the profile) and the network`);
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

export const SLASH_IN_NAME = 'the document\'s name holds a "/", which no path can carry (it would become folders): rename it on the service';

/** What an upload elsewhere can carry over: content type, processing settings, key/value metadata. */
export function attributesOf(doc: Document, project: string): EntryAttributes {
  const metadata: Record<string, string> = {};
  for (const m of doc.metadata ?? []) if (m.key && !OWN_METADATA.test(m.key)) metadata[m.key] = m.value ?? '';
  return {
    contentType: doc.contentType ?? undefined,
    metadata: Object.keys(metadata).length ? metadata : undefined,
    ocrEngine: doc.ocrEngine ?? undefined,
    ocrStrategy: doc.ocrStrategy ?? undefined,
    coordinateExtractionStrategy: doc.coordinateExtractionStrategy ?? undefined,
    origin: doc.objectIdentifier,
    originProject: project,
  };
}

/**
 * An older document at a path the inventory already gave, with the same content as the newest there
 * (the same `ferry.sha256`, or for a migration the same `ferry.source`): the file was written twice,
 * as two runs with two stores writing at once would. An older document with other content is a
 * version the mirror superseded, which it keeps on purpose: not given.
 */
export interface InventoryCopy {
  key: string;
  remoteId: string;
  copy: true;
}

/**
 * An older document at a path the inventory already gave, with other content than the one just
 * newer there: a version a mirror superseded and keeps on purpose (the service replaces nothing).
 * Given so that a count of the project's documents adds up; adopted by no one.
 */
export interface InventoryOlder {
  key: string;
  remoteId: string;
  older: true;
}

/** A document the listing gave that no path can stand for (a `/` in its name), with why: for those that account for every document. */
export interface InventoryUnpathed {
  key: string;
  unpathed: string;
}

/** A document as a cold start adopts it: where it is, and what it says of itself. */
export interface InventoryItem {
  key: string;
  remoteId: string;
  size: number;
  parentId: string | null;
  /** ferry's keys on the document, undefined when it carries none. */
  identity: Identity | undefined;
  /** False when the service returned no metadata at all for it. */
  hasMetadata: boolean;
  /** Where its content is read from, when it has any. */
  url: string | null;
  /** Why the service's processing refused it (uploadFailedReason), when it did. */
  refused: string | null;
  /** Its metadata (ferry's keys aside) and processing settings, when the inventory was asked for them. */
  attributes?: EntryAttributes;
}

export interface ProjectSourceOptions extends PathPatterns {
  /** Folder path under the project root ('' for the whole project). */
  from?: string | undefined;
  /**
   * Leave out documents whose processing failed (a migration: the target would only fail them
   * again); each is a skipped item with the reason. A pull takes their bytes as they are.
   */
  skipFailed?: boolean | undefined;
  /** Documents asked for per page (default 1,000). */
  pageSize?: number | undefined;
  /**
   * Carry names holding control characters (a pull: the local folder's name rules map or keep
   * them). Left out, they are refused as an upload would refuse them (a migration).
   */
  carryControl?: boolean | undefined;
}

/** A document's fingerprint (ferry.sha256, or ferry.source for a migration) as a 53-bit hash. */
function fingerprintOf(id: Identity | undefined): number {
  const mark = id?.sha256 ?? id?.source;
  // A version uploaded for its metadata alone (a manifest row changed) is no copy of the one before.
  return mark === undefined ? NO_FINGERPRINT : hash53(id?.attrs === undefined ? mark : `${mark}\u0000${id.attrs}`);
}
const NO_FINGERPRINT = -1;

/** Documents asked for per page unless told otherwise: a service that caps pages lower is read on until totalCount. */
const LIST_PAGE_SIZE = 1_000;

/**
 * Pages for a listing whose documents are downloaded while the next pages come (pull, migrate): a
 * page lives for as long as its documents take to carry, and at 1,000 it outlived young-generation
 * collections, its documents piling up as old garbage (a pull of 30,000 documents peaked at
 * 155-203 MiB, three rounds; 137-140 MiB with pages of 200; at a million, 277 -> 244 MiB; a
 * migration of 30,000: 165-207 -> 148-153 MiB, no slower).
 */
export const CARRIED_PAGE_SIZE = 200;

/** The content of an entry an inventory gave: never asked for (an inventory adopts, it does not carry). */
const inventoryOnly = (): never => {
  throw new Error('an inventory entry carries no content');
};

export class ProjectSource implements Source {
  readonly description: string;
  private readonly prefix: string;
  private readonly wanted: (key: string) => boolean;
  private readonly skipFailed: boolean;
  private readonly carryControl: boolean;
  private readonly pageSize: number;
  /** The listing's totalCount once its first page is in: an upper bound (folders and other paths count too). */
  expectedCount: number | undefined;

  constructor(
    private readonly client: FerryClient,
    private readonly project: string,
    opts: ProjectSourceOptions = {},
  ) {
    const from = (opts.from ?? '').split('/').filter((s) => s !== '' && s !== '.').join('/');
    this.prefix = from ? `/${from}/` : '/';
    this.description = `project ${project}${from ? `/${from}` : ''}`;
    this.wanted = pathFilter(opts);
    this.skipFailed = opts.skipFailed === true;
    this.carryControl = opts.carryControl === true;
    this.pageSize = opts.pageSize ?? LIST_PAGE_SIZE;
  }

  async prepare(): Promise<void> {
    await requireProject(this.client, this.project, 'read');
  }

  takes(key: string): boolean {
    return this.wanted(key);
  }

  async *entries(signal?: AbortSignal): AsyncIterable<SourceEntry> {
    for await (const { entry } of this.walk(signal, true)) yield entry;
  }

  /**
   * The newest document at each path under the folder, for a cold start to adopt. A folder that
   * does not exist yet holds nothing (the first run creates it). Folders met are told to
   * `onFolder` (path under the folder, id), so that a cold start need not list them again.
   */
  inventory(signal?: AbortSignal, onFolder?: (key: string, id: string) => void, withAttributes?: boolean): AsyncIterable<InventoryItem | InventoryCopy | InventoryOlder>;
  inventory(signal: AbortSignal | undefined, onFolder: ((key: string, id: string) => void) | undefined, withAttributes: boolean, withUnpathed: true): AsyncIterable<InventoryItem | InventoryCopy | InventoryOlder | InventoryUnpathed>;
  async *inventory(signal?: AbortSignal, onFolder?: (key: string, id: string) => void, withAttributes = false, withUnpathed = false): AsyncIterable<InventoryItem | InventoryCopy | InventoryOlder | InventoryUnpathed> {
    for await (const { entry, doc, copy, older, identity } of this.walk(signal, false)) {
      if (entry.kind === 'dir') {
        if (doc?.objectIdentifier) onFolder?.(entry.key, doc.objectIdentifier);
        continue;
      }
      if (copy && doc) yield { key: entry.key, remoteId: doc.objectIdentifier as string, copy: true };
      else if (older && doc) yield { key: entry.key, remoteId: doc.objectIdentifier as string, older: true };
      // A document the walk refused (not one it skipped: an older version, one with no content).
      else if (withUnpathed && entry.kind === 'problem' && entry.outcome === 'failed') yield { key: entry.key, unpathed: entry.reason };
      if (entry.kind !== 'file' || !doc) continue;
      yield {
        key: entry.key,
        remoteId: doc.objectIdentifier as string,
        size: doc.size ?? 0,
        parentId: doc.parentObjectIdentifier ?? null,
        identity,
        hasMetadata: doc.metadata !== null && doc.metadata !== undefined,
        url: doc.url ?? null,
        refused: refusalOf(doc) ?? null,
        ...(withAttributes ? { attributes: attributesOf(doc, this.project) } : {}),
      };
    }
  }

  private async *walk(signal: AbortSignal | undefined, requireFrom: boolean): AsyncIterable<{ entry: SourceEntry; doc?: Document; copy?: true; older?: true; identity?: Identity | undefined }> {
    // Newest first, so the first document seen at a path is the one to pull and entries flow to
    // the transfer while the listing goes on. Per path only the date of that document is kept
    // (slot 0), and for an inventory a hash of its fingerprint (slot 1), to tell a copy from an
    // older version; sized once from the listing's totalCount.
    const fingerprinted = !requireFrom;
    const seenPaths = new NumberByKey(fingerprinted ? 2 : 1);
    let reserved = false;
    let sawFrom = this.prefix === '/';
    // A project that shrinks while it is listed moves documents up past the walk, unread: it is
    // listed a second time for paths the first did not meet. (One that grows moves them down onto
    // the next page, where the listing knows them again: see PagedList's identify.)
    for (let pass = 1; pass <= 2; pass++) {
      const list = this.client.documents.list(
        this.project,
        { flattenList: true, includePath: true, hidePackagedFiles: false, sorting: 'dateAdded', desc: true },
        // An inventory adopts each document and moves on: the next pages are asked for at once.
        { pageSize: this.pageSize, identify: (d: Document) => d.objectIdentifier ?? undefined, eager: fingerprinted, ...(signal ? { signal } : {}) },
      );
      for await (const doc of list) {
        if (signal?.aborted) return;
        if (!reserved && list.total !== undefined) {
          seenPaths.reserve(list.total);
          this.expectedCount = list.total;
          reserved = true;
        }
        // A document flattened by a service without folders says where it belongs.
        const path = logicalPath(doc);
        if (!path) continue;
        if (!path.startsWith(this.prefix)) {
          if (`${path}/` === this.prefix) sawFrom = true;
          continue;
        }
        sawFrom = true;
        const key = path.slice(this.prefix.length);
        // The second pass is for files the first did not meet: all else was said the first time
        // (a document that cannot be carried is said then, or not at all: never twice).
        const unsaid = pass === 1;
        if (!unsaid && (doc.isDirectory || seenPaths.get(key) !== undefined)) continue;
        if (doc.isDirectory) {
          if (this.wanted(`${key}/`) || this.wanted(key)) yield { entry: { kind: 'dir', key }, doc };
          continue;
        }
        if (!this.wanted(key)) continue;
        // A `/` inside a name would become folders on the other side (`a//b.txt` landing beside
        // `a/b.txt`): no path can carry it, so it is refused, said, never split.
        if (doc.name?.includes('/') || key === '' || key.startsWith('/') || key.endsWith('/') || key.includes('//')) {
          if (unsaid) yield { entry: { kind: 'problem', key, outcome: 'failed', reason: SLASH_IN_NAME } };
          continue;
        }
        // Segment by segment only for a path that breaks the rule somewhere: not a split and a
        // verdict per segment for each of a listing's documents, when nearly none breaks it.
        if (!this.carryControl && hasControl(key)) {
          const verdicts = key.split('/').map(checkDecodedName);
          const bad = verdicts.find((v) => !v.ok);
          if (bad && !bad.ok) {
            if (unsaid) yield { entry: { kind: 'problem', key: verdicts.map((v) => (v.ok ? v.name : v.key)).join('/'), outcome: 'failed', reason: bad.reason } };
            continue;
          }
        }
        // A document whose processing failed still holds the bytes that were uploaded; one without
        // a url (a failed-upload record) has nothing to pull.
        if (!doc.url) {
          if (unsaid) yield { entry: { kind: 'problem', key, outcome: 'skipped', reason: `no content: the document carries no url${doc.uploadFailedReason ? ` (its upload failed: ${doc.uploadFailedReason})` : ''}` }, doc };
          continue;
        }
        if (this.skipFailed && doc.uploadFailedReason) {
          if (unsaid) yield { entry: { kind: 'problem', key, outcome: 'skipped', reason: `its processing failed at the source (${doc.uploadFailedReason}): not carried` } };
          continue;
        }
        const added = Date.parse(doc.dateAdded ?? '') || 0;
        const seen = seenPaths.get(key);
        // A service that did not sort newest first shows a newer document later: it is pulled too,
        // and replaces the file written for the older one.
        // A copy has the content of the document just newer than it at its path: a file changed
        // back to what it once held is a version between them, not a copy.
        // Read once here, for the fingerprint and for the inventory.
        const identity = fingerprinted ? readIdentity(doc.metadata) : undefined;
        const mark = fingerprinted ? fingerprintOf(identity) : NO_FINGERPRINT;
        if (seen !== undefined && added <= seen) {
          const copy = mark !== NO_FINGERPRINT && seenPaths.get(key, 1) === mark;
          if (fingerprinted) seenPaths.set(key, mark, 1);
          yield { entry: { kind: 'problem', key, outcome: 'skipped', reason: 'an older document at the same path (a file uploaded again); the newest is pulled' }, doc, older: true, ...(copy ? { copy: true as const } : {}) };
          continue;
        }
        seenPaths.set(key, added);
        if (fingerprinted) seenPaths.set(key, mark, 1);
        // An inventory reads the document and the key alone: no attributes, no closures, for
        // each of the documents a cold start adopts.
        if (fingerprinted) {
          yield { entry: { kind: 'file', key, size: doc.size ?? 0, mtimeMs: added, open: inventoryOnly }, doc, identity };
          continue;
        }
        const record = { objectIdentifier: doc.objectIdentifier, name: doc.name, url: doc.url, size: doc.size };
        const entry: FileEntry = {
          kind: 'file',
          key,
          size: doc.size ?? 0,
          mtimeMs: added,
          marker: doc.objectIdentifier as string,
          attributes: attributesOf(doc, this.project),
          expectedSha256: readIdentity(doc.metadata)?.sha256,
          open: () => this.download(record),
          openAsync: async (slot) => (await this.fetch(record, slot)).body,
          openFrom: (offset, slot) => this.fetchFrom(record, key, doc.size ?? 0, offset, slot),
        };
        yield { entry, doc };
      }
      const moved = list.moved;
      if (!moved || moved.to >= moved.from || signal?.aborted) break;
      if (pass === 1) this.client.transport.logger.warn({ project: this.project, documents: moved }, `the project changed while it was listed (${moved.from} documents, then ${moved.to}): listing it again for documents the first listing missed`);
    }
    if (!sawFrom && requireFrom) throw new SourceError(`the project has no folder ${this.prefix.slice(1, -1)}`);
  }

  /** The content's response; a document gone since it was listed is said so (a skipped item). */
  private async fetch(doc: Pick<Document, 'objectIdentifier' | 'name' | 'url' | 'size'>, slot?: Slot) {
    try {
      return await this.client.documents.download(doc, slot ? { slot } : {});
    } catch (err) {
      throw goneIfNotFound(err);
    }
  }

  /** The content from `offset` on (Range); a range the service did not hold to is logged, and the whole content given. */
  private async fetchFrom(doc: Pick<Document, 'objectIdentifier' | 'name' | 'url'>, key: string, size: number, offset: number, slot?: Slot): Promise<PartialContent> {
    try {
      const got = await this.client.documents.downloadFrom(doc, size, offset, slot ? { slot } : {});
      if (got.mismatch) this.client.transport.logger.warn({ key, document: doc.objectIdentifier }, `the content did not come from byte ${offset} as asked (${got.mismatch}): downloaded whole`);
      return { body: got.body, from: got.from, ...(got.drain ? { drain: got.drain } : {}), ...(got.version !== undefined ? { version: got.version } : {}) };
    } catch (err) {
      throw goneIfNotFound(err);
    }
  }

  /** The content as a stream at once; the request starts when it is read. */
  private download(doc: Pick<Document, 'objectIdentifier' | 'name' | 'url' | 'size'>): Readable {
    const out = new PassThrough();
    this.fetch(doc).then(
      (res) => {
        res.body.on('error', (err) => out.destroy(err));
        res.body.pipe(out);
      },
      (err: unknown) => out.destroy(err as Error),
    );
    return out;
  }

  async close(): Promise<void> {}
}

/** A document's content answering 404 after its listing: the document is gone (a skipped item). */
function goneIfNotFound(err: unknown): unknown {
  return err instanceof NotFoundError ? new SourceGoneError('the document is gone from the source since it was listed (its content answers 404)') : err;
}
