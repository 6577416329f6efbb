// Write and retry: each file to write through the item retries to the destination. The first
// exactly-once rule is here: an entry's intent (what is about to be written, and where) is
// committed to the checkpoint store before the write starts, so that a run killed in the middle
// leaves an intent the next run settles (cold-start.ts, settleInFlight) instead of writing twice.
import type { Readable } from 'node:stream';
import type { AdaptiveConcurrency } from '../runner/adaptive.js';
import type { Slot } from '../slots.js';
import { isFatal, isThrottle, withItemRetries, type ItemRetryOptions } from '../runner/item-retry.js';
import { noteError } from '../runner/job.js';
import { SourceChangedError, SourceGoneError, type FileEntry } from './types.js';
import type { Placement } from './contract.js';
import type { Bandwidth } from './bandwidth.js';
import { sha256Of } from './checksum.js';
import { IntentWriter } from './intents.js';
import type { RunParts } from './ledger.js';
import type { Pending } from './walk.js';

/** Reads of an entry whose content changed while it was read, before it is skipped as changing (rclone: one retry). */
const CHANGED_READS = 2;

export interface WriteParts<P extends Placement> extends RunParts<P> {
  concurrency: AdaptiveConcurrency;
  retry: ItemRetryOptions;
  bandwidth?: Bandwidth | undefined;
}

export class Writer<P extends Placement> {
  private readonly intents: IntentWriter;
  /** The error that stops the job: every other entry would fail the same way. */
  fatal: unknown;

  constructor(private readonly w: WriteParts<P>) {
    this.intents = new IntentWriter(w.store, w.jobKey);
  }

  /** Where the entry goes, once its intent is on disk (the rule above). */
  private async prepare(entry: FileEntry): Promise<P> {
    const { destination, ctx } = this.w;
    // A run that no longer holds its lease on the destination writes nothing more (not a folder either).
    await ctx.writeGate?.();
    const placement = await destination.place(entry);
    if (destination.needsIntent !== false) {
      await this.intents.write(entry.key, { size: entry.size, mtimeMs: entry.mtimeMs, sha256: entry.marker ?? null, attrs: entry.attributesDigest ?? null, uploadId: ctx.uploadId, parentId: placement.parentId, runId: ctx.run.id });
    }
    return placement;
  }

  /**
   * Entries are prepared as they join the pool's backlog, not as they reach a slot: the backlog
   * is refilled many at a time, and their intents share one commit (IntentWriter), where slots
   * freeing up one at a time made a commit per file (13 % of a migration's CPU). An intent whose
   * entry is never sent (the run stopped first) is settled by the next run like any other.
   */
  async *prepared(items: AsyncIterable<Pending>): AsyncIterable<Pending<P>> {
    for await (const pending of items as AsyncIterable<Pending<P>>) {
      pending.prepared = this.prepare(pending.entry);
      pending.prepared.catch(() => undefined); // seen when its slot awaits it
      yield pending;
    }
  }

  /** One entry through the item retries; its failure accounted by mark (fatal stops the job). */
  async withRetries(pending: Pending<P>, slot: Slot): Promise<void> {
    const { ctx, ledger, groups, concurrency } = this.w;
    const { entry } = pending;
    // A run at its limit starts nothing more: the entry's intent stays, the next run carries on.
    if (ctx.limits && !ctx.limits.admit(entry.size)) return;
    ctx.inFlight = (ctx.inFlight ?? 0) + 1;
    try {
      const attempts = () =>
        withItemRetries(
          async () => {
            try {
              await this.once(pending, slot);
            } catch (err) {
              if (isThrottle(err)) concurrency.throttled();
              // The next attempt asks the destination first whether this one landed after all.
              pending.failedAt = performance.now();
              throw err;
            }
          },
          this.w.retry,
          ctx.signal,
          slot,
        );
      for (let reads = 1; ; reads++) {
        try {
          await attempts();
          break;
        } catch (err) {
          // Content that changed while it was read is read once more; changing again, it is skipped.
          if (!(err instanceof SourceChangedError) || ctx.signal.aborted) throw err;
          if (reads >= CHANGED_READS) throw new SourceChangedError(`changing: it changed while it was read, ${CHANGED_READS === 2 ? 'twice' : `${CHANGED_READS} times`} (${err.message}); the next run tries it again`);
        }
      }
    } catch (err) {
      // Cut off in flight (a limit under --cutoff-mode hard): not a failure; the next run settles it.
      if (ctx.limits?.cancel.aborted) return;
      if (isFatal(err)) {
        this.fatal ??= err;
        throw err;
      }
      if (ctx.signal.aborted) return; // interrupted mid-write: the intent stays, the next run settles it
      groups.done(pending.group, false);
      if (err instanceof SourceGoneError || err instanceof SourceChangedError) return ledger.gone(entry, err);
      ledger.failed(entry.key, err, entry);
    } finally {
      ctx.inFlight = (ctx.inFlight ?? 1) - 1;
    }
  }

