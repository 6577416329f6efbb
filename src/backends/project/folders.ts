// Remote folders by relative path: found and reused when they exist, created through the folder
// extension when the service offers it, otherwise the nearest existing folder takes the files.
import { posix } from 'node:path';
import { expectListed } from '../../api/listed.js';
import type { FerryClient } from '../../api/client.js';
import { ConflictError, ApiError, FerryError } from '../../api/errors.js';
import { visible } from '../../text.js';
import { RELATIVE_PATH_KEY } from './landed.js';
import type { CheckpointStore } from '../../store/types.js';

export interface FolderStats {
  reused: number;
  created: number;
  /** Folders that could not be created: their files went to the nearest existing folder. */
  flattened: number;
  /** True when the service has no folder creation (the spec shows none). */
  creationUnavailable: boolean;
  /** The status that said so. */
  creationRefused?: number;
  /** Folders the service takes for another it holds (another case or Unicode form): their files failed. */
  clashes?: { path: string; existing: string }[];
  /** Folders the service refused one by one (HTTP 400, e.g. for their name): flattened, the rest still created. */
  refused?: { path: string; why: string }[];
}

/**
 * What a service without the folder extension may answer its route with: 404, 405, 403 (a
 * gateway's view of an unknown route), or 501. A 400 refuses one folder (its name), not the
 * route: only that folder is flattened. A 401 (the token) and 429 or other 5xx (transient) are
 * not refusals.
 */
const CREATION_DENIED = new Set([403, 404, 405, 501]);

export interface Placement {
  /** Remote folder id, or null for the project root. */
  parentId: string | null;
  /**
   * Set when the file could not go to its own folder: its path under the project root (`/`-separated,
   * no leading slash), kept in the document's metadata as ferry.relativePath.
   */
  flattenedPath?: string;
}

export class RemoteFolders {
  readonly stats: FolderStats = { reused: 0, created: 0, flattened: 0, creationUnavailable: false };
  private readonly resolving = new Map<string, Promise<string | null | undefined>>();
  /** The first creation, which the others wait for until the service has answered one. */
  private probe: Promise<string | null | undefined> | undefined;
  private creationAnswered = false;
  /** Children folders per parent id ('' = root), listed once. */
  private readonly children = new Map<string, Promise<Map<string, string>>>();
  private readonly flattenedDirs = new Set<string>();
  /** Dry run: ids standing for folders that would be created. */
  private readonly planned = new Set<string>();

  constructor(
    private readonly client: FerryClient,
    private readonly project: string,
    private readonly store: CheckpointStore | undefined,
    private readonly jobKey: string,
    /** Remote path under the project root to mirror into (`--to`), `/`-separated. */
    private readonly base: string,
    private readonly dryRun = false,
  ) {}

  /** Where a file with this relative key goes. */
  async place(key: string): Promise<Placement> {
    const dir = posix.dirname(key);
    const id = await this.folder(dir === '.' ? '' : dir);
    if (id !== undefined) return { parentId: id };
    // The path it would have had, from the project root: what ferry.relativePath holds.
    return { parentId: await this.nearest(dir), flattenedPath: joinPath(this.base, key) };
  }

  /**
   * The project was made by this run a moment ago (the run holds the destination's lease): it
   * holds no folders but those this run makes, so its root is not listed before the first.
   */
  startEmpty(): void {
    this.children.set('', Promise.resolve(new Map()));
  }

  /**
   * Folders the destination's inventory met, by path under the base: remembered (one commit), so
   * that none is looked for in a listing of its parent.
   */
  learn(folders: readonly { relDir: string; id: string }[]): void {
    if (this.dryRun) return;
    this.store?.setFolders(
      this.jobKey,
      folders.map((f) => ({ relPath: joinPath(this.base, f.relDir), remoteId: f.id })),
    );
  }

  /** Makes sure a folder exists (empty folders are mirrored too). */
  async ensure(relDir: string): Promise<void> {
    try {
      await this.folder(relDir);
    } catch (err) {
      // A clash is this folder's, not the run's: its files fail with the reason, the rest go on.
      if (!(err instanceof FolderClashError)) throw err;
      const clashes = (this.stats.clashes ??= []);
      if (clashes.length < 20 && !clashes.some((c) => c.path === relDir)) clashes.push({ path: relDir, existing: err.existing });
    }
  }

  /** The folder's id, null for the project root, undefined when it neither exists nor can be made. */
  private folder(relDir: string): Promise<string | null | undefined> {
    return this.byPath(joinPath(this.base, relDir));
  }

  /** By path from the project root. */
  private byPath(full: string): Promise<string | null | undefined> {
    if (full === '') return Promise.resolve(null);
    let pending = this.resolving.get(full);
    if (!pending) {
      // Awaited by every file of the folder: its calls carry no item's slot (src/slots.ts).
      pending = this.resolve(full);
      this.resolving.set(full, pending);
    }
    return pending;
  }

