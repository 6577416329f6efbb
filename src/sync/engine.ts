// The transfer engine: moves the entries of a Source to a Destination exactly once, knowing no
// backend (rclone's fs/sync is the model). It owns what every direction shares:
//  - the accounting invariant: each entry the source holds ends as exactly one of uploaded
//    (written), reconciled, skipped or failed, each with its reason;
//  - exactly once: before a write its intent is committed to the checkpoint store; items an
//    earlier run left in flight are settled by the destination before anything new is written;
//  - the bounded backlog between the listing and the writes, adaptive concurrency, item retries;
//  - what changed since the last run (size and change marker), superseded and vanished entries.
// Destinations decide where an entry goes and how it is written; sources what there is.
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { SourceGoneError, type EntryAttributes, type FileEntry, type Source, type SourceEntry } from './types.js';
import type { CheckpointStore, ItemFingerprint, ItemRecord, WrittenItem } from '../store/types.js';
import { attributeChanges, EXPLAINED, type AttributeChange } from './attribute-changes.js';
import { recheckWritten, type Drifted, type DriftReport } from './drift.js';
import { AdaptiveConcurrency, DEFAULT_CONCURRENCY } from '../runner/adaptive.js';
import type { Bandwidth } from './bandwidth.js';
import { noteError, noteProblem, type JobContext } from '../runner/job.js';
import type { Slot } from '../slots.js';
import { runPool } from '../runner/pool.js';
import { DEFAULT_ITEM_RETRY, isFatal, isThrottle, withItemRetries, type ItemRetryOptions } from '../runner/item-retry.js';
import type { ProgressState } from '../runner/progress.js';
import { attributesChanged, decide, UNKNOWN_MTIME } from './decide.js';
import { sha256Of } from './checksum.js';
import { KeySet, SeenSet } from '../hashed-keys.js';
import { IntentWriter } from './intents.js';
import { readAhead } from './read-ahead.js';
import { markOf } from '../marks.js';

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
  place(entry: Pick<FileEntry, 'key' | 'size' | 'mtimeMs'>): Promise<P>;
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

/**
 * A set that keeps nothing and holds nothing: the claims of a run whose destination never asks
 * them, the keys seen by a run that cannot find anything gone.
 */
const KEEPS_NOTHING = { add: (_key: string): void => undefined, has: (_key: string): boolean => false, reserve: (_count: number): void => undefined };

/** Superseded results listed in a summary; the rest are counted. */
const MAX_LISTED = 1_000;

/** Entries looked up in the checkpoint store per query. */
const LOOKUP_BATCH = 256;

/** Items adopted per transaction: fewer commits, and the store sorts each batch into its own order. */
const ADOPT_BATCH = 2_000;

/** Files of one folder under one digest. */
const GROUP_MAX = 4_096;

/**
 * Fewer files met together are looked up one by one and get no digest: a source that interleaves
 * folders (a project listed by date) would otherwise write a digest for nearly every file.
 */
const GROUP_MIN = 8;

/**
 * Entries read ahead while a cold start lists a destination that says it holds at most
 * READ_AHEAD_HELD: a walk of 10,000 files is then done by the time the listing is. Not beside the
 * listing of a larger one: at a million, walking while listing raised the cold no-op's peak from
 * 238-240 MiB to 272-291 (bench/NOTES.md), and a bounded read-ahead hides a small share of it.
 */
const READ_AHEAD = 10_000;
const READ_AHEAD_HELD = 20_000;

