// What the service already did with a project's documents, by extension: how many it took and
// refused (and why), the pages it counted and the credits it charged per page, and the largest
// file it took. An earlier onboarding into the same project is the best predictor of the next.
// Read from one listing of the project's documents (flattened), kept as tallies per extension.
import type { FerryClient } from '../api/client.js';
import type { Document } from '../api/types.js';
import { extensionOf } from './census.js';
import { refusalOf } from '../api/refusal.js';

const PAGE_SIZE = 1_000;
const MAX_EXTENSIONS = 500;

export interface TypeHistory {
  extension: string;
  /** Documents the service has finished processing. */
  processed: number;
  /** Still being processed: not counted either way. */
  inProgress: number;
  taken: number;
  refused: Record<string, number>;
  /** Of the documents taken that have a size and a page count: bytes, pages, credits (ocr + layout). */
  measuredBytes: number;
  pages: number;
  /** The fewest pages a document of the type taken was counted (a small file is still a page). */
  minPages: number | undefined;
  credits: number;
  largestTaken: number;
}

export interface ServiceHistory {
  documents: number;
  byExtension: Map<string, TypeHistory>;
  /** The largest document of any type the service took in this project. */
  largestTaken: number;
}

/** A document's type as the census names a file's: the service's extension, else the name's. */
function documentExtension(doc: Pick<Document, 'extension' | 'name'>): string {
  return doc.extension ? doc.extension.replace(/^\./, '').toLowerCase() : extensionOf(doc.name ?? '');
}

export async function readHistory(client: FerryClient, project: string, signal?: AbortSignal): Promise<ServiceHistory> {
  const history: ServiceHistory = { documents: 0, byExtension: new Map(), largestTaken: 0 };
  const list = client.documents.list(project, { flattenList: true, hidePackagedFiles: false }, { pageSize: PAGE_SIZE });
  for await (const doc of list) {
    signal?.throwIfAborted();
    if (doc.isDirectory) continue;
    history.documents++;
    const ext = documentExtension(doc);
    let t = history.byExtension.get(ext);
    if (!t) {
      if (history.byExtension.size >= MAX_EXTENSIONS) continue;
      t = { extension: ext, processed: 0, inProgress: 0, taken: 0, refused: {}, measuredBytes: 0, pages: 0, minPages: undefined, credits: 0, largestTaken: 0 };
      history.byExtension.set(ext, t);
    }
    if (doc.uploadInProgress) {
      t.inProgress++;
      continue;
    }
    t.processed++;
    const refused = refusalOf(doc);
    if (refused) {
      t.refused[refused] = (t.refused[refused] ?? 0) + 1;
      continue;
    }
    t.taken++;
    const size = doc.size ?? 0;
    t.largestTaken = Math.max(t.largestTaken, size);
    history.largestTaken = Math.max(history.largestTaken, size);
    if (size > 0 && typeof doc.pageCount === 'number') {
      t.measuredBytes += size;
      t.pages += doc.pageCount;
      t.minPages = Math.min(t.minPages ?? doc.pageCount, doc.pageCount);
      t.credits += (doc.ocrCreditsCost ?? 0) + (doc.layoutCreditsCost ?? 0);
    }
  }
  return history;
}

/** What other projects of the tenant say of a type this project has no history of. */
export interface TypeVerdict {
  extension: string;
  /** The project whose documents gave it (its name, else its id). */
  project: string;
  taken: number;
  /** Refused as unsupportedFileType: type support is the tenant's, not the project's. */
  unsupported: number;
}

/** Other projects looked at, and documents of one type read in each: a bound on the requests a scan makes. */
const OTHER_PROJECTS = 50;
const PER_TYPE = 50;

/**
 * For each extension this project has no processed document of, the first other project of the
 * tenant (newest first, at most OTHER_PROJECTS) holding processed documents of it: whether the
 * service took them or refused the type (unsupportedFileType). Each project is asked for the type
 * through the listing's column filter, and every answer is checked here too (a service that
 * ignores the filter only costs a page).
 */
export async function typeVerdicts(client: FerryClient, project: string, extensions: readonly string[], signal?: AbortSignal): Promise<Map<string, TypeVerdict>> {
  const wanted = new Set(extensions);
  const found = new Map<string, TypeVerdict>();
  let looked = 0;
  for await (const other of client.projects.list()) {
    if (wanted.size === 0 || looked >= OTHER_PROJECTS) break;
    if (other.objectIdentifier === project) continue;
    looked++;
    for (const ext of [...wanted]) {
      signal?.throwIfAborted();
      const verdict: TypeVerdict = { extension: ext, project: other.name ?? other.objectIdentifier, taken: 0, unsupported: 0 };
      let read = 0;
      const list = client.documents.list(other.objectIdentifier, { flattenList: true, hidePackagedFiles: false, filterColumn: 'extension', filterOperation: 'contains', filterSearchTerm: ext }, { pageSize: PER_TYPE });
      for await (const doc of list) {
        if (++read > PER_TYPE) break;
        if (doc.isDirectory || doc.uploadInProgress) continue;
        if (documentExtension(doc) !== ext) continue;
        if (refusalOf(doc) === 'unsupportedFileType') verdict.unsupported++;
        else if (!refusalOf(doc)) verdict.taken++;
      }
      if (verdict.taken + verdict.unsupported > 0) {
        found.set(ext, verdict);
        wanted.delete(ext);
      }
    }
  }
  return found;
}
