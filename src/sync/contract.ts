// The engine's contract with its ends: where an entry goes (Placement), what a write is told
// (WriteContext), what a destination must and may do (Destination), what a cold start adopts, and
// the options of a transfer. The engine (engine.ts), its cold start (cold-start.ts) and its dry
// run (plan.ts) share these; backends implement them.
import type { EntryAttributes, FileEntry, Source } from './types.js';
import type { CheckpointStore, ItemFingerprint, ItemRecord, WrittenItem } from '../store/types.js';
import type { Drifted } from './drift.js';
import type { AdaptiveConcurrency } from '../runner/adaptive.js';
import type { Bandwidth } from './bandwidth.js';
import type { JobContext } from '../runner/job.js';
import type { Slot } from '../slots.js';
import type { ItemRetryOptions } from '../runner/item-retry.js';
import type { ProgressState } from '../runner/progress.js';
import type { KeySet } from '../hashed-keys.js';
import type { PresentDocument } from './judge.js';

/** Results (superseded, problems) listed in a summary or a plan; the rest are counted. */
export const MAX_LISTED = 1_000;

/** Where an entry goes, as the destination resolved it before the intent is written. */
export interface Placement {
  /** The destination's parent (a remote folder id; null for the root). Recorded with the intent. */
  parentId: string | null;
}

/** Ids a run's writes became: asked before one is taken for another entry. */
export type Claimed = Pick<KeySet, 'has'>;

export interface WriteContext {
  /** The batch every write of this run belongs to. */
  uploadId: string;
  /** What the entry became last time, if anything (a changed entry replaces it). */
  previous: string | null;
  /** Results already recorded in this run: never an answer for another entry. */
  claimed: Claimed;
  /** Fires when the run is asked to stop: a write sends no new attempt after it (see stopBeforeSend). */
  stopping?: AbortSignal;
  /** Fires when the run cuts off what is in flight (a limit under --cutoff-mode hard): the write is abandoned mid-way. */
  cancel?: AbortSignal;
  /** Awaited right before each attempt of the write leaves: throws when the run may write no more (its lease lost). */
  gate?: () => Promise<void>;
  /** Asked synchronously as the write is handed to the wire: false holds it back for `gate` to decide. */
  fence?: () => boolean;
  /** The pool slot the write holds: its calls give it to another entry while they wait out a retry. */
  slot?: Slot;
  /**
   * When an earlier attempt of this entry, in this run, failed (performance.now()): it may have
   * landed all the same (an answer lost, and the look that would have told failed too). A
   * destination that can tell looks before it writes again.
   */
  failedAt?: number;
}

/** What the destination already holds at a key, as a cold start adopts it into the store. */
export interface Adoptable {
  key: string;
  remoteId: string;
  size: number;
  /** The source's time recorded on the destination, or UNKNOWN_MTIME. */
  mtimeMs: number;
  /** The change marker as this job records it (the content's sha256, a source document's id), or null. */
  sha256: string | null;
  parentId: string | null;
  /** What the document carries beside its content, when the run compares it (TransferOptions.adoptedAttributes). */
  attributes?: EntryAttributes | undefined;
}

/** An older document at a key the inventory adopted, with the same content: the file written twice. */
export interface AdoptedCopy {
  key: string;
  remoteId: string;
  copy: true;
}

