// What the service already did with a project's documents, by extension: how many it took and
// refused (and why), the pages it counted and the credits it charged per page, and the largest
// file it took. An earlier onboarding into the same project is the best predictor of the next.
// Read from one listing of the project's documents (flattened), kept as tallies per extension.
import type { FerryClient } from '../api/client.js';
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

export async function readHistory(client: FerryClient, project: string, signal?: AbortSignal): Promise<ServiceHistory> {
  const history: ServiceHistory = { documents: 0, byExtension: new Map(), largestTaken: 0 };
  const list = client.documents.list(project, { flattenList: true, hidePackagedFiles: false }, { pageSize: PAGE_SIZE });
  for await (const doc of list) {
    signal?.throwIfAborted();
    if (doc.isDirectory) continue;
    history.documents++;
    const ext = doc.extension ? doc.extension.replace(/^\./, '').toLowerCase() : extensionOf(doc.name ?? '');
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
