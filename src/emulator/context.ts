// The seam between the emulator's core and its route plugins. Each API part is a fastify plugin
// `(app, ctx) => void` that reaches state only through its context: the one store registry
// (CoreContext's `stores`, every part's tables created once in state/index.ts), never another's tables.
import type Database from 'better-sqlite3';
import type { EventEmitter } from 'node:events';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** What the bearer token says about the caller (verified by the core before any route runs). */
export interface Caller {
  tenant: string;
  clientId: string;
  /** Permission claims: 'read' and, for full clients, 'write'. */
  permissions: readonly string[];
  /** Stable user id the caller acts as (resourceOwner.id, notification owner). */
  userId: string;
  userName: string;
  userEmail: string;
}

/** A counter snapshot of the documents uploaded under one documentUploadIdentifier. */
export interface UploadStats {
  totalDocumentCount: number;
  processingDocumentCount: number;
  completedDocumentCount: number;
  failedDocumentCount: number;
  totalSizeBytes: number;
  /** One counter per UploadFailedReason value (all present, zero when none). */
  failedReasonSummary: Record<string, number>;
  /** fileType value -> count. */
  fileTypeSummary: Record<string, number>;
}

export interface MetadataDefinition {
  objectIdentifier: string;
  name: string;
  description: string | null;
  dataType: string;
  isRequired: boolean;
  options: { name: string; objectIdentifier: string }[];
}

export interface NotificationInput {
  title: string;
  message: string;
  type: string;
  resourceIdentifiers?: Record<string, string>;
}

/** Events the core emits; plugins may listen. */
export interface EmulatorEvents {
  /** A document finished background processing (successfully or not). */
  documentProcessed: { tenant: string; projectIdentifier: string; documentIdentifier: string; uploadIdentifier: string };
  /** A project was deleted; parts drop what they keep for it. */
  projectDeleted: { tenant: string; projectIdentifier: string };
  /** The whole state was reset or restored (src/emulator/control/): parts start the work the new state holds, as after a restart. */
  stateReplaced: Record<string, never>;
}

/**
 * Where the spec leaves a behaviour open, the answer this emulator gives (docs/emulator.md has the
 * table). The defaults are ferry's documented choices; `--strict` and the mode flags pick the other
 * plausible answers, so ferry is also tested against a service that behaves otherwise.
 */
export interface EmulatorModes {
  /** `extension`: POST /projects/{p}/folders creates folders; `none`: no such route (404), as the spec shows none. */
  folders: 'extension' | 'none';
  /** The document-content extension route; without it a document's `url` is a signed, expiring link. */
  contentRoute: boolean;
  /** `when-processed`: dateCompleted is set once nothing of the upload is processing; `at-patch`: at PATCH .../complete. */
  dateCompleted: 'when-processed' | 'at-patch';
  /** What `stream: true` answers: `events` (deltas, the message, done), `json` (the Message as JSON), `no-final` (deltas and done only). */
  streamFormat: 'events' | 'json' | 'no-final';
  /** How `searchText` matches a name: anywhere in it, at its start, or whole words. */
  search: 'substring' | 'prefix' | 'word';
  /** Whether `searchText` tells upper from lower case. */
  searchCase: 'insensitive' | 'sensitive';
  /** Whether two folder names that differ only by case (or Unicode form) are two folders (`sensitive`) or one, the second a 409. */
  folderCase: 'insensitive' | 'sensitive';
  /** The granularity of the times the service gives (`dateAdded`…), ms: 1 gives every millisecond. */
  timeResolutionMs: number;
  /** How long a signed document link (no content route) works, s. */
  linkTtlSeconds: number;
  /** `none`: a signed link works on its own; `token`: it also wants the bearer token. */
  linkAuth: 'none' | 'token';
  /** Whether an upload's `metadataJson` is kept as the document's `metadata`. */
  metadata: 'kept' | 'dropped';
  /** `honoured`: a content download answers `Range` with 206 (RFC 9110); `ignored`: always 200 and the whole body. */
  range: 'honoured' | 'ignored';
  /** `any`: an upload's form fields are read wherever they come; `fields-first`: those after the file part are ignored, as S3's POST uploads ignore them. */
  formOrder: 'any' | 'fields-first';
}