export interface Destination<P extends Placement = Placement> {
  readonly description: string;
  /** Checks the destination can be used; throws a clear error if not. */
  prepare(): Promise<void>;
  /** Items an earlier run left in flight: those that did land, by source key, with what they became. */
  settle(inFlight: ItemRecord[]): Promise<Map<string, { remoteId: string }>>;
  /** Makes a folder exist (empty folders are carried too). */
  ensureFolder(key: string): Promise<void>;
  place(entry: Pick<FileEntry, 'key' | 'size' | 'mtimeMs' | 'marker' | 'expectedSha256'>): Promise<P>;
  /**
   * Writes the entry once; an unclear failure is settled here before any repeat. `found`: the
   * entry was already there (counted reconciled, nothing written). `storedAs`: the destination
   * kept the content under another name than the entry's (a service that reads names its own
   * way); the entry is then failed with that reason, yet recorded with its id, so that no later
   * run writes it a second time.
   */
  write(entry: FileEntry, placement: P, ctx: WriteContext): Promise<{ remoteId: string; found?: boolean; sha256?: string | undefined; storedAs?: string }>;
  /**
   * What the destination holds, listed once when the store knows nothing of it (a fresh state
   * directory, a renamed profile, another machine) or on --resync: the service is the truth.
   */
  inventory?(signal: AbortSignal): AsyncIterable<Adoptable | AdoptedCopy>;
  /** Once its inventory has begun: how many documents the destination says it holds (an upper bound). */
  readonly heldCount?: number | undefined;
  /**
   * False when a write can be recognised at the destination without an intent (a local file
   * renamed into place with the entry's size and time): the engine then writes no intent first.
   */
  readonly needsIntent?: boolean;
  /**
   * False when its writes never ask `WriteContext.claimed` (a local file is its own answer): the
   * engine then keeps no set of the ids this run's writes became (a pull of a million: 16-24 MiB).
   */
  readonly asksClaimed?: boolean;
  /**
   * Whether the destination still holds what these items wrote, when it can change behind
   * ferry's back (a local folder): the keys it does not, with why. Asked on every run, before the
   * walk (sync/drift.ts); the service is never asked: it keeps every document for good.
   */
  holds?(items: WrittenItem[]): Promise<Map<string, Drifted>>;
  /** Told once how many entries the source expects to give (Source.expectedCount), to size what it keeps per entry. */
  expect?(count: number): void;
  /**
   * What the item `known` wrote carries now (its metadata and settings), asked of the destination
   * itself: a dry run names the keys a changed row would change. Undefined when it is not found.
   */
  carried?(entry: FileEntry, known: ItemFingerprint): Promise<EntryAttributes | undefined>;
  /**
   * The document a warm run would find at the entry's path holding its content (written by another
   * store since), with the identity of what it carries: judged by judgePresent (judge.ts), so that a
   * dry run plans as the run will do. Undefined when there is none, or the destination does not look.
   */
  presentFor?(entry: FileEntry, placement: P): Promise<PresentDocument | undefined>;
  /** The destination's part of the summary (folders, renamed names…). */
  report(): Record<string, unknown>;
}

export interface TransferOptions<P extends Placement> {
  source: Source;
  destination: Destination<P>;
  store: CheckpointStore;
  /** Identity of the items in the checkpoint store. */
  jobKey: string;
  ctx: JobContext;
  concurrency?: AdaptiveConcurrency | undefined;
  /** Largest number of writes at once when no limiter is given. */
  maxConcurrency?: number | undefined;
  itemRetry?: Partial<ItemRetryOptions> | undefined;
  /** Compare content by sha256 instead of size and change marker. */
  checksum?: boolean | undefined;
  /** Write exactly these keys again, whatever the checkpoint says (retries of failed items). */
  only?: ReadonlySet<string> | undefined;
  /** The live numbers a progress display reads. */
  progress?: ProgressState | undefined;
  /** What "deleted at the source" means for this destination (reported, never applied). */
  deletionNote?: string | undefined;
  /** List the destination and adopt what it holds even though the store knows it (--resync). */
  resync?: boolean | undefined;
  /**
   * Files this run leaves alone (--min-size, --max-age…): neither carried nor counted, and not
   * taken for files gone from the source either.
   */
  filter?: ((entry: FileEntry) => boolean) | undefined;
  /** --bwlimit: the content of every entry written passes through this one budget. */
  bandwidth?: Bandwidth | undefined;
  /**
   * A cold start's identity of what a found document carries, for the entry at its key
   * (FileEntry.attributesDigest); null where the run does not compare it (a manifest's, src/manifest).
   */
  adoptedAttributes?: ((key: string, attributes: EntryAttributes | undefined) => string | null) | undefined;
}

/** What a cold start found on the destination. */
export interface ColdStart {
  /** Why the destination was listed: the store knew nothing of it, or --resync. */
  reason: 'cold' | 'resync';
  /** Files the destination holds, adopted as uploaded (the newest at each path). */
  adopted: number;
  /** Of those, how many carried no fingerprint: recognised by path and size alone. */
  withoutFingerprint: number;
  /** Older documents at an adopted path with the same content (written twice), left as they are. */
  copies: number;
}
