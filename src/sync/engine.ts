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
import { SourceGoneError, type FileEntry, type SourceEntry } from './types.js';
import { recheckWritten, type DriftReport } from './drift.js';
import { AdaptiveConcurrency, DEFAULT_CONCURRENCY } from '../runner/adaptive.js';
import type { Bandwidth } from './bandwidth.js';
import { noteError, noteProblem } from '../runner/job.js';
import type { Slot } from '../slots.js';
import { runPool } from '../runner/pool.js';
import { DEFAULT_ITEM_RETRY, isFatal, isThrottle, withItemRetries } from '../runner/item-retry.js';
import type { ProgressState } from '../runner/progress.js';
import { decide } from './decide.js';
import { sha256Of } from './checksum.js';
import { KeySet, SeenSet } from '../hashed-keys.js';
import { IntentWriter } from './intents.js';
import { readAhead } from './read-ahead.js';
import { markOf } from '../marks.js';
import { batchesOf } from './batches.js';
import { coldStartIfDue, settleInFlight } from './cold-start.js';
import { MAX_LISTED, type ColdStart, type Placement, type TransferOptions } from './contract.js';

// The engine's contract, its cold start and its dry run live in rooms of their own; this module is their entrance.
export * from './contract.js';
export { adoptInventory, isCold } from './cold-start.js';
export { planTransfer, type PlannedItem, type TransferPlan } from './plan.js';

/**
 * A set that keeps nothing and holds nothing: the claims of a run whose destination never asks
 * them, the keys seen by a run that cannot find anything gone.
 */
const KEEPS_NOTHING = { add: (_key: string): void => undefined, has: (_key: string): boolean => false, reserve: (_count: number): void => undefined };

/** Entries looked up in the checkpoint store per query. */
const LOOKUP_BATCH = 256;

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