export async function transfer<P extends Placement>(opts: TransferOptions<P>): Promise<Record<string, unknown>> {
  const { source, destination, store, jobKey, ctx } = opts;
  const concurrency = opts.concurrency ?? new AdaptiveConcurrency({ max: opts.maxConcurrency ?? DEFAULT_CONCURRENCY });
  const retry = { ...DEFAULT_ITEM_RETRY, ...opts.itemRetry };
  const state: ProgressState = opts.progress ?? { counts: ctx.counts, bytes: 0, bytesPlanned: 0, itemsPlanned: 0, discovering: true };
  // The source is read ahead beside a cold start's listing of a small destination (below).
  const listing = readAhead(batchesOf(source, ctx.signal), 0);
  // Until the source's last entry is read, a stopped run's counts are of part of the source.
  ctx.walk = 'walking';
  let reconciled: Set<string>;
  let coldStart: ColdStart | undefined;
  let drift: DriftReport | undefined;
  try {
    await destination.prepare();
    // Before anything new is written, settle what earlier runs left in flight.
    reconciled = await settleInFlight(store, destination, jobKey, ctx);
    // Then what the destination no longer holds as written is decided again by the walk.
    if (destination.holds && !opts.only) drift = await recheckWritten(store, (items) => destination.holds!(items), jobKey, ctx.signal);
    // Then, if this store has never seen the destination, learn what is already there.
    coldStart = await coldStartIfDue(
      store,
      destination,
      jobKey,
      ctx,
      opts.resync === true,
      (held) => {
        if (held <= READ_AHEAD_HELD) listing.allow(READ_AHEAD);
      },
      opts.adoptedAttributes,
    );
  } catch (err) {
    await listing.stop();
    throw err;
  }

  const intents = new IntentWriter(store, jobKey);
  const superseded: { key: string; previous: string; current: string }[] = [];
  let supersededCount = 0;
  let repeatedNotices = 0;
  // The keys this run saw, to find what the store holds that the source no longer does: none to
  // keep when the store holds nothing uploaded yet (a first run; a cold start that found nothing).
  const seen = opts.only || !store.hasUploaded(jobKey) ? KEEPS_NOTHING : new SeenSet();
  const claimed = destination.asksClaimed === false ? KEEPS_NOTHING : new KeySet();
  let fatal: unknown;
  const fail = (key: string, err: unknown, entry?: FileEntry) => {
    ctx.counts.failed++;
    const mark = markOf(err);
    (ctx.failedByMark ??= {})[mark] = (ctx.failedByMark[mark] ?? 0) + 1;
    const error = (err as Error).message ?? String(err);
    noteError(ctx, key, error);
    store.recordFailed(jobKey, key, { error, runId: ctx.run.id, ...(entry ? { size: entry.size, mtimeMs: entry.mtimeMs } : {}) });
  };

  /** Gone at the source since it was listed: nothing to carry, said with the reason, not retried. */
  const skipGone = (entry: FileEntry, err: SourceGoneError) => {
    ctx.counts.skipped++;
    noteProblem(ctx, entry.key, `skipped: ${err.message}`);
    store.recordFailed(jobKey, entry.key, { error: `skipped: ${err.message}`, runId: ctx.run.id, size: entry.size, mtimeMs: entry.mtimeMs });
  };

  /**
   * Files of one folder met one after another (a chunk of at most GROUP_MAX): when its digest is
   * the one recorded after every one of them last landed, none of them is looked up.
   */
  type Group = { folder: string; chunk: number; files: FileEntry[]; digest: string | null; unsettled: number; ok: boolean };
  /** An entry to write, with what it became last time (from the batch lookup: no second query). */
  /** `failedAt`: when an earlier attempt of this entry failed (it may have landed all the same). */
  type Pending = { entry: FileEntry; previous: string | null; group: Group; prepared?: Promise<P> | undefined; failedAt?: number | undefined };
  /** Seen entries known to be uploaded at the end: if the store holds no more, none was deleted. */
  let knownUploaded = 0;
  const useDigests = !opts.checksum && !opts.only;

  const groupDone = (group: Group, ok: boolean) => {
    if (!ok) group.ok = false;
    if (--group.unsettled === 0 && group.ok && group.digest) store.setGroupDigest(jobKey, group.folder, group.chunk, group.digest);
  };

  // Entries are looked up in the checkpoint store a batch at a time, and not at all in a folder
  // whose digest says nothing changed: on a rerun over a large, unchanged source that lookup is
  // nearly all the work there is.
  const toWrite = async function* (): AsyncIterable<Pending> {
    let group: Group | undefined;
    let lookups: { entry: FileEntry; group: Group }[] = [];
    let sized = false;
    for await (const batch of listing) {
      if (!sized && source.expectedCount !== undefined) {
        sized = true;
        seen.reserve(source.expectedCount);
        claimed.reserve(source.expectedCount);
        destination.expect?.(source.expectedCount);
      }
      for (const entry of batch) {
        if (entry.kind !== 'file') {
          await considerOther(entry);
          continue;
        }
        if (opts.filter && !opts.filter(entry)) {
          seen.add(entry.key);
          continue;
        }
        const folder = folderOf(entry.key);
        if (group && (group.folder !== folder || group.files.length >= GROUP_MAX)) {
          closeGroup(group, lookups);
          group = { folder, chunk: group.folder === folder ? group.chunk + 1 : 0, files: [], digest: null, unsettled: 0, ok: true };
        }
        group ??= { folder, chunk: 0, files: [], digest: null, unsettled: 0, ok: true };
        group.files.push(entry);
        if (lookups.length >= LOOKUP_BATCH) {
          yield* considerFiles(lookups);
          lookups = [];
        }
      }
    }
    if (group) closeGroup(group, lookups);
    yield* considerFiles(lookups);
    state.discovering = false;
    ctx.walk = 'done';
  };

  // Folders are made beside the listing, not in its way: a folder whose creation waits out a
  // retry stalls only the files that go into it (they await it in place()), never the lister.
  // At most `concurrency.limit` are in the making at once; a failure surfaces at the end, or
  // sooner through a file of that folder.
  const folders = new Set<Promise<void>>();
  let folderFailure: unknown;
  const makeFolder = async (key: string): Promise<void> => {
    while (folders.size >= concurrency.limit) await Promise.race(folders);
    const made: Promise<void> = Promise.resolve(ctx.writeGate?.()).then(() => destination.ensureFolder(key)).then(
      () => void folders.delete(made),
      (err: unknown) => {
        folderFailure ??= err;
        folders.delete(made);
      },
    );
    folders.add(made);
  };

  const considerOther = async (entry: Exclude<SourceEntry, FileEntry>): Promise<void> => {
    if (entry.kind === 'dir') return makeFolder(entry.key);
    // Every entry found is counted, what cannot be carried too: discovered = what the source holds.
    if (opts.only && !opts.only.has(entry.key)) return;
    ctx.counts.discovered++;
    if (entry.outcome === 'failed') fail(entry.key, new Error(entry.reason));
    else {
      ctx.counts.skipped++;
      // Said by name on the first run that meets it; later runs count it (repeatedNotices), so
      // that an incremental pull does not repeat the same lines every time.
      if (store.noticeSeen(jobKey, entry.key, entry.reason, ctx.run.id)) repeatedNotices++;
      else noteProblem(ctx, entry.key, `skipped: ${entry.reason}`);
    }
  };

  const closeGroup = (group: Group, lookups: { entry: FileEntry; group: Group }[]) => {
    if (useDigests && group.files.length >= GROUP_MIN) {
      group.digest = groupDigest(group.files);
      if (store.groupDigest(jobKey, group.folder, group.chunk) === group.digest) {
        for (const entry of group.files) {
          seen.add(entry.key);
          ctx.counts.discovered++;
          if (!reconciled.has(entry.key)) ctx.counts.skipped++;
        }
        knownUploaded += group.files.length;
        return;
      }
    }
    group.unsettled = group.files.length;
    for (const entry of group.files) lookups.push({ entry, group });
    group.files = [];
  };

  const considerFiles = async function* (files: { entry: FileEntry; group: Group }[]): AsyncIterable<Pending> {
    if (files.length === 0) return;
    const known = store.fingerprints(jobKey, files.map((f) => f.entry.key));
    for (const { entry, group } of files) {
      seen.add(entry.key);
      if (opts.only && !opts.only.has(entry.key)) continue;
      ctx.counts.discovered++;
      const marker = opts.checksum ? (entry.sha256 ?? (await sha256Of(entry.open()))) : entry.marker;
      // The content's sha256 once read (--checksum, or a comparison): never read twice.
      let contentSha = opts.checksum ? marker : undefined;
      const previous = known.get(entry.key);
      let decision = opts.only ? 'changed' : decide({ size: entry.size, mtimeMs: entry.mtimeMs, sha256: marker, attrs: entry.attributesDigest }, previous);
      if (decision === 'compare' && previous) {
        // Same size, another time: read it once; equal content is the same file, its new time noted.
        contentSha = entry.sha256 ?? (await sha256Of(entry.open()));
        decision = contentSha === previous.sha256 ? 'unchanged' : 'changed';
        if (decision === 'unchanged') store.recordSameContent(jobKey, entry.key, { mtimeMs: entry.mtimeMs, sha256: contentSha });
      }
      if (decision === 'unchanged') {
        if (!reconciled.has(entry.key)) ctx.counts.skipped++;
        knownUploaded++;
        groupDone(group, true);
        continue;
      }
      state.itemsPlanned++;
      state.bytesPlanned += entry.size;
      yield { entry: marker !== entry.marker || contentSha ? ({ ...entry, marker, sha256: contentSha } as FileEntry) : entry, previous: previous?.remoteId ?? null, group };
    }
  };

  /** Where the entry goes, once its intent is on disk. */
  const prepare = async (entry: FileEntry): Promise<P> => {
    // A run that no longer holds its lease on the destination writes nothing more (not a folder either).
    await ctx.writeGate?.();
    const placement = await destination.place(entry);
    if (destination.needsIntent !== false) {
      await intents.write(entry.key, { size: entry.size, mtimeMs: entry.mtimeMs, sha256: entry.marker ?? null, attrs: entry.attributesDigest ?? null, uploadId: ctx.uploadId, parentId: placement.parentId, runId: ctx.run.id });
    }
    return placement;
  };

  // Entries are prepared as they join the pool's backlog, not as they reach a slot: the backlog
  // is refilled many at a time, and their intents share one commit (IntentWriter), where slots
  // freeing up one at a time made a commit per file (13 % of a migration's CPU). An intent whose
  // entry is never sent (the run stopped first) is settled by the next run like any other.
  const prepared = async function* (items: AsyncIterable<Pending>): AsyncIterable<Pending> {
    for await (const pending of items) {
      pending.prepared = prepare(pending.entry);
      pending.prepared.catch(() => undefined); // seen when its slot awaits it
      yield pending;
    }
  };

  const writeOne = async (pending: Pending, slot: Slot) => {
    const { entry, previous, group } = pending;
    // The first attempt takes what was prepared in the backlog; a retry prepares afresh.
    const ready = pending.prepared;
    pending.prepared = undefined;
    const placement = await (ready ?? prepare(entry));
    const started = Date.now();
    const waited = { ms: slot.waitedMs, retries: slot.retries };
    const { remoteId, found, sha256, storedAs } = await destination.write(opts.bandwidth ? await limited(entry, opts.bandwidth) : entry, placement, { uploadId: ctx.uploadId, previous, claimed, stopping: ctx.signal, slot, ...(pending.failedAt !== undefined ? { failedAt: pending.failedAt } : {}), ...(ctx.limits ? { cancel: ctx.limits.cancel } : {}), ...(ctx.writeGate ? { gate: ctx.writeGate } : {}), ...(ctx.writeFence ? { fence: ctx.writeFence } : {}) });
    // The service's latency, from items written at the first attempt (the waits for the pace left
    // out): a retried item's time is the fault's, not a sign of load.
    concurrency.succeeded(slot.retries === waited.retries ? Date.now() - started - (slot.waitedMs - waited.ms) : undefined);
    claimed.add(remoteId);
    // The content's sha256 when the destination computed it: a later run with another time compares content.
    store.recordUploaded(jobKey, entry.key, { remoteId, size: entry.size, mtimeMs: entry.mtimeMs, sha256: entry.marker ?? sha256 ?? null, attrs: entry.attributesDigest ?? null, parentId: placement.parentId });
    if (previous && previous !== remoteId) {
      // Listed up to a cap (the checkpoint store keeps every superseded id per entry).
      supersededCount++;
      if (superseded.length < MAX_LISTED) superseded.push({ key: entry.key, previous, current: remoteId });
    }
    knownUploaded++;
    groupDone(group, true);
    if (storedAs !== undefined) {
      ctx.counts.failed++;
      noteError(ctx, entry.key, `${destination.description} stored it under another name, "${storedAs}": the name cannot be carried exactly (kept as ${remoteId}; it is not written again)`);
      return;
    }
    if (found) {
      ctx.counts.reconciled++;
      return;
    }
    ctx.counts.uploaded++;
    ctx.bytes += entry.size;
    state.bytes = ctx.bytes;
  };

  /** One entry through the item retries; its failure accounted by mark (fatal stops the job). */
  const writeWithRetries = async (pending: Pending, slot: Slot): Promise<void> => {
    const { entry } = pending;
    // A run at its limit starts nothing more: the entry's intent stays, the next run carries on.
    if (ctx.limits && !ctx.limits.admit(entry.size)) return;
    ctx.inFlight = (ctx.inFlight ?? 0) + 1;
    try {
      await withItemRetries(
        async () => {
          try {
            await writeOne(pending, slot);
          } catch (err) {
            if (isThrottle(err)) concurrency.throttled();
            // The next attempt asks the destination first whether this one landed after all.
            pending.failedAt = performance.now();
            throw err;
          }
        },
        retry,
        ctx.signal,
        slot,
      );
    } catch (err) {
      // Cut off in flight (a limit under --cutoff-mode hard): not a failure; the next run settles it.
      if (ctx.limits?.cancel.aborted) return;
      if (isFatal(err)) {
        // Every other entry would fail the same way: stop the job.
        fatal ??= err;
        throw err;
      }
      if (ctx.signal.aborted) return; // interrupted mid-write: the intent stays, the next run settles it
      groupDone(pending.group, false);
      if (err instanceof SourceGoneError) return skipGone(entry, err);
      fail(entry.key, err, entry);
    } finally {
      ctx.inFlight = (ctx.inFlight ?? 1) - 1;
    }
  };

  /** Entries the store holds as written that the source no longer lists: reported, never deleted. */
  const findVanished = (): { count: number; sample: string[] } => {
    const vanished = { count: 0, sample: [] as string[] };
    // Every item the store holds as uploaded was seen (and is counted there): nothing to look for.
    // A run stopped early (a signal, its window) did not see the whole source: nothing is said vanished.
    if (seen === KEEPS_NOTHING || ctx.signal.aborted || ctx.limits?.reached || store.uploadedCount(jobKey) === knownUploaded) return vanished;
    for (const key of store.uploadedKeys(jobKey)) {
      if (seen.has(key) || source.takes?.(key) === false) continue;
      vanished.count++;
      if (vanished.sample.length < 20) vanished.sample.push(key);
    }
    return vanished;
  };

  // The steps: what is new or changed goes through the bounded pool to the writes; then what
  // vanished is found, and the destination's part of the summary added.
  try {
    await runPool(prepared(toWrite()), writeWithRetries, { concurrency, signal: ctx.limits ? AbortSignal.any([ctx.signal, ctx.limits.stop]) : ctx.signal });
    await Promise.all(folders);
    if (folderFailure !== undefined) throw folderFailure;
  } catch (err) {
    throw fatal ?? err;
  } finally {
    await listing.stop();
    await Promise.all(folders);
    store.flush();
  }
  const vanished = findVanished();
  return {
    ...(coldStart ? { coldStart } : {}),
    ...(drift ? { drift } : {}),
    superseded,
    supersededCount,
    ...(repeatedNotices ? { repeatedNotices } : {}),
    deletedLocally: { ...vanished, note: opts.deletionNote ?? 'reported only: ferry never deletes at the destination' },
    ...destination.report(),
  };
}

