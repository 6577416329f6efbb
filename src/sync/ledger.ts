// What one transfer run knows and counts as it goes: the one owner of the accounting invariant
// (each entry the source holds ends as exactly one of written, reconciled, unchanged, skipped or failed, the last two
// with its reason), of the keys the run saw, and of what it found superseded or vanished.
import type { CheckpointStore } from '../store/types.js';
import type { JobContext } from '../runner/job.js';
import { noteError, noteProblem } from '../runner/job.js';
import { markOf } from '../marks.js';
import { KeySet, SeenSet } from '../hashed-keys.js';
import type { FileEntry, Source, SourceChangedError, SourceGoneError } from './types.js';
import { MAX_LISTED, type Destination, type Placement } from './contract.js';
import type { ProgressState } from '../runner/progress.js';
import type { Groups } from './groups.js';

/** What the walk and the writes of one transfer run share: where it writes, its store, the run and its accounts. */
export interface RunParts<P extends Placement = Placement> {
  destination: Destination<P>;
  store: CheckpointStore;
  jobKey: string;
  ctx: JobContext;
  state: ProgressState;
  ledger: Ledger;
  groups: Groups;
}

/**
 * A set that keeps nothing and holds nothing: the claims of a run whose destination never asks
 * them, the keys seen by a run that cannot find anything gone.
 */
export const KEEPS_NOTHING = { add: (_key: string): void => undefined, has: (_key: string): boolean => false, reserve: (_count: number): void => undefined };
type Keys = typeof KEEPS_NOTHING;

/** Keys read per page when looking for entries the source no longer lists. */
const VANISHED_PAGE = 1_000;
/** The notice that an entry is no longer at the source (the store's notices: said once). */
const VANISHED_NOTICE = 'no longer at the source';

export class Ledger {
  readonly superseded: { key: string; previous: string; current: string }[] = [];
  supersededCount = 0;
  /** Things that cannot be carried, said on an earlier run and counted (not said) on this one. */
  repeatedNotices = 0;
  /** Seen entries known to be written at the end: if the store holds no more, none was deleted. */
  knownUploaded = 0;
  /** The keys this run saw, to find what the store holds that the source no longer does. */
  readonly seen: Keys;
  /** The destination's ids written by this run (a destination asks them to tell its own writes from others'). */
  readonly claimed: Keys;

  constructor(
    private readonly store: CheckpointStore,
    private readonly jobKey: string,
    private readonly ctx: JobContext,
    /** Entries an earlier run left in flight, settled at the start: counted there, not again as unchanged. */
    private readonly reconciled: ReadonlySet<string>,
    opts: { seesAll: boolean; asksClaimed: boolean },
  ) {
    // None to keep when the store holds nothing written yet (a first run; a cold start that found nothing).
    this.seen = opts.seesAll && store.hasUploaded(jobKey) ? new SeenSet() : KEEPS_NOTHING;
    this.claimed = opts.asksClaimed ? new KeySet() : KEEPS_NOTHING;
  }

  /** Sized once the source says how many entries it holds. */
  reserve(count: number): void {
    this.seen.reserve(count);
    this.claimed.reserve(count);
  }

  /** A file met again as it was: unchanged (unless settled at the start, where it was counted). */
  unchanged(key: string): void {
    if (!this.reconciled.has(key)) this.ctx.counts.unchanged++;
    this.knownUploaded++;
  }

  /** Written (or found written) under `remoteId`; `previous` is what it was written as last time. */
  written(entry: FileEntry, remoteId: string, previous: string | null): void {
    this.claimed.add(remoteId);
    if (previous && previous !== remoteId) {
      // Listed up to a cap (the checkpoint store keeps every superseded id per entry).
      this.supersededCount++;
      if (this.superseded.length < MAX_LISTED) this.superseded.push({ key: entry.key, previous, current: remoteId });
    }
    this.knownUploaded++;
  }

  failed(key: string, err: unknown, entry?: FileEntry): void {
    this.ctx.counts.failed++;
    const mark = markOf(err);
    (this.ctx.failedByMark ??= {})[mark] = (this.ctx.failedByMark[mark] ?? 0) + 1;
    const error = (err as Error).message ?? String(err);
    noteError(this.ctx, key, error);
    this.store.recordFailed(this.jobKey, key, { error, runId: this.ctx.run.id, ...(entry ? { size: entry.size, mtimeMs: entry.mtimeMs } : {}) });
  }

  /** Gone at the source since it was listed, or changing as it was read: nothing to carry, said with the reason. */
  gone(entry: FileEntry, err: SourceGoneError | SourceChangedError): void {
    this.ctx.counts.skipped++;
    noteProblem(this.ctx, entry.key, `skipped: ${err.message}`);
    this.store.recordFailed(this.jobKey, entry.key, { error: `skipped: ${err.message}`, runId: this.ctx.run.id, size: entry.size, mtimeMs: entry.mtimeMs });
  }

  /** What cannot be carried: said by name on the first run that meets it, counted on later ones. */
  notCarried(key: string, reason: string): void {
    this.ctx.counts.skipped++;
    if (this.store.noticeSeen(this.jobKey, key, reason, this.ctx.run.id)) this.repeatedNotices++;
    else noteProblem(this.ctx, key, `skipped: ${reason}`);
  }

  /**
   * Entries the store holds as written that the source no longer lists: reported, never deleted.
   * Each is said by name on the run that first misses it (`count`, `sample`), and counted only on
   * later ones (`before`): a nightly job whose folder lost a file in March does not say so nightly.
   */
  vanished(source: Source): { count: number; sample: string[]; before?: number } {
    const vanished: { count: number; sample: string[]; before?: number } = { count: 0, sample: [] };
    // Every item the store holds as written was seen (and is counted there): nothing to look for.
    // A run stopped early (a signal, its window) did not see the whole source: nothing is said vanished.
    if (this.seen === KEEPS_NOTHING || this.ctx.signal.aborted || this.ctx.limits?.reached || this.store.uploadedCount(this.jobKey) === this.knownUploaded) return vanished;
    // A page of keys at a time, read whole before the notices are written (no write while a query is open).
    for (let after = ''; ; ) {
      const page = this.store.writtenAfter(this.jobKey, after, VANISHED_PAGE);
      for (const { sourceKey: key } of page) {
        if (this.seen.has(key) || source.takes?.(key) === false) continue;
        if (this.store.noticeSeen(this.jobKey, key, VANISHED_NOTICE, this.ctx.run.id)) {
          vanished.before = (vanished.before ?? 0) + 1;
          continue;
        }
        vanished.count++;
        if (vanished.sample.length < 20) vanished.sample.push(key);
      }
      if (page.length < VANISHED_PAGE) break;
      after = (page[page.length - 1] as { sourceKey: string }).sourceKey;
    }
    return vanished;
  }
}
