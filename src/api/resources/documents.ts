import { Resource, pagedGet, seg } from './resource.js';
import type { ListOptions, PagedList } from '../paging.js';
import type { CallOptions, StreamResponse } from '../transport.js';
import type { FileInput, MultipartPart } from '../multipart.js';
import type {
  CoordinateExtractionStrategy,
  Document,
  DocumentUploadSource,
  FailedDocumentInput,
  OCREngine,
  OCRStrategy,
  Query,
} from '../types.js';
import { FerryError } from '../errors.js';

type ListQuery = Omit<Query<'listDocuments'>, 'pageNumber' | 'pageSize'>;

export interface UploadParams {
  /** Required by the service: the batch this document belongs to. */
  documentUploadIdentifier: string;
  parentObjectIdentifier?: string;
  source?: DocumentUploadSource;
  ocrEngine?: OCREngine;
  ocrStrategy?: OCRStrategy;
  coordinateExtractionStrategy?: CoordinateExtractionStrategy;
  /** Key/value metadata, sent as the `metadataJson` form field. */
  metadata?: Record<string, string>;
}

export class Documents extends Resource {
  /** Every document of a project, across pages, with the spec's filters and sorting. */
  list(projectIdentifier: string, query: ListQuery = {}, opts: ListOptions = {}): PagedList<Document> {
    return pagedGet(this.t, `/projects/${seg(projectIdentifier)}/documents`, query, opts);
  }

  /**
   * Uploads one file, streamed. Uploads are not idempotent: an ambiguous failure is retried only
   * when `opts.didItLand` can tell whether the first attempt created a document.
   */
  upload(projectIdentifier: string, file: FileInput, params: UploadParams, opts: CallOptions<Document> = {}): Promise<Document> {
    // Settings first and the file last, so a streaming server knows them before the bytes arrive.
    const parts: MultipartPart[] = [];
    if (params.ocrEngine) parts.push({ name: 'ocrEngine', value: params.ocrEngine });
    if (params.ocrStrategy) parts.push({ name: 'ocrStrategy', value: params.ocrStrategy });
    if (params.coordinateExtractionStrategy) parts.push({ name: 'coordinateExtractionStrategy', value: params.coordinateExtractionStrategy });
    if (params.metadata) parts.push({ name: 'metadataJson', value: JSON.stringify(params.metadata) });
    parts.push({ name: 'file', file });
    return this.t.json(
      {
        method: 'POST',
        path: `/projects/${seg(projectIdentifier)}/documents`,
        query: {
          documentUploadIdentifier: params.documentUploadIdentifier,
          parentObjectIdentifier: params.parentObjectIdentifier,
          source: params.source,
        },
        multipart: parts,
      },
      opts,
    );
  }

  /** Records an upload attempt that failed on the client side. */
  recordFailed(projectIdentifier: string, input: FailedDocumentInput, opts: CallOptions<Document> = {}): Promise<Document> {
    return this.t.json({ method: 'POST', path: `/projects/${seg(projectIdentifier)}/documents/failed`, json: input }, opts);
  }

  /**
   * Creates a folder (a ferry extension the spec does not show; the emulator offers it).
   * Callers should fall back when it answers 404 or 405.
   */
  createFolder(projectIdentifier: string, name: string, parentObjectIdentifier?: string, opts: CallOptions<Document> = {}): Promise<Document> {
    return this.t.json(
      { method: 'POST', path: `/projects/${seg(projectIdentifier)}/folders`, json: { name, parentObjectIdentifier: parentObjectIdentifier ?? null } },
      opts,
    );
  }

  /** The document's content as a stream, through the `url` the service put on it. */
  download(document: Pick<Document, 'url' | 'name'>, opts: CallOptions<StreamResponse> = {}): Promise<StreamResponse> {
    if (!document.url) throw new FerryError(`document "${document.name ?? '?'}" carries no url to download its content from`);
    return this.t.stream({ method: 'GET', path: '', url: new URL(document.url, this.t.address.baseUrl).href }, opts);
  }
}