  /** One attempt: the write, then what it became recorded and counted. */
  private async once(pending: Pending<P>, slot: Slot): Promise<void> {
    const { destination, store, jobKey, ctx, state, ledger, groups, concurrency, bandwidth } = this.w;
    const { entry, previous, group } = pending;
    // The first attempt takes what was prepared in the backlog; a retry prepares afresh.
    const ready = pending.prepared;
    pending.prepared = undefined;
    const placement = await (ready ?? this.prepare(entry));
    const started = Date.now();
    const waited = { ms: slot.waitedMs, retries: slot.retries };
    const { remoteId, found, sha256, storedAs } = await destination.write(bandwidth ? await limited(entry, bandwidth) : entry, placement, {
      uploadId: ctx.uploadId,
      previous,
      claimed: ledger.claimed,
      stopping: ctx.signal,
      slot,
      ...(pending.failedAt !== undefined ? { failedAt: pending.failedAt } : {}),
      ...(ctx.limits ? { cancel: ctx.limits.cancel } : {}),
      ...(ctx.writeGate ? { gate: ctx.writeGate } : {}),
      ...(ctx.writeFence ? { fence: ctx.writeFence } : {}),
    });
    // The service's latency, from items written at the first attempt (the waits for the pace left
    // out): a retried item's time is the fault's, not a sign of load.
    concurrency.succeeded(slot.retries === waited.retries ? Date.now() - started - (slot.waitedMs - waited.ms) : undefined);
    // The content's sha256 when the destination computed it: a later run with another time compares content.
    store.recordUploaded(jobKey, entry.key, { remoteId, size: entry.size, mtimeMs: entry.mtimeMs, sha256: entry.marker ?? sha256 ?? null, attrs: entry.attributesDigest ?? null, parentId: placement.parentId });
    ledger.written(entry, remoteId, previous);
    groups.done(group, true);
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
  }
}

/**
 * The entry with its content read through the bandwidth budget: what a destination sends is what
 * it reads, so the entry offers only streams (no path to read by itself). The fingerprint a
 * destination would read first is read here, outside the budget, so that only the transfer counts.
 */
async function limited(entry: FileEntry, bandwidth: Bandwidth): Promise<FileEntry> {
  const { path: _path, openAsync, openFrom, ...rest } = entry;
  const sha256 = entry.sha256 ?? (openAsync ? undefined : await sha256Of(entry.open() as Readable).catch(() => undefined));
  return {
    ...rest,
    ...(sha256 !== undefined ? { sha256 } : {}),
    open: () => bandwidth.throttle(entry.open() as Readable),
    ...(openAsync ? { openAsync: async (slot?: Slot) => bandwidth.throttle(await openAsync(slot)) } : {}),
    ...(openFrom
      ? {
          openFrom: async (offset: number, slot?: Slot) => {
            // Only the stream goes through the budget: a drain would pass it by.
            const { drain: _unmetered, ...part } = await openFrom(offset, slot);
            return { ...part, body: bandwidth.throttle(part.body) };
          },
        }
      : {}),
  };
}
