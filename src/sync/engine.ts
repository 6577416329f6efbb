// The transfer engine: moves the entries of a Source to a Destination exactly once, knowing no
// backend (rclone's fs/sync is the model). A run is a few named steps, each in a room of its own:
//  1. settle: what earlier runs left in flight is settled before anything new is written
//     (cold-start.ts, settleInFlight), then what no longer holds as written is looked at again
//     (drift.ts), then a store that never saw the destination learns what is there (cold start);
//  2. walk, group and look up (walk.ts, groups.ts): the source's entries against the checkpoint
//     store, a folder at a time under its group digest;
//  3. write and retry (write.ts): each file's intent committed before its write, through a bounded
//     pool with adaptive concurrency and item retries;
//  4. account (ledger.ts): each entry ends as exactly one of written, reconciled, skipped or failed,
//     with its reason; what vanished from the source is reported, never deleted.
// Destinations decide where an entry goes and how it is written; sources what there is.
import type { DriftReport } from './drift.js';
import { recheckWritten } from './drift.js';
import { AdaptiveConcurrency, DEFAULT_CONCURRENCY } from '../runner/adaptive.js';
import { runPool } from '../runner/pool.js';
import { DEFAULT_ITEM_RETRY } from '../runner/item-retry.js';
import type { ProgressState } from '../runner/progress.js';
import { readAhead } from './read-ahead.js';
import { batchesOf } from './batches.js';
import { coldStartIfDue, settleInFlight } from './cold-start.js';
import type { ColdStart, Placement, TransferOptions } from './contract.js';
import { Ledger } from './ledger.js';
import { Groups } from './groups.js';
import { FolderMaker } from './folders.js';
import { toWrite } from './walk.js';
import { Writer } from './write.js';

// The engine's contract, its cold start and its dry run live in rooms of their own; this module is their entrance.
export * from './contract.js';
export { adoptInventory, isCold } from './cold-start.js';
export { planTransfer, type PlannedItem, type TransferPlan } from './plan.js';

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
  const state: ProgressState = opts.progress ?? { counts: ctx.counts, bytes: 0, bytesPlanned: 0, itemsPlanned: 0, discovering: true };
  // The source is read ahead beside a cold start's listing of a small destination (below).
  const listing = readAhead(batchesOf(source, ctx.signal), 0);
  // Until the source's last entry is read, a stopped run's counts are of part of the source.
  ctx.walk = 'walking';
  let start: { reconciled: Set<string>; drift?: DriftReport | undefined; coldStart?: ColdStart | undefined };
  try {
    start = await settle(opts, (held) => {
      if (held <= READ_AHEAD_HELD) listing.allow(READ_AHEAD);
    });
  } catch (err) {
    await listing.stop();
    throw err;
  }

  const ledger = new Ledger(store, jobKey, ctx, start.reconciled, { seesAll: !opts.only, asksClaimed: destination.asksClaimed !== false });
  const groups = new Groups(store, jobKey, !opts.checksum && !opts.only);
  const folders = new FolderMaker(destination, () => concurrency.limit, ctx.writeGate);
  const writer = new Writer({ destination, store, jobKey, ctx, state, ledger, groups, concurrency, retry: { ...DEFAULT_ITEM_RETRY, ...opts.itemRetry }, bandwidth: opts.bandwidth });
  const walk = { source, destination, store, jobKey, ctx, state, ledger, groups, folders, filter: opts.filter, only: opts.only, checksum: opts.checksum };

  // What is new or changed goes through the bounded pool to the writes; then what vanished is
  // found, and the destination's part of the summary added.
  try {
    await runPool(writer.prepared(toWrite(walk, listing)), (pending, slot) => writer.withRetries(pending, slot), { concurrency, signal: ctx.limits ? AbortSignal.any([ctx.signal, ctx.limits.stop]) : ctx.signal });
    await folders.made();
  } catch (err) {
    throw writer.fatal ?? err;
  } finally {
    await listing.stop();
    await folders.drained();
    store.flush();
  }
  const vanished = ledger.vanished(source);
  return {
    ...(start.coldStart ? { coldStart: start.coldStart } : {}),
    ...(start.drift ? { drift: start.drift } : {}),
    superseded: ledger.superseded,
    supersededCount: ledger.supersededCount,
    ...(ledger.repeatedNotices ? { repeatedNotices: ledger.repeatedNotices } : {}),
    deletedLocally: { ...vanished, note: opts.deletionNote ?? 'reported only: ferry never deletes at the destination' },
    ...destination.report(),
  };
}

/**
 * Before anything new is written: what earlier runs left in flight is settled; then what the
 * destination no longer holds as written is decided again by the walk; then, if this store has
 * never seen the destination, what is already there is learnt.
 */
async function settle<P extends Placement>(opts: TransferOptions<P>, onHeld: (held: number) => void): Promise<{ reconciled: Set<string>; drift?: DriftReport | undefined; coldStart?: ColdStart | undefined }> {
  const { destination, store, jobKey, ctx } = opts;
  await destination.prepare();
  const reconciled = await settleInFlight(store, destination, jobKey, ctx);
  const drift = destination.holds && !opts.only ? await recheckWritten(store, (items) => destination.holds!(items), jobKey, ctx.signal) : undefined;
  const coldStart = await coldStartIfDue(store, destination, jobKey, ctx, opts.resync === true, onHeld, opts.adoptedAttributes);
  return { reconciled, drift, coldStart };
}
