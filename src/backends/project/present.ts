// What a folder of the project already holds, asked before an entry the checkpoint store does not
// know is uploaded. A warm store never lists the project again, so a file that another store
// (another machine, a laptop's run beside the cron job's) uploaded since would otherwise be
// uploaded a second time: the service is the truth, the store only a cache.
//
// A folder is listed once per run, at its first such entry, and only its direct children; per
// path only the newest document's fingerprint is kept, as hashes (NumberByKey: 16 bytes a slot,
// at most three quarters full), so memory stays small however large the folder. The ids are read
// only once a folder turns out to hold one of the run's entries: that folder is listed again and
// its matches kept.
import type { FerryClient } from '../../api/client.js';
import type { Document } from '../../api/types.js';
import type { Listed } from '../../api/listed.js';
import { hash53, KeySet, NumberByKey } from '../../hashed-keys.js';
import { logicalPath } from './source.js';
import { readIdentity } from './identity.js';

/** Documents asked for per page: a service that caps pages lower is read on until totalCount. */
const PAGE_SIZE = 1_000;

export type MarkOf = (doc: Document) => string | undefined;

/** A document found holding an entry's content: its id, and the identity of what it carries (null: not compared). */
export interface Found {
  id: string;
  attrs: string | null;
}

export class PresentDocuments {
  /** Per folder (its id, '' for the root): newest fingerprint hash by logical path. */
  private readonly pictures = new Map<string, Promise<NumberByKey>>();
  /** Per folder that held a match: the document (its id, the identity of what it carries) by `path\0mark`, newest at each path. */
  private readonly ids = new Map<string, Promise<Map<string, Found>>>();

  constructor(
    private readonly client: FerryClient,
    private readonly project: string,
    /** The job's change marker as a document carries it (ferry.sha256, or ferry.source). */
    private readonly markOf: MarkOf,
    /** Listings show every earlier run's writes: "not in the folder" holds (src/api/listed.ts). */
    readonly listed: Listed,
    /** The identity of what a document at a logical path carries, when the run compares it (a manifest). */
    private readonly identify?: ((path: string, doc: Document) => string | null) | undefined,
  ) {}

  /** Whether the folder holds a document at `path` (logical): only then is its content asked about (find). */
  async holds(parentId: string | null, path: string): Promise<boolean> {
    return (await this.pictureOf(parentId)).get(path) !== undefined;
  }

  /** The newest document at `path` (logical, `/a/b.txt`) in the folder, when it holds `mark`. */
  async find(parentId: string | null, path: string, mark: string): Promise<Found | undefined> {
    const folder = parentId ?? '';
    if ((await this.pictureOf(parentId)).get(path) !== hash53(mark)) return undefined;
    let ids = this.ids.get(folder);
    if (!ids) {
      ids = this.matches(parentId);
      this.ids.set(folder, ids);
      ids.catch(() => this.ids.delete(folder));
    }
    return (await ids).get(`${path}\0${mark}`);
  }

  private pictureOf(parentId: string | null): Promise<NumberByKey> {
    const folder = parentId ?? '';
    let picture = this.pictures.get(folder);
    if (!picture) {
      // Awaited by every entry of the folder: its calls carry no entry's slot (src/slots.ts).
      picture = this.picture(parentId);
      this.pictures.set(folder, picture);
      // A failed listing is not kept: the next entry of the folder asks again.
      picture.catch(() => this.pictures.delete(folder));
    }
    return picture;
  }

  private async picture(parentId: string | null): Promise<NumberByKey> {
    const picture = new NumberByKey();
    for await (const { path, mark } of this.newest(parentId)) picture.set(path, mark === undefined ? -1 : hash53(mark));
    return picture;
  }

  private async matches(parentId: string | null): Promise<Map<string, Found>> {
    const found = new Map<string, Found>();
    for await (const { path, mark, id, doc } of this.newest(parentId)) if (mark !== undefined) found.set(`${path}\0${mark}`, { id, attrs: this.identify?.(path, doc) ?? null });
    return found;
  }

  /** The folder's direct children, newest first, the first document at each path only. */
  private async *newest(parentId: string | null): AsyncIterable<{ path: string; mark: string | undefined; id: string; doc: Document }> {
    const seen = new KeySet();
    const list = this.client.documents.list(
      this.project,
      { ...(parentId ? { parentObjectIdentifier: parentId } : {}), flattenList: false, includePath: true, hidePackagedFiles: false, sorting: 'dateAdded', desc: true },
      { pageSize: PAGE_SIZE },
    );
    for await (const doc of list) {
      // A service that lists more than the folder's own children: the rest is not this folder's.
      if (doc.isDirectory || (doc.parentObjectIdentifier ?? null) !== parentId || !doc.objectIdentifier) continue;
      const path = logicalPath(doc);
      if (!path || seen.has(path)) continue;
      seen.add(path);
      yield { path, mark: this.markOf(doc), id: doc.objectIdentifier, doc };
    }
  }
}

/** The marker a mirror writes (the content's sha256) or a migration (the source document's id). */
export function markReader(markers: 'content' | 'origin'): MarkOf {
  return (doc) => {
    const id = readIdentity(doc.metadata);
    return markers === 'origin' ? id?.source : id?.sha256;
  };
}