/** Items whose write was started but not recorded as done: found at the destination, or written again. */
async function settleInFlight(store: CheckpointStore, destination: Pick<Destination, 'settle'>, jobKey: string, ctx: JobContext): Promise<Set<string>> {
  const inFlight = store.inFlight(jobKey);
  if (inFlight.length === 0) return new Set();
  const landed = await destination.settle(inFlight);
  for (const item of inFlight) {
    const found = landed.get(item.sourceKey);
    if (!found) continue; // it never arrived: the walk writes it again
    store.recordUploaded(jobKey, item.sourceKey, { remoteId: found.remoteId, size: item.size, mtimeMs: item.mtimeMs, sha256: item.sha256, attrs: item.attrs, parentId: item.parentId });
    ctx.counts.reconciled++;
  }
  store.flush();
  return new Set(landed.keys());
}

/** Whether the store holds nothing for this destination and never listed it: a cold start is due. */
export function isCold(store: CheckpointStore, jobKey: string): boolean {
  return store.listedAt(jobKey) === undefined && store.uploadedCount(jobKey) === 0;
}

/**
 * Lists the destination once, streaming what it holds into the store as uploaded (the newest at
 * each path), and records that it did. Items whose upload was in flight and did not land stay as
 * they are. On --resync what the store believed uploaded is forgotten first.
 */
