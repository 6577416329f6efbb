// The dry run of a transfer: what a run would do, with nothing written. The same judgement of each
// entry as the run's walk (judge.ts); the destination is asked only to place entries, whether
// another store's document is there, and, for a metadata-only change, what the document carries now.
import type { FileEntry, Source } from './types.js';
import type { CheckpointStore } from '../store/types.js';
import { attributeChanges, EXPLAINED, type AttributeChange } from './attribute-changes.js';
import { attributesChanged, UNKNOWN_MTIME } from './decide.js';
import { judge, judgePresent } from './judge.js';
import { SeenSet } from '../hashed-keys.js';
import { batchesOf } from './batches.js';
import { MAX_LISTED, type Destination } from './contract.js';

/** A plan writes nothing, so no document is taken by another of its entries. */
const NOTHING_CLAIMED = { has: () => false };

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
  destination: Pick<Destination, 'prepare' | 'ensureFolder' | 'place' | 'carried' | 'presentFor'>;
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
    const known = store.fingerprint(jobKey, entry.key);
    const judged = await judge(entry, known, { checksum: opts.checksum });
    const file = judged.file;
    let decision = judged.decision;
    if (decision === 'unchanged') {
      plan.unchanged++;
      continue;
    }
    const placement = await destination.place(entry);
    // Written by another store since: found with its content, judged as the run judges it.
    const there = destination.presentFor ? await destination.presentFor(entry, placement) : undefined;
    const present = judgePresent(entry, there, known?.remoteId ?? null, NOTHING_CLAIMED);
    if (present === 'taken') {
      plan.unchanged++;
      continue;
    }
    const was = present === 'resend' ? { ...(known ?? { sourceKey: entry.key, state: 'uploaded', size: entry.size, mtimeMs: entry.mtimeMs, sha256: null, attrs: null }), remoteId: there!.remoteId } : known;
    if (present === 'resend') decision = 'changed';
    if (decision === 'changed') plan.changed++;
    else plan.new++;
    plan.bytes += entry.size;
    // Only what the document carries differs (a manifest row changed): said so.
    const why = present === 'resend' || (decision === 'changed' && attributesChanged(file, known) && known?.size === entry.size && (known.mtimeMs === entry.mtimeMs || known.mtimeMs === UNKNOWN_MTIME)) ? { why: 'metadata' as const } : {};
    let changes: { changes?: AttributeChange[] } = {};
    if (why.why && was && destination.carried && explained < EXPLAINED) {
      explained++;
      const carried = await destination.carried(entry, was);
      if (carried) changes = { changes: attributeChanges(carried, entry.attributes) };
    }
    opts.onItem?.({ action: decision === 'changed' ? 'changed' : 'new', key: entry.key, size: entry.size, ...why, ...changes });
  }
  for (const key of store.uploadedKeys(jobKey)) {
    if (seen.has(key) || source.takes?.(key) === false) continue;
    plan.deletedLocally++;
    opts.onItem?.({ action: 'deleted locally', key });
  }
  return plan;
}
