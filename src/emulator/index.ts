// ferry's local emulator of the document/playbook/assistant management service.
// startEmulator() serves the base API, the settings host (/settings) and the auth host
// (/auth) on one loopback port; see docs/emulator.md for every behaviour the spec leaves open.
import type { Socket } from 'node:net';
import { EventEmitter } from 'node:events';
import { join } from 'node:path';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { pino, type Logger } from 'pino';
import { signToken, type TokenClaims } from './http/auth.js';
import { createClock } from './service/clock.js';
import { DEFAULT_MODES, type EmulatorModes, type NotificationInput, type UploadStats } from './context.js';
import { Control, type PageCap } from './control/control.js';
import { controlRoutes } from './control/routes.js';
import { createCoreContext } from './core-context.js';
import { FaultInjector, type FaultSettings } from './service/faults.js';
import { DocumentProcessor, type ProcessingSettings } from './service/processing.js';
import type { RateLimitSettings } from './http/rate-limit.js';
import { routePlugins } from './routes/index.js';
import { SETTINGS_PREFIX } from './routes/models.js';
import { applySeed, defaultSeed, type SeedData, type TenantDescription } from './service/seed.js';
import { buildServer } from './server.js';
import type { Traffic } from './http/guards.js';
export type { Traffic } from './http/guards.js';
import { createDiskBlobStore, createMemoryBlobStore } from './state/blobs.js';
import { openDatabase } from './state/database.js';
import { createStores } from './state/index.js';
import { attachListingLag, ListingLag } from './state/listing-lag.js';
import { Snapshots } from './state/snapshots.js';
import { StateGate } from './http/state-gate.js';
import { ContractValidator, contractPath, type ContractViolation } from './http/validate.js';

export { parseFaultSpec, type FaultRule, type FaultSettings } from './service/faults.js';
export { loadSeedFile, defaultSeed, type SeedData, type TenantDescription } from './service/seed.js';
export type { ContractViolation } from './http/validate.js';
export type { ProcessingSettings, ProcessingDelays } from './service/processing.js';
export { Control } from './control/control.js';
export type { SnapshotInfo } from './state/snapshots.js';
export type { RateLimitSettings } from './http/rate-limit.js';

export const DEFAULT_AUDIENCE = 'https://api.ferry.local/v2';

export interface EmulatorOptions {
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** State (SQLite) and blobs live here and survive a restart; in memory when absent. */
  dataDir?: string;
  /** Replaces the default seed; applied only to an empty database. */
  seed?: SeedData;
  /** A spec string (see parseFaultSpec) or settings. */
  faults?: string | FaultSettings;
  tokenTtlSeconds?: number;
  audience?: string;
  processing?: ProcessingSettings;
  /** Per-client token bucket; off by default. */
  rateLimit?: RateLimitSettings;
  /** Check every response against src/contract/openapi.yaml; `throw` turns a mismatch into a 500. Off by default. */
  validateResponses?: boolean | 'throw';
  /** Lists answer with at most this many items whatever page size was asked for (silently). */
  maxPageSize?: number;
  /**
   * Lists and searches show a new item only this long (at most) after its create returned, and a
   * removed one this long after its removal: each item's delay is drawn in [0, lag] from its id
   * and `listingLagSeed`. Reading by id is never late. 0 (default): lists show everything at once.
   */
  listingLagMs?: number;
  listingLagSeed?: number;
  /**
   * The interface exactly as the spec shows it: no folder creation, no document-content route
   * (a document's `url` is a signed link). The mode options below override single answers.
   */
  strict?: boolean;
  folders?: EmulatorModes['folders'];
  dateCompleted?: EmulatorModes['dateCompleted'];
  streamFormat?: EmulatorModes['streamFormat'];
  search?: EmulatorModes['search'];
  searchCase?: EmulatorModes['searchCase'];
  folderCase?: EmulatorModes['folderCase'];
  timeResolutionMs?: number;
  linkTtlSeconds?: number;
  linkAuth?: EmulatorModes['linkAuth'];
  range?: EmulatorModes['range'];
  formOrder?: EmulatorModes['formOrder'];
  metadata?: EmulatorModes['metadata'];
  logger?: Logger;
  /** The control API under /_emulator/ (default on); false serves none of it. */
  control?: boolean;
  /** The token the control API wants; generated when absent (and given by describe()). */
  adminToken?: string;
  /** Serve https with this key and certificate (PEM), as the real service does: its URLs say https. */
  tls?: { key: string | Buffer; cert: string | Buffer };
}

/** What `ferry emulator` prints, as one JSON line. */
export interface EmulatorDescription {
  baseUrl: string;
  settingsUrl: string;
  authUrl: string;
  audience: string;
  tenants: TenantDescription[];
  /** The control API's token (absent with the control API off): a secret, as the clients' are. */
  adminToken?: string;
}