export async function adoptInventory(
  store: CheckpointStore,
  destination: Required<Pick<Destination, 'inventory'>> & Pick<Destination, 'heldCount'>,
  jobKey: string,
  reason: ColdStart['reason'],
  signal?: AbortSignal,
  onHeld?: (count: number) => void,
  attributesOf?: TransferOptions<Placement>['adoptedAttributes'],
): Promise<ColdStart> {
  if (reason === 'resync') store.forgetUploaded(jobKey);
  const found: ColdStart = { reason, adopted: 0, withoutFingerprint: 0, copies: 0 };
  const unsettled = new Set(store.inFlight(jobKey).map((i) => i.sourceKey));
  // Written ADOPT_BATCH at a time, one transaction each.
  let batch: Parameters<CheckpointStore['adopt']>[1][number][] = [];
  for await (const item of destination.inventory(signal ?? new AbortController().signal)) {
    if (signal?.aborted) break;
    if (onHeld && destination.heldCount !== undefined) {
      onHeld(destination.heldCount);
      onHeld = undefined;
    }
    if ('copy' in item) {
      found.copies++;
      continue;
    }
    if (unsettled.has(item.key)) continue;
    batch.push({ sourceKey: item.key, remoteId: item.remoteId, size: item.size, mtimeMs: item.mtimeMs, sha256: item.sha256, parentId: item.parentId, attrs: attributesOf?.(item.key, item.attributes) ?? null });
    found.adopted++;
    if (item.mtimeMs === UNKNOWN_MTIME && item.sha256 === null) found.withoutFingerprint++;
    if (batch.length >= ADOPT_BATCH) {
      store.adopt(jobKey, batch);
      batch = [];
    }
  }
  store.adopt(jobKey, batch);
  // Only a listing read to its end counts: an interrupted one is listed again next time.
  if (!signal?.aborted) store.recordListed(jobKey, found.adopted);
  return found;
}

