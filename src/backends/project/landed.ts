// Exactly once: an upload whose outcome was not recorded (a crash, a dropped connection) is looked
// up on the service before it is ever sent again. Documents of a batch are found by their
// documentUploadIdentifier and matched by name, folder and size.
import { posix } from 'node:path';
import type { FerryClient } from '../../api/client.js';
import type { Document } from '../../api/types.js';
import { RELATIVE_PATH_KEY } from './source.js';

export interface Wanted {
  name: string;
  parentId: string | null;
  size: number;
  /** Set for files that were flattened into another folder. */
  relativePath?: string | undefined;
  /**
   * The document this file already had: never the answer, even when a changed file kept its size
   * and name and went to the same batch again (a resumed run).
   */
  notId?: string | null | undefined;
}

export { RELATIVE_PATH_KEY };

export class BatchIndex {
  /** Documents of the batch not yet claimed by an item, by match key. */
  private readonly byKey = new Map<string, Document[]>();

  static async load(client: FerryClient, project: string, uploadId: string): Promise<BatchIndex> {
    const index = new BatchIndex();
    for await (const doc of client.documents.list(project, { uploadObjectIdentifier: uploadId, flattenList: true, hidePackagedFiles: false })) {
      if (doc.isDirectory || doc.documentUploadObjectIdentifier !== uploadId) continue;
      const relativePath = doc.metadata?.find((m) => m.key === RELATIVE_PATH_KEY)?.value ?? undefined;
      index.add(matchKey({ name: doc.name ?? '', parentId: doc.parentObjectIdentifier ?? null, size: doc.size ?? -1, relativePath }), doc);
    }
    return index;
  }

  /** Takes the matching document, so one document never settles two items. */
  claim(wanted: Wanted): Document | undefined {
    const list = this.byKey.get(matchKey(wanted));
    const at = list?.findIndex((d) => d.objectIdentifier !== wanted.notId) ?? -1;
    return at >= 0 ? list?.splice(at, 1)[0] : undefined;
  }

  private add(key: string, doc: Document): void {
    const list = this.byKey.get(key);
    if (list) list.push(doc);
    else this.byKey.set(key, [doc]);
  }
}

/** Whether one upload landed, for the transport's didItLand hook. */
export async function findLanded(client: FerryClient, project: string, uploadId: string, wanted: Wanted, claimed: ReadonlySet<string>): Promise<Document | undefined> {
  const query = {
    uploadObjectIdentifier: uploadId,
    ...(wanted.parentId ? { parentObjectIdentifier: wanted.parentId } : {}),
    hidePackagedFiles: false,
  };
  for await (const doc of client.documents.list(project, query)) {
    if (doc.documentUploadObjectIdentifier !== uploadId || !doc.objectIdentifier || claimed.has(doc.objectIdentifier) || doc.objectIdentifier === wanted.notId) continue;
    const relativePath = doc.metadata?.find((m) => m.key === RELATIVE_PATH_KEY)?.value ?? undefined;
    if (matchKey({ name: doc.name ?? '', parentId: doc.parentObjectIdentifier ?? null, size: doc.size ?? -1, relativePath }) === matchKey(wanted)) return doc;
  }
  return undefined;
}

export function fileName(key: string): string {
  return posix.basename(key);
}

function matchKey(w: Wanted): string {
  return JSON.stringify([w.name, w.parentId, w.size, w.relativePath ?? null]);
}
