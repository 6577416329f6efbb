// Builds the EmulatorContext handed to every route plugin, plus the core-only members
// (the core parts' stores and services) that the core's own plugins use.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { signedBlobPath } from './http/blob-urls.js';
import type { Clock } from './service/clock.js';
import { type Caller, type EmulatorContext, HttpError } from './context.js';
import { contentUrl } from './service/document-view.js';
import type { FaultInjector } from './service/faults.js';
import type { DocumentProcessor } from './service/processing.js';
import type { Stores } from './state/index.js';

export interface CoreContext extends EmulatorContext {
  /** Every part's state, the one registry (state/index.ts). */
  stores: Stores;
  processor: DocumentProcessor;
  faults: FaultInjector;
  clock: Clock;
  logger: Logger;
  audience: string;
  tokenTtlSeconds: number;
  tokenKey: Buffer;
  blobUrlKey: Buffer;
  /** Called by the authentication guard once the bearer token is verified. */
  setCaller(req: FastifyRequest, caller: Caller): void;
}

/** Every route plugin receives the CoreContext: the one context of the emulator's routes. */
export type CoreRoutePlugin = (app: FastifyInstance, ctx: CoreContext) => void | Promise<void>;

/** What the core context is made from: the parts it passes through as they are, and the base URL. */
export type CoreDependencies = Pick<
  CoreContext,
  'db' | 'events' | 'blobs' | 'stores' | 'processor' | 'faults' | 'clock' | 'logger' | 'audience' | 'tokenTtlSeconds' | 'baseUrl' | 'modes' | 'gate'
>;

export function createCoreContext(deps: CoreDependencies): CoreContext {
  const callers = new WeakMap<FastifyRequest, Caller>();
  const { stores, clock } = deps;
  const blobUrlKey = stores.meta.secret('blob-url-key');
  const signedBlobUrl = (blobKey: string, ttlSeconds: number, contentType: string): string => {
    const expiresAtSeconds = Math.floor(deps.clock.nowMs() / 1000) + ttlSeconds;
    return deps.baseUrl() + signedBlobPath({ key: blobKey, expiresAtSeconds, contentType }, blobUrlKey);
  };
  const caller = (req: FastifyRequest): Caller => {
    const found = callers.get(req);
    if (!found) throw new HttpError(401, 'Unauthorized', 'A bearer token is required.');
    return found;
  };
  return {
    db: deps.db,
    events: deps.events,
    blobs: deps.blobs,
    gate: deps.gate,
    stores,
    processor: deps.processor,
    faults: deps.faults,
    clock,
    logger: deps.logger,
    audience: deps.audience,
    tokenTtlSeconds: deps.tokenTtlSeconds,
    tokenKey: stores.meta.secret('token-signing-key'),
    blobUrlKey,
    setCaller: (req, found) => callers.set(req, found),
    caller,
    requireWrite(req) {
      if (!caller(req).permissions.includes('write')) throw new HttpError(403, 'Forbidden', 'This client is read-only.');
    },
    newId: () => randomUUID(),
    now: () => clock.nowIso(),
    notify(tenant, n) {
      // Every client acts as its own user; each of the tenant's users gets the notification.
      for (const client of stores.tenants.clientsOf(tenant)) {
        stores.notifications.add({
          objectIdentifier: randomUUID(),
          tenant,
          userId: client.clientId,
          dateAdded: clock.nowIso(),
          isRead: false,
          title: n.title,
          message: n.message,
          type: n.type,
          resourceIdentifiers: n.resourceIdentifiers ?? {},
        });
      }
    },
    uploadStats: (tenant, uploadIdentifier) => stores.documents.uploadStats(tenant, uploadIdentifier),
    projectExists: (tenant, projectIdentifier) => stores.projects.exists(tenant, projectIdentifier),
    organizationMetadata: (tenant, objectIdentifier) => stores.organizationMetadata.definition(tenant, objectIdentifier),
    organizationMetadataDefinitions: (tenant) => stores.organizationMetadata.definitions(tenant),
    baseUrl: deps.baseUrl,
    signedBlobUrl,
    modes: deps.modes,
    documentUrl(d) {
      if (deps.modes.contentRoute) return contentUrl(deps.baseUrl(), d);
      return signedBlobUrl(d.blobKey, deps.modes.linkTtlSeconds, d.contentType ?? 'application/octet-stream');
    },
  };
}
