// The cold start and the settling of what an earlier run left in flight: the two steps a transfer
// takes before its walk. The service is the truth: a store that knows nothing of a destination
// adopts what it holds before deciding anything, and an intent recorded but not resolved is asked
// of the destination (found: reconciled; not found: written again by the walk).
import type { CheckpointStore } from '../store/types.js';
import { noteProblem, type JobContext } from '../runner/job.js';
import { UNKNOWN_MTIME } from './decide.js';
import type { ColdStart, Destination, Placement, TransferOptions } from './contract.js';

/** Items adopted per transaction: fewer commits, and the store sorts each batch into its own order. */
const ADOPT_BATCH = 2_000;

/** Items whose write was started but not recorded as done: found at the destination, or written again. */
export async function settleInFlight(store: CheckpointStore, destination: Pick<Destination, 'settle'>, jobKey: string, ctx: JobContext): Promise<Set<string>> {
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
export async function coldStartIfDue(
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