  private async resolve(full: string): Promise<string | null | undefined> {
    const remembered = this.store?.getFolder(this.jobKey, full);
    if (remembered) return remembered;
    const parentPath = posix.dirname(full) === '.' ? '' : posix.dirname(full);
    const parentId = await this.byPath(parentPath);
    if (parentId === undefined) return undefined;
    const name = posix.basename(full);
    const existing = (await this.childFolders(parentId)).get(name);
    if (existing) {
      this.stats.reused++;
      this.remember(full, existing);
      return existing;
    }
    if (this.stats.creationUnavailable) return this.flatten(full);
    // Folders are made side by side (the engine does not wait for each), but until one creation
    // has been answered nobody knows whether the service creates folders at all: the first is a
    // probe the others wait for, so a service without folders is asked once, not once per folder.
    if (!this.creationAnswered) {
      if (this.probe) {
        await this.probe.catch(() => undefined);
        if (this.stats.creationUnavailable) return this.flatten(full);
      } else {
        const probe = this.create(full, name, parentId);
        this.probe = probe;
        return probe;
      }
    }
    return this.create(full, name, parentId);
  }

  private async create(full: string, name: string, parentId: string | null): Promise<string | null | undefined> {
    if (this.dryRun) {
      this.stats.created++;
      // A stand-in id for a folder a real run would create; it has no children to list.
      const planned = `(new folder ${full})`;
      this.planned.add(planned);
      return planned;
    }
    // Set when an unclear failure was settled by finding the folder: then it may not be new.
    let found = false;
    try {
      const doc = await this.client.documents.createFolder(this.project, name, parentId ?? undefined, {
        // Creating is not idempotent: after an ambiguous failure, look before creating again.
        didItLand: async () => {
          found = true;
          this.children.delete(parentId ?? '');
          const id = (await this.childFolders(parentId)).get(name);
          return id ? { objectIdentifier: id, name, documentUploadObjectIdentifier: '' } : undefined;
        },
      });
      const id = doc.objectIdentifier as string;
      this.creationAnswered = true;
      this.stats.created++;
      (await this.childFolders(parentId)).set(name, id);
      // A folder this run just made holds no folders but those this run makes in it (the run
      // holds the destination's lease): none to list before making the first.
      if (!found) this.children.set(id, Promise.resolve(new Map()));
      this.remember(full, id);
      return id;
    } catch (err) {
      if (err instanceof ConflictError) {
        // It exists: made meanwhile by someone else, or not yet listed when its parent was.
        const id = await this.findConflicting(parentId, name);
        this.stats.reused++;
        this.remember(full, id);
        return id;
      }
      // Any answer but a refusal of the route says folders can be made (a 400 refuses this one only).
      if (err instanceof ApiError && !CREATION_DENIED.has(err.status)) this.creationAnswered = true;
      if (err instanceof ApiError && err.status === 400) {
        // This folder, not folders at all: its files keep their path in metadata, said by name.
        const rejected = (this.stats.refused ??= []);
        if (rejected.length < 20) rejected.push({ path: full, why: `HTTP 400: ${err.message}` });
        this.client.transport.logger.warn({ status: 400 }, 'the service refused to create one folder: its files go to the nearest existing folder, their relative path kept in metadata');
        return this.flatten(full);
      }
      if (err instanceof ApiError && CREATION_DENIED.has(err.status)) {
        // No folder creation on this service (the spec shows none; a gateway may answer an unknown
        // route with any of these): every missing folder is flattened from now on, said once.
        this.stats.creationUnavailable = true;
        this.stats.creationRefused = err.status;
        this.client.transport.logger.warn(
          { status: err.status },
          `the service refused folder creation (HTTP ${err.status}): files of folders that do not exist go to the nearest existing folder, their relative path kept in the document metadata "${RELATIVE_PATH_KEY}"`,
        );
        return this.flatten(full);
      }
      throw err;
    }
  }