export interface EmulatorHandle extends EmulatorDescription {
  describe(): EmulatorDescription;
  /** Every contract mismatch seen so far (tests assert it stays empty). */
  readonly contractViolations: ContractViolation[];
  /** Requests so far (the token endpoint left out), and how many the rate limit refused with 429. */
  traffic(): Traffic;
  setFaults(settings: string | FaultSettings): void;
  /** Changes the listing lag on the fly (a service whose index falls behind). */
  setListingLag(ms: number): void;
  setCredits(tenant: string, credits: number): void;
  credits(tenant: string): number;
  /** Moves the emulator's clock (token expiry, signed URLs, dates). */
  advanceClock(ms: number): void;
  notify(tenant: string, notification: NotificationInput): void;
  uploadStats(tenant: string, uploadIdentifier: string): UploadStats;
  /**
   * Deletes a document as a user would in the service's web interface (the API shows no document
   * delete): for tests of a destination changed behind ferry's back. False when there was none.
   */
  deleteDocument(objectIdentifier: string): boolean;
  /** A signed, expiring download URL for a blob key (what ctx.signedBlobUrl gives route plugins). */
  signedBlobUrl(blobKey: string, ttlSeconds: number, contentType: string): string;
  /** Signs a token with the emulator's key, for tests of expired or odd tokens. */
  signToken(claims: TokenClaims): string;
  /** What the control API does (reset, snapshots, processing, ...): the same functions its routes call. */
  readonly control: Control;
  close(): Promise<void>;
}

const DESCRIPTION_KEY = 'seed-description';
/** The seed the state was first made from: what a reset goes back to, whatever --seed a later start names. */
const SEED_KEY = 'seed-data';

export async function startEmulator(options: EmulatorOptions = {}): Promise<EmulatorHandle> {
  const host = options.host ?? '127.0.0.1';
  const audience = options.audience ?? DEFAULT_AUDIENCE;
  const logger = options.logger ?? pino({ level: 'silent' });
  const validator = options.validateResponses ? loadValidator() : undefined;
  const modes = modesOf(options);
  const db = openDatabase(options.dataDir, modes);
  const clock = createClock(modes.timeResolutionMs);
  const listingLag = new ListingLag(() => clock.nowMs(), options.listingLagSeed ?? 1);
  listingLag.set(options.listingLagMs ?? 0);
  attachListingLag(db, listingLag);
  const stores = createStores(db);
  const blobs = options.dataDir ? createDiskBlobStore(join(options.dataDir, 'blobs')) : createMemoryBlobStore();
  const events = new EventEmitter();
  const faults = new FaultInjector(options.faults ?? {});
  const gate = new StateGate();
  const processor = new DocumentProcessor({ documents: stores.documents, tenants: stores.tenants, blobs, events, faults, logger, gate }, options.processing);

  if (stores.tenants.isEmpty()) {
    const seed = options.seed ?? defaultSeed();
    const tenants = db.transaction(() => applySeed(stores, seed, clock.nowIso()))();
    stores.meta.set(DESCRIPTION_KEY, JSON.stringify(tenants));
    stores.meta.set(SEED_KEY, JSON.stringify(seed));
  }
  const description = (): TenantDescription[] => JSON.parse(stores.meta.get(DESCRIPTION_KEY) ?? '[]') as TenantDescription[];
  const firstSeed = stores.meta.get(SEED_KEY);

  let baseUrl = '';
  const ctx = createCoreContext({
    db,
    events,
    blobs,
    stores,
    processor,
    faults,
    clock,
    logger,
    audience,
    tokenTtlSeconds: options.tokenTtlSeconds ?? 3600,
    baseUrl: () => baseUrl,
    modes,
    gate,
  });
  const contractViolations: ContractViolation[] = [];
  const traffic: Traffic = { requests: 0, throttled: 0, bytesSent: 0, bytesReceived: 0 };
  const pageCap: PageCap = { max: options.maxPageSize };
  // Snapshots live under --data (listed after a restart), or in a folder of this process's own.
  const scratch = options.dataDir ? undefined : mkdtempSync(join(tmpdir(), 'ferry-emulator-'));
  const snapshots = new Snapshots(db, blobs, options.dataDir ? join(options.dataDir, 'snapshots') : join(scratch as string, 'snapshots'));
  const open = new Set<Socket>();
  const control = new Control({
    db,
    stores,
    blobs,
    gate,
    processor,
    faults,
    listingLag,
    clock,
    modes,
    pageCap,
    snapshots,
    events,
    traffic: () => ({ ...traffic, bytesSent: traffic.bytesSent + [...open].reduce((n, s) => n + s.bytesWritten, 0), bytesReceived: traffic.bytesReceived + [...open].reduce((n, s) => n + s.bytesRead, 0) }),
    seed: firstSeed ? (JSON.parse(firstSeed) as SeedData) : (options.seed ?? defaultSeed()),
    describeTenants: (tenants) => stores.meta.set(DESCRIPTION_KEY, JSON.stringify(tenants)),
    start: {
      faults: options.faults ?? {},
      listingLagMs: options.listingLagMs ?? 0,
      modes: { ...modes },
      processing: processor.settings,
      maxPageSize: options.maxPageSize,
    },
  });
  const controlOn = options.control !== false;
  const adminToken = controlOn ? (options.adminToken ?? randomBytes(24).toString('base64url')) : undefined;
  const validationMode = options.validateResponses === 'throw' ? 'throw' : 'record';
  const removeScratch = () => {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  };
  let app: Awaited<ReturnType<typeof buildServer>>;
  try {
    app = await buildServer(ctx, {
      routes: adminToken
        ? [...routePlugins, controlRoutes({ control, adminToken, validator: options.validateResponses ? loadValidator(controlContractPath()) : undefined, validationMode, violations: contractViolations })]
        : routePlugins,
      traffic,
      ...(options.rateLimit ? { rateLimit: options.rateLimit } : {}),
      ...(validator ? { validator } : {}),
      validationMode,
      violations: contractViolations,
      pageCap,
      ...(options.tls ? { tls: options.tls } : {}),
    });
    await app.listen({ host, port: options.port ?? 0 });
  } catch (error) {
    db.close();
    removeScratch();
    throw error;
  }
  // Bytes sent and received: those of connections closed, and, when asked, those of the open ones so far.
  app.server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => {
      open.delete(socket);
      traffic.bytesSent += socket.bytesWritten;
      traffic.bytesReceived += socket.bytesRead;
    });
  });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  baseUrl = `${options.tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`;
  processor.resumePending();
  logger.info({ baseUrl }, 'emulator listening');

  const describe = (): EmulatorDescription => ({
    baseUrl,
    settingsUrl: `${baseUrl}${SETTINGS_PREFIX}`,
    authUrl: `${baseUrl}/auth`,
    audience,
    tenants: description(),
    ...(adminToken ? { adminToken } : {}),
  });
  let closing: Promise<void> | undefined;
  return {
    ...describe(),
    describe,
    contractViolations,
    control,
    traffic: () => control.traffic(),
    setFaults: (settings) => control.setFaults(settings),
    setListingLag: (ms) => control.setListingLag(ms),
    setCredits: (tenant, credits) => control.setCredits(tenant, credits),
    credits: (tenant) => control.credits(tenant),
    advanceClock: (ms) => {
      control.advanceClock(ms);
    },
    notify: (tenant, notification) => ctx.notify(tenant, notification),
    uploadStats: (tenant, uploadIdentifier) => ctx.uploadStats(tenant, uploadIdentifier),
    deleteDocument: (objectIdentifier) => {
      const { removed, blobKey } = stores.documents.removeOne(objectIdentifier);
      if (blobKey) blobs.delete(blobKey);
      return removed;
    },
    signedBlobUrl: (blobKey, ttlSeconds, contentType) => ctx.signedBlobUrl(blobKey, ttlSeconds, contentType),
    signToken: (claims) => signToken(claims, ctx.tokenKey),
    close: () =>
      (closing ??= (async () => {
        await app.close();
        await processor.close();
        db.close();
        removeScratch();
      })()),
  };
}

