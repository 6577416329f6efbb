// A project's documents as a destination: entries become documents in the folder tree (created
// through the folder extension, flattened into the nearest folder where it is missing), each
// upload settled by its batch id, name, folder and size after an unclear failure or a crash.
import { posix } from 'node:path';
import type { Readable } from 'node:stream';
import type { FerryClient } from '../../api/client.js';
import { AuthenticationError, ConnectionError, PermissionDeniedError, TimeoutError } from '../../api/errors.js';
import type { CoordinateExtractionStrategy, OCREngine, OCRStrategy } from '../../api/types.js';
import { JobAbortedError } from '../../runner/job.js';
import type { FileEntry } from '../../sources/types.js';
import type { CheckpointStore, ItemRecord } from '../../store/types.js';
import type { Destination, WriteContext } from '../engine.js';
import { RemoteFolders, type Placement } from '../remote-folders.js';
import { BatchIndex, RELATIVE_PATH_KEY, fileName, findLanded } from '../settle.js';

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
}

export class ProjectDestination implements Destination<Placement> {
  readonly description: string;
  readonly folders: RemoteFolders;

  constructor(private readonly o: ProjectDestinationOptions) {
    this.description = `project ${o.project}${o.base ? `/${o.base}` : ''}`;
    this.folders = new RemoteFolders(o.client, o.project, o.store, o.jobKey, o.base, o.dryRun === true);
  }

  async prepare(): Promise<void> {
    try {
      await this.o.client.projects.get(this.o.project);
    } catch (err) {
      if (err instanceof AuthenticationError || err instanceof PermissionDeniedError) throw err;
      if (err instanceof ConnectionError || err instanceof TimeoutError) {
        // Say which host, not which project: the project was never asked about.
        throw new JobAbortedError(`the service cannot be reached at ${originOf(err.url)}: ${err.message}; check the address (FERRY_BASE_URL or the profile) and the network`);
      }
      throw new JobAbortedError(`project ${this.o.project} cannot be used: ${(err as Error).message}`);
    }
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
      const doc = index.claim({ ...wanted, relativePath: undefined }) ?? index.claim({ ...wanted, relativePath: item.sourceKey });
      if (doc?.objectIdentifier) landed.set(item.sourceKey, { remoteId: doc.objectIdentifier });
    }
    return landed;
  }

  ensureFolder(key: string): Promise<void> {
    return this.folders.ensure(key);
  }

  place(entry: Pick<FileEntry, 'key'>): Promise<Placement> {
    return this.folders.place(entry.key);
  }

  async write(entry: FileEntry, placement: Placement, ctx: WriteContext): Promise<{ remoteId: string }> {
    const { client, project } = this.o;
    const flattenedPath = placement.flattenedPath;
    const name = fileName(entry.key);
    const metadata = { ...this.o.metadata, ...(flattenedPath ? { [RELATIVE_PATH_KEY]: flattenedPath } : {}) };
    const wanted = { name, parentId: placement.parentId, size: entry.size, relativePath: flattenedPath, notId: ctx.previous };
    const doc = await client.documents.upload(
      project,
      entry.path ? { path: entry.path, size: entry.size, filename: name } : { open: () => entry.open() as Readable, size: entry.size, filename: name },
      {
        documentUploadIdentifier: ctx.uploadId,
        ...(placement.parentId ? { parentObjectIdentifier: placement.parentId } : {}),
        source: 'local',
        ...(this.o.ocrEngine ? { ocrEngine: this.o.ocrEngine } : {}),
        ...(this.o.ocrStrategy ? { ocrStrategy: this.o.ocrStrategy } : {}),
        ...(this.o.coordinateExtractionStrategy ? { coordinateExtractionStrategy: this.o.coordinateExtractionStrategy } : {}),
        ...(Object.keys(metadata).length ? { metadata } : {}),
      },
      // No abort signal: on SIGINT/SIGTERM an upload under way is let finish and recorded.
      { didItLand: () => findLanded(client, project, ctx.uploadId, wanted, ctx.claimed) },
    );
    return { remoteId: doc.objectIdentifier as string };
  }

  report(): Record<string, unknown> {
    return { folders: this.folders.stats };
  }
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}