export const DEFAULT_MODES: EmulatorModes = {
  folders: 'extension',
  contentRoute: true,
  dateCompleted: 'when-processed',
  streamFormat: 'events',
  search: 'substring',
  searchCase: 'insensitive',
  folderCase: 'insensitive',
  timeResolutionMs: 1,
  linkTtlSeconds: 3600,
  linkAuth: 'none',
  metadata: 'kept',
  range: 'honoured',
  formOrder: 'any',
};


export interface EmulatorContext {
  /** The answers to what the spec leaves open. */
  modes: EmulatorModes;
  /** The `url` of a document with content: the content route, or a signed link when it is off. */
  documentUrl(document: { projectIdentifier: string; objectIdentifier: string; blobKey: string; contentType: string | null }): string;
  db: Database.Database;
  /** Typed emitter for EmulatorEvents (emit/on with the event names above). */
  events: EventEmitter;
  /** The caller of this request; the core has already answered 401 when there is none. */
  caller(req: FastifyRequest): Caller;
  /** Throws an HttpError 403 unless the caller holds `write`. Call first in every write route. */
  requireWrite(req: FastifyRequest): void;
  /** New uuid v4. */
  newId(): string;
  /** The emulator's clock as an ISO string (tests may move it). */
  now(): string;
  /** Stores a notification for this tenant's user(s). */
  notify(tenant: string, n: NotificationInput): void;
  /** Counters over the documents whose documentUploadObjectIdentifier is `uploadIdentifier`. */
  uploadStats(tenant: string, uploadIdentifier: string): UploadStats;
  /** True while the given project exists for this tenant. */
  projectExists(tenant: string, projectIdentifier: string): boolean;
  /** The tenant's organization metadata definition (with its current options), if it exists. */
  organizationMetadata(tenant: string, objectIdentifier: string): MetadataDefinition | undefined;
  /** Every organization metadata definition of the tenant (to resolve a definition by name). */
  organizationMetadataDefinitions(tenant: string): MetadataDefinition[];
  /** The absolute base URL the emulator serves (for download URLs). */
  baseUrl(): string;
  /** Creates a short-lived signed URL for a blob key; the core serves it without auth. */
  signedBlobUrl(blobKey: string, ttlSeconds: number, contentType: string): string;
  /** Blob storage shared by parts (memory or --data dir). */
  blobs: BlobStore;
  /** Tells work under way that the state was reset or restored meanwhile (src/emulator/http/state-gate.ts). */
  gate: Gate;
}

/** What work under way asks of the state gate (src/emulator/http/state-gate.ts). */
export interface Gate {
  /** The generation of the state now. */
  readonly now: number;
  /** Whether nothing replaced the state since `since`. */
  stillCurrent(since: number): boolean;
  /** Throws the 503 of a request whose state was replaced since `since`. */
  check(since: number): void;
  /** A body streaming into the state, ended if the state is replaced first; returns its release. */
  track(stream: { destroy(error?: Error): unknown }): () => void;
}

export interface BlobStore {
  /** Streams `source` into the store under `key`; resolves to the byte count. */
  put(key: string, source: NodeJS.ReadableStream): Promise<number>;
  /** The stored bytes, or only those from `start` to `end` (both inclusive). */
  get(key: string, range?: { start: number; end: number }): NodeJS.ReadableStream | undefined;
  has(key: string): boolean;
  /** The stored byte count, or undefined when nothing is stored under `key`. */
  size(key: string): number | undefined;
  delete(key: string): void;
}

/** Thrown by handlers; the core turns it into the status and a ProblemDetails body. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail?: string,
  ) {
    super(detail ?? title);
    this.name = 'HttpError';
  }
}

export type Reply = FastifyReply;
