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
import { ApiError, FerryError } from '../errors.js';

/**
 * Content from this size on is read from its connection in blocks (src/api/bulk-dispatcher.ts):
 * a connection of its own for each, which costs less than the reads it saves only for large ones.
 */
const BULK_MIN = 8 * 1024 * 1024;

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
  /**
   * Metadata that names the content's sha256, sent as `metadataJson` after the file part, the
   * file hashed as it is sent (read once). Only for a service that reads form fields after the
   * file (the profile's `formOrder: any`, found by `ferry doctor --probe`). Takes the place of `metadata`.
   */
  metadataAfterFile?: (sha256: string) => Record<string, string>;
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
    // Settings first and the file last, so a streaming server knows them before the bytes arrive
    // (metadata made from the content's sha256 comes after it: metadataAfterFile).
    const parts: MultipartPart[] = [];
    if (params.ocrEngine) parts.push({ name: 'ocrEngine', value: params.ocrEngine });
    if (params.ocrStrategy) parts.push({ name: 'ocrStrategy', value: params.ocrStrategy });
    if (params.coordinateExtractionStrategy) parts.push({ name: 'coordinateExtractionStrategy', value: params.coordinateExtractionStrategy });
    const after = params.metadataAfterFile;
    if (params.metadata && !after) parts.push({ name: 'metadataJson', value: JSON.stringify(params.metadata) });
    parts.push({ name: 'file', file });
    if (after) parts.push({ name: 'metadataJson', fromSha256: (sha256) => JSON.stringify(after(sha256)) });
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

  /** The document's content as a stream, through the `url` the service put on it; a large one is read in blocks. */
  download(document: Pick<Document, 'url' | 'name'> & { size?: number | null | undefined }, opts: CallOptions<StreamResponse> = {}): Promise<StreamResponse> {
    if (!document.url) throw new FerryError(`document "${document.name ?? '?'}" carries no url to download its content from`);
    const bulk = (document.size ?? 0) >= BULK_MIN;
    return this.t.stream({ method: 'GET', path: '', url: new URL(document.url, this.t.address.baseUrl).href }, bulk ? { bulk, ...opts } : opts);
  }

  /**
   * The content from byte `offset` on, asked with `Range` (RFC 9110 14.2). `from` is where the body
   * given starts: `offset` when the service answered 206 for exactly that range, 0 when it sent the
   * whole content instead (it ignores Range, or the range did not hold: a 416, or a 206 for other
   * bytes, which `mismatch` then describes). `version` is the content's validator (its ETag, else
   * its Last-Modified), when the service gives one.
   */
  async downloadFrom(document: Pick<Document, 'url' | 'name'>, size: number, offset: number, opts: CallOptions<StreamResponse> = {}): Promise<RangedContent> {
    if (offset <= 0 || offset >= size) return whole(await this.download({ ...document, size }, opts));
    const headers = { ...opts.headers, range: `bytes=${offset}-` };
    let res: StreamResponse;
    try {
      res = await this.download({ ...document, size }, { ...opts, headers });
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 416) throw err;
      return { ...whole(await this.download({ ...document, size }, opts)), mismatch: `the service refused the range bytes=${offset}- with 416` };
    }
    if (res.status !== 206) return whole(res);
    const said = headerOf(res.headers, 'content-range');
    const expected = `bytes ${offset}-${size - 1}/${size}`;
    if (said?.trim() === expected) return { ...whole(res), from: offset };
    // Let go unread: the abort it reports is this call's own doing.
    res.body.on('error', () => undefined).destroy();
    return { ...whole(await this.download({ ...document, size }, opts)), mismatch: `asked for bytes ${offset}-${size - 1} of ${size}, the service answered 206 with Content-Range "${said ?? '(none)'}"` };
  }
}

/** Content from `from` on, as downloadFrom gives it. */
export interface RangedContent {
  body: StreamResponse['body'];
  /** As StreamResponse.drain: the body taken from the read buffer instead of through `body`. */
  drain?: StreamResponse['drain'];
  from: number;
  version?: string;
  /** Why a range asked for was not the one given, when it was not. */
  mismatch?: string;
}

function whole(res: StreamResponse): RangedContent {
  const version = headerOf(res.headers, 'etag') ?? headerOf(res.headers, 'last-modified');
  return { body: res.body, from: 0, ...(res.drain ? { drain: res.drain } : {}), ...(version !== undefined ? { version } : {}) };
}

function headerOf(headers: StreamResponse['headers'], name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}