/**
 * A store that knows nothing of this destination (a fresh container, a renamed profile, another
 * machine) adopts what the destination holds before deciding anything; --resync does it over a
 * warm store. The service is the truth: only what differs from it is written.
 */
async function coldStartIfDue(
  store: CheckpointStore,
  destination: Pick<Destination, 'inventory' | 'heldCount'>,
  jobKey: string,
  ctx: JobContext,
  resync: boolean,
  onHeld: (count: number) => void,
  attributesOf: TransferOptions<Placement>['adoptedAttributes'],
): Promise<ColdStart | undefined> {
  if (!destination.inventory || !(resync || isCold(store, jobKey))) return undefined;
  const found = await adoptInventory(store, destination as Required<Pick<Destination, 'inventory'>> & Pick<Destination, 'heldCount'>, jobKey, resync ? 'resync' : 'cold', ctx.signal, onHeld, attributesOf);
  if (found.withoutFingerprint > 0) {
    noteProblem(ctx, '(destination)', `warning: ${found.withoutFingerprint} of the ${found.adopted} documents found there carry no fingerprint (the service returned no ferry metadata): they were recognised by path and size alone; --checksum uploads them again`);
  }
  if (found.copies > 0) {
    // Nothing ferry does alone writes a file twice: two runs with two stores did, at once.
    noteProblem(ctx, '(destination)', `warning: ${found.copies} older document${found.copies === 1 ? ' is a copy' : 's are copies'} of the newest at ${found.copies === 1 ? 'its' : 'their'} path, with the same content, as two runs with two stores writing at once leave them (docs/scale-out.md, Overlap); ferry deletes nothing: \`ferry check\` lists them`);
  }
  return found;
}