  /**
   * The folder a create answered 409 for. It exists, so a listing begun the listing lag after that
   * answer shows it; until then it is looked for again every quarter second. Found under another
   * case or Unicode form (a service that compares folder names as a case-insensitive collation
   * does): a clash, which fails this folder's files and lets the run go on. Not listed in any form
   * by then: the service lists later than the bound, and the run stops (ListingLagError).
   */
  private async findConflicting(parentId: string | null, name: string): Promise<string> {
    // A folder this run made or listed already, under another form: no listing needed to know.
    const known = await this.childFolders(parentId);
    const clash = sameFolderName(known, name);
    if (clash !== undefined && clash !== name) throw new FolderClashError(name, clash);
    // (The folder's name stays out of the message: it is the service's, and messages reach terminals.)
    const found = await expectListed<{ id: string } | { clash: string; document?: boolean }>(
      this.client.transport.listingLag,
      performance.now(),
      async () => {
        this.children.delete(parentId ?? '');
        const listed = await this.childFolders(parentId);
        // The folders this run knew stay known: a late listing does not forget them.
        for (const [n, id] of known) if (!listed.has(n)) listed.set(n, id);
        const id = listed.get(name);
        if (id !== undefined) return { id };
        const other = sameFolderName(listed, name);
        if (other !== undefined) return { clash: other };
        // A document (not a folder) holding the name, in any case: the service took the folder for it.
        const file = await this.documentNamed(parentId, name);
        return file === undefined ? undefined : { clash: file, document: true };
      },
      'a folder the service answered 409 for (it already exists)',
    );
    if ('id' in found) return found.id;
    throw new FolderClashError(name, found.clash, found.document === true);
  }

  /** The name of a document (not a folder) in the folder that the service takes for `name`, if any. */
  private async documentNamed(parentId: string | null, name: string): Promise<string | undefined> {
    const folded = fold(name);
    for await (const doc of this.client.documents.list(this.project, { ...(parentId ? { parentObjectIdentifier: parentId } : {}), hidePackagedFiles: false })) {
      if (!doc.isDirectory && doc.name && (doc.parentObjectIdentifier ?? null) === parentId && fold(doc.name) === folded) return doc.name;
    }
    return undefined;
  }

  private flatten(full: string): undefined {
    if (!this.flattenedDirs.has(full)) {
      this.flattenedDirs.add(full);
      this.stats.flattened++;
    }
    return undefined;
  }

  /**
   * The deepest ancestor of `relDir` that exists (a dry run's stand-ins do not): where a service
   * that creates no folders has the files of `relDir`, flattened.
   */
  async nearest(relDir: string): Promise<string | null> {
    let dir = relDir;
    while (dir !== '.' && dir !== '') {
      dir = posix.dirname(dir);
      const id = await this.folder(dir === '.' ? '' : dir);
      if (id !== undefined && !this.isPlanned(id)) return id;
    }
    return (await this.folder('')) ?? null;
  }

  private childFolders(parentId: string | null): Promise<Map<string, string>> {
    const key = parentId ?? '';
    let pending = this.children.get(key);
    if (!pending) {
      pending = this.listChildFolders(parentId);
      this.children.set(key, pending);
    }
    return pending;
  }

  /** A stand-in id a dry run gave a folder a real run would create: it holds nothing yet. */
  isPlanned(id: string | null): boolean {
    return id !== null && this.planned.has(id);
  }

  private async listChildFolders(parentId: string | null): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    if (parentId !== null && this.planned.has(parentId)) return found;
    // Unfiltered on purpose: the service's filter semantics are not documented, names are checked here.
    for await (const doc of this.client.documents.list(this.project, { ...(parentId ? { parentObjectIdentifier: parentId } : {}), hidePackagedFiles: false })) {
      if (doc.isDirectory && doc.name && doc.objectIdentifier && (doc.parentObjectIdentifier ?? null) === parentId) found.set(doc.name, doc.objectIdentifier);
    }
    return found;
  }

  private remember(full: string, id: string): void {
    if (!this.dryRun) this.store?.setFolder(this.jobKey, full, id);
  }
}

/** The name of a listed folder the service takes for `name`: the same, or equal regardless of case and Unicode form. */
function sameFolderName(folders: Map<string, string>, name: string): string | undefined {
  if (folders.has(name)) return name;
  const folded = fold(name);
  for (const listed of folders.keys()) if (fold(listed) === folded) return listed;
  return undefined;
}

function fold(name: string): string {
  return name.normalize('NFC').toLocaleLowerCase('en-US');
}

/**
 * The service holds a folder whose name it takes for this one (another case, another Unicode
 * form): the files of this folder fail, naming both; the rest of the run goes on.
 */
export class FolderClashError extends FerryError {
  override get mark(): 'conflict' {
    return 'conflict';
  }

  constructor(
    readonly wanted: string,
    readonly existing: string,
    /** The name is held by a document, not a folder. */
    readonly byDocument = false,
  ) {
    super(
      byDocument
        ? `the service already holds a document "${visible(existing)}" where the folder "${visible(wanted)}" was to be made: it takes the two names for one (a folder and a document cannot share a name there); this folder's files were not uploaded (rename the folder or the file, or mirror them into different places)`
        : `the service already holds a folder "${visible(existing)}" where "${visible(wanted)}" was to be made: it compares folder names regardless of case and Unicode form, so the two cannot be told apart there; this folder's files were not uploaded (rename one of the two folders, or mirror them into different places)`,
    );
  }
}

export function joinPath(base: string, rel: string): string {
  return [base, rel].filter((p) => p !== '' && p !== '.').join('/');
}