/** The answers to what the spec leaves open: the defaults, `strict`, then each mode option. */
export function modesOf(options: Pick<EmulatorOptions, 'strict' | 'folders' | 'dateCompleted' | 'streamFormat' | 'search' | 'searchCase' | 'folderCase' | 'timeResolutionMs' | 'linkTtlSeconds' | 'linkAuth' | 'metadata' | 'range' | 'formOrder'>): EmulatorModes {
  return {
    folders: options.folders ?? (options.strict ? 'none' : DEFAULT_MODES.folders),
    contentRoute: !options.strict,
    dateCompleted: options.dateCompleted ?? DEFAULT_MODES.dateCompleted,
    streamFormat: options.streamFormat ?? DEFAULT_MODES.streamFormat,
    search: options.search ?? DEFAULT_MODES.search,
    searchCase: options.searchCase ?? DEFAULT_MODES.searchCase,
    folderCase: options.folderCase ?? DEFAULT_MODES.folderCase,
    timeResolutionMs: options.timeResolutionMs ?? DEFAULT_MODES.timeResolutionMs,
    linkTtlSeconds: options.linkTtlSeconds ?? DEFAULT_MODES.linkTtlSeconds,
    linkAuth: options.linkAuth ?? DEFAULT_MODES.linkAuth,
    metadata: options.metadata ?? DEFAULT_MODES.metadata,
    range: options.range ?? DEFAULT_MODES.range,
    formOrder: options.formOrder ?? DEFAULT_MODES.formOrder,
  };
}

/** The control API's own contract, beside the docs (read only when responses are checked). */
function controlContractPath(): string {
  return join(contractPath(), '..', '..', '..', 'docs', 'emulator-control.openapi.yaml');
}

function loadValidator(path = contractPath()): ContractValidator {
  if (!existsSync(path)) throw new Error(`validateResponses needs the contract at ${path}, which does not exist.`);
  return ContractValidator.of(path);
}