/** What a run would do, writing nothing (the destination is asked only to place entries). */
export interface TransferPlan {
  new: number;
  changed: number;
  unchanged: number;
  deletedLocally: number;
  /** Bytes of what would be written (new and changed). */
  bytes: number;
  /** Bytes of every file the source holds. */
  totalBytes: number;
  folders: number;
  /** Problems the source reports, listed up to `maxProblems`; `problemCount` counts them all. */
  problems: { key: string; reason: string; outcome: 'failed' | 'skipped' }[];
  problemCount: number;
}

/**
 * What a run would do, with nothing written: the dry runs of mirror, pull and migrate. The same
 * decision as the engine's (`decide`, a content comparison when sizes match and times do not).
 */
/** One thing a run would do, as a dry run names it. */
export interface PlannedItem {
  action: 'new' | 'changed' | 'deleted locally';
  key: string;
  size?: number;
  /** A changed entry whose content is the same: only what its document carries differs. */
  why?: 'metadata';
  /** For the first EXPLAINED such entries: each key or setting that would change, from what to what (null: absent). */
  changes?: AttributeChange[];
}

export async function planTransfer(opts: {
  source: Source;
  destination: Pick<Destination, 'prepare' | 'ensureFolder' | 'place' | 'carried'>;
  store: CheckpointStore;
  jobKey: string;
  checksum?: boolean | undefined;
  maxProblems?: number | undefined;
  /** Told of each item as it is planned (the dry runs list them, streamed: the plan keeps counts only). */
  onItem?: ((item: PlannedItem) => void) | undefined;
  filter?: ((entry: FileEntry) => boolean) | undefined;
}): Promise<TransferPlan> {
  const { source, destination, store, jobKey } = opts;
  const maxProblems = opts.maxProblems ?? MAX_LISTED;
  await destination.prepare();
  const plan: TransferPlan = { new: 0, changed: 0, unchanged: 0, deletedLocally: 0, bytes: 0, totalBytes: 0, folders: 0, problems: [], problemCount: 0 };
  const seen = new SeenSet();
  let explained = 0;
  for await (const batch of batchesOf(source, new AbortController().signal)) for (const entry of batch) {
    if (entry.kind === 'problem') {
      plan.problemCount++;
      if (plan.problems.length < maxProblems) plan.problems.push({ key: entry.key, reason: entry.reason, outcome: entry.outcome });
      continue;
    }
    if (entry.kind === 'dir') {
      plan.folders++;
      await destination.ensureFolder(entry.key);
      continue;
    }
    seen.add(entry.key);
    if (opts.filter && !opts.filter(entry)) continue;
    plan.totalBytes += entry.size;
    const marker = opts.checksum ? (entry.sha256 ?? (await sha256Of(entry.open() as Readable))) : entry.marker;
    const known = store.fingerprint(jobKey, entry.key);
    const file = { size: entry.size, mtimeMs: entry.mtimeMs, sha256: marker, attrs: entry.attributesDigest };
    let decision = decide(file, known);
    if (decision === 'compare') decision = (entry.sha256 ?? (await sha256Of(entry.open() as Readable))) === known?.sha256 ? 'unchanged' : 'changed';
    if (decision === 'unchanged') plan.unchanged++;
    else {
      if (decision === 'changed') plan.changed++;
      else plan.new++;
      plan.bytes += entry.size;
      await destination.place(entry);
      // Only what the document carries differs (a manifest row changed): said so.
      const why = decision === 'changed' && attributesChanged(file, known) && known?.size === entry.size && (known.mtimeMs === entry.mtimeMs || known.mtimeMs === UNKNOWN_MTIME) ? { why: 'metadata' as const } : {};
      let changes: { changes?: AttributeChange[] } = {};
      if (why.why && known && destination.carried && explained < EXPLAINED) {
        explained++;
        const carried = await destination.carried(entry, known);
        if (carried) changes = { changes: attributeChanges(carried, entry.attributes) };
      }
      opts.onItem?.({ action: decision === 'changed' ? 'changed' : 'new', key: entry.key, size: entry.size, ...why, ...changes });
    }
  }
  for (const key of store.uploadedKeys(jobKey)) {
    if (seen.has(key) || source.takes?.(key) === false) continue;
    plan.deletedLocally++;
    opts.onItem?.({ action: 'deleted locally', key });
  }
  return plan;
}

