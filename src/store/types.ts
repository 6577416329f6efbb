// The checkpoint store's narrow interface. The SQLite implementation is one of possibly many:
// nothing outside src/store knows about SQL.

/** `limit`: stopped at its window (--max-duration, --max-transfer, --max-files); the next run carries on. */
export type RunStatus = 'running' | 'succeeded' | 'failed' | 'aborted' | 'interrupted' | 'limit';

/** Where an item stands. `in-flight`: its intent is written (before a request that creates something), its outcome is not. */
export type ItemState = 'pending' | 'in-flight' | 'uploaded' | 'failed' | 'skipped';

export interface RunCounts {
  discovered: number;
  uploaded: number;
  /** Met again as it was: nothing to do (counted apart from `skipped`, which always has a reason). */
  unchanged: number;
  /** Not carried, each with its reason (a symbolic link, a name that cannot be written…). */
  skipped: number;
  failed: number;
  reconciled: number;
  [extra: string]: number;
}

export interface RunRecord {
  id: number;
  job: string;
  /** Identity of what the job writes to; runs with the same key share items and a lock. */
  jobKey: string;
  /** The job's parameters as given (never secrets). */
  params: Record<string, unknown>;
  status: RunStatus;
  startedAt: string;
  endedAt: string | null;
  counts: RunCounts;
  bytes: number;
  /** The documentUploadIdentifier all uploads of this run carry. */
  uploadId: string | null;
  errors: string[];
}

export interface ItemRecord {
  jobKey: string;
  /** The item's path relative to the source root, with `/` separators. */
  sourceKey: string;
  size: number;
  mtimeMs: number;
  sha256: string | null;
  /** The identity of what the document carries beside its content (a manifest row); null where no row applied. */
  attrs: string | null;
  state: ItemState;
  /** The service's id of the document this item became. */
  remoteId: string | null;
  /** Ids of earlier documents this item replaced (the service cannot delete them). */
  supersededIds: string[];
  /** The batch the last upload attempt belonged to, for settling after a crash. */
  uploadId: string | null;
  /** Remote folder the item was sent to. */
  parentId: string | null;
  runId: number | null;
  attempts: number;
  lastError: string | null;
  updatedAt: string;
}

/** An item held as written, as a destination checks it. */
export type WrittenItem = Pick<ItemRecord, 'sourceKey' | 'remoteId' | 'size' | 'mtimeMs'>;

/** What deciding skip-or-upload needs of an item: cheaper to read than the whole record. */
export type ItemFingerprint = Pick<ItemRecord, 'state' | 'remoteId' | 'size' | 'mtimeMs' | 'sha256'> & Partial<Pick<ItemRecord, 'attrs'>>;

export interface StartRun {
  job: string;
  jobKey: string;
  params: Record<string, unknown>;
  uploadId: string | null;
}

/** What an item is about to become, written before the request that creates it. */
export interface Intent {
  size: number;
  mtimeMs: number;
  sha256: string | null;
  /** The identity of what the document carries beside its content (a manifest row), when a row applied. */
  attrs?: string | null;
  uploadId: string;
  parentId: string | null;
  runId: number;
}

export interface LockHolder {
  runId: number;
  pid: number;
  host: string;
  acquiredAt: string;
}

export interface CheckpointStore {
  /**
   * What a command ferry tells its user to run next needs to find this store and its tenant
   * again: '' for the profile's default store, else its flags (` -p NAME --state FILE`), quoted.
   */
  readonly reopenFlags: string;
  // Runs
  startRun(run: StartRun): RunRecord;
  /** Takes over an earlier run (resume): same id and upload batch, status back to running. */
  reopenRun(runId: number): RunRecord;
  updateRun(runId: number, patch: Partial<Pick<RunRecord, 'counts' | 'bytes' | 'errors'>>): void;
  finishRun(runId: number, status: RunStatus, patch?: Partial<Pick<RunRecord, 'counts' | 'bytes' | 'errors'>>): RunRecord;
  getRun(runId: number): RunRecord | undefined;
  listRuns(filter?: { job?: string; limit?: number }): RunRecord[];

  // Locks: one live holder per job key, whatever process it is in.
  /**
   * Takes the lock for the acquisition `token`, or returns who holds it. A holder whose process
   * is gone is replaced (its run marked interrupted). Taking it again with the same token only
   * records the run now working under it. `replaced`: the tokens of the dead holder taken over and of the dead holders it had taken over
   * from (newest first): their leases on the service are dead too.
   */
  acquireLock(jobKey: string, token: string, runId?: number): { ok: true; replaced?: readonly string[] } | { ok: false; holder: LockHolder };
  releaseLock(jobKey: string, token: string): void;

