// The Document response shape, built from a stored document.
import type { ListedDocument } from '../state/documents.js';

export interface DocumentViewOptions {
  /** The document's `url` (EmulatorContext.documentUrl). */
  url: (document: ListedDocument & { blobKey: string }) => string;
  /** `/folder/sub/name`, only when the caller asked for paths. */
  path?: string | null;
}

const TOKEN_CHARS = 4;

export function contentUrl(baseUrl: string, document: Pick<ListedDocument, 'projectIdentifier' | 'objectIdentifier'>): string {
  return `${baseUrl}/projects/${document.projectIdentifier}/documents/${document.objectIdentifier}/content`;
}

export function renderDocument(d: ListedDocument, options: DocumentViewOptions): Record<string, unknown> {
  return {
    objectIdentifier: d.objectIdentifier,
    name: d.name,
    parentObjectIdentifier: d.parentIdentifier,
    isDirectory: d.isDirectory,
    documentUploadObjectIdentifier: d.uploadIdentifier,
    contentType: d.contentType,
    size: d.size,
    dateAdded: d.dateAdded,
    uploadSuccessful: d.uploadSuccessful,
    indexingNotPossible: d.indexingNotPossible,
    unsupportedFileType: d.unsupportedFileType,
    unPackingComplete: null,
    unPackingFailed: null,
    uploadInProgress: d.uploadInProgress,
    hasChildren: d.hasChildren,
    isSystemFolder: false,
    tokenCount: d.tokenCount,
    metadataTokenCount: d.metadata ? d.metadata.reduce((sum, m) => sum + Math.ceil((m.key.length + m.value.length) / TOKEN_CHARS), 0) : null,
    url: d.blobKey ? options.url(d as ListedDocument & { blobKey: string }) : null,
    extension: d.extension,
    path: options.path ?? null,
    convertedToPdf: false,
    fileType: d.fileType,
    // Enum fields are not nullable in the contract: absent rather than null.
    ...(d.uploadFailedReason ? { uploadFailedReason: d.uploadFailedReason } : {}),
    resourceOwner: d.owner,
    progress: d.progress,
    ...(d.parentIdentifier ? { parent: { objectIdentifier: d.parentIdentifier, name: d.parentName, isDirectory: true } } : {}),
    ocrStrategy: d.ocrStrategy,
    ocrEngine: d.ocrEngine,
    coordinateExtractionStrategy: d.coordinateExtractionStrategy,
    documentUploadSource: d.source,
    pageCount: d.pageCount,
    ocrCreditsCost: d.ocrCreditsCost,
    layoutCreditsCost: d.layoutCreditsCost,
    metadata: d.metadata,
  };
}