/** The key up to and including its last '/' ('' at the root): the store's trigger computes the same. */
function folderOf(key: string): string {
  return key.slice(0, key.lastIndexOf('/') + 1);
}

/** What a group of files is, in the order met: the fields `decide` reads, and the change marker. */
function groupDigest(files: readonly FileEntry[]): string {
  const hash = createHash('sha256');
  let text = '';
  for (const f of files) text += `${f.key}\u0000${f.size}\u0000${f.mtimeMs}\u0000${f.marker ?? ''}\u0000${f.attributesDigest ?? ''}\u0000`;
  return hash.update(text).digest('base64');
}

/** The source's entries in batches: its own when it has them, else one entry per batch. */
async function* batchesOf(source: Source, signal: AbortSignal): AsyncIterable<SourceEntry[]> {
  if (source.batches) {
    yield* source.batches(signal);
    return;
  }
  for await (const entry of source.entries(signal)) yield [entry];
}

/**
 * The entry with its content read through the bandwidth budget: what a destination sends is what
 * it reads, so the entry offers only streams (no path to read by itself). The fingerprint a
 * destination would read first is read here, outside the budget, so that only the transfer counts.
 */
async function limited(entry: FileEntry, bandwidth: Bandwidth): Promise<FileEntry> {
  const { path: _path, openAsync, ...rest } = entry;
  const sha256 = entry.sha256 ?? (openAsync ? undefined : await sha256Of(entry.open() as Readable).catch(() => undefined));
  return {
    ...rest,
    ...(sha256 !== undefined ? { sha256 } : {}),
    open: () => bandwidth.throttle(entry.open() as Readable),
    ...(openAsync ? { openAsync: async (slot?: Slot) => bandwidth.throttle(await openAsync(slot)) } : {}),
  };
}