  // Items
  getItem(jobKey: string, sourceKey: string): ItemRecord | undefined;
  /** The fields `decide` needs, for the per-file hot path. */
  fingerprint(jobKey: string, sourceKey: string): ItemFingerprint | undefined;
  /** The same for a batch of files at once (absent keys are unknown items). */
  fingerprints(jobKey: string, sourceKeys: readonly string[]): Map<string, ItemFingerprint>;
  /** Durably records the intent to create `item` on the service, before the request goes out. */
  recordIntent(jobKey: string, sourceKey: string, intent: Intent): void;
  /** The same for several items in one commit (writers that start together share it). */
  recordIntents(jobKey: string, intents: readonly { sourceKey: string; intent: Intent }[]): void;
  /** Results are batched: they are written with the next flush (or within `flushIntervalMs`). */
  recordUploaded(jobKey: string, sourceKey: string, result: { remoteId: string; size: number; mtimeMs: number; sha256: string | null; parentId: string | null; attrs?: string | null }): void;
  /** An uploaded item found with the same content under another time: the time is noted (batched). */
  recordSameContent(jobKey: string, sourceKey: string, seen: { mtimeMs: number; sha256: string }): void;
  recordFailed(jobKey: string, sourceKey: string, failure: { error: string; size?: number; mtimeMs?: number; runId: number }): void;
  /** Items whose intent was written but whose outcome was not: they must be settled before any new upload. */
  inFlight(jobKey: string): ItemRecord[];
  /** Local paths of the items that became these documents (remote id -> source key). */
  sourceKeysByRemoteId(jobKey: string, remoteIds: readonly string[]): Map<string, string>;
  /** Source keys of the items that were uploaded, streamed (cheap: for spotting local deletions). */
  uploadedKeys(jobKey: string): IterableIterator<string>;
  /** Items held as written, a page at a time in key order after `after` (a destination checking it still holds them). */
  writtenAfter(jobKey: string, after: string, limit: number): WrittenItem[];
  /**
   * The destination no longer holds what this item wrote (a local file deleted or changed by
   * hand): it is no longer written, and the next walk decides it again, `why` kept as its error.
   */
  recordDrift(jobKey: string, sourceKey: string, why: string): void;
  /** How many items are uploaded (a run that saw that many of them saw them all). */
  uploadedCount(jobKey: string): number;
  /** Whether any item is uploaded (none: a run cannot find one gone from the source). */
  hasUploaded(jobKey: string): boolean;
  /**
   * The digest of a group of items (chunk `chunk` of the files of `folder`) recorded when every one
   * of them was uploaded with the fingerprint the digest covers. Any later write to an item of
   * that folder forgets it.
   */
  groupDigest(jobKey: string, folder: string, chunk: number): string | undefined;
  /** Batched, in order with the results recorded before it. */
  setGroupDigest(jobKey: string, folder: string, chunk: number, digest: string): void;

  // What the service holds (the service is the truth; the store is a cache of it)
  /** When the destination was last listed and adopted, if ever. */
  /**
   * Notes that the job skipped `sourceKey` for `reason` in run `runId`; true when an earlier run
   * of the job already said so (the summary then counts it instead of naming it again).
   */
  noticeSeen(jobKey: string, sourceKey: string, reason: string, runId: number): boolean;
  listedAt(jobKey: string): string | undefined;
  recordListed(jobKey: string, documents: number): void;
  /** Records documents found at the destination as uploaded items, in one transaction (a cold start's listing, a page at a time). */
  adopt(jobKey: string, items: readonly { sourceKey: string; remoteId: string; size: number; mtimeMs: number; sha256: string | null; parentId: string | null; attrs?: string | null }[]): void;
  /** Forgets what the store believes is uploaded (before a --resync adopts the listing instead). */
  forgetUploaded(jobKey: string): void;

  // Remote folders, by relative path
  getFolder(jobKey: string, relPath: string): string | undefined;
  setFolder(jobKey: string, relPath: string, remoteId: string): void;
  /** Several folders at once, one commit (a cold start learns every folder a listing holds). */
  setFolders(jobKey: string, folders: readonly { relPath: string; remoteId: string }[]): void;

  /** Writes batched results now. */
  flush(): void;
  close(): void;
}
