// The destination is a truth too, where it can change behind ferry's back (a local folder: a file
// deleted, or edited, by hand). Before the walk, every item the store holds as written is put to
// the destination, a page at a time: one it no longer holds as written is no longer taken as
// written, so the walk decides it again (a missing file is written again; a changed one meets the
// destination's rule for a file in the way). rclone and azcopy compare with the destination on
// every run for the same reason: a checkpoint that is trusted alone lets a copy stay wrong forever.
import type { CheckpointStore, WrittenItem } from '../store/types.js';

export interface Drifted {
  kind: 'missing' | 'changed';
  /** In words, kept as the item's error until it is written again. */
  why: string;
}

export interface DriftReport {
  /** Items the destination was asked about, and how long that took (wall ms). */
  looked: number;
  ms: number;
  missing: number;
  changed: number;
  /** The first few, by key. */
  sample: { key: string; kind: Drifted['kind']; why: string }[];
}

/** Items asked per page: their checks run together. */
const PAGE = 1_000;
const SAMPLE = 20;

export async function recheckWritten(
  store: CheckpointStore,
  holds: (items: WrittenItem[]) => Promise<Map<string, Drifted>>,
  jobKey: string,
  signal: AbortSignal,
): Promise<DriftReport> {
  const started = performance.now();
  const report: DriftReport = { looked: 0, ms: 0, missing: 0, changed: 0, sample: [] };
  let after = '';
  for (;;) {
    signal.throwIfAborted();
    const page = store.writtenAfter(jobKey, after, PAGE);
    if (page.length === 0) break;
    after = (page[page.length - 1] as WrittenItem).sourceKey;
    report.looked += page.length;
    // The page is read whole before any item of it is marked: no write while a query is open.
    for (const [key, drift] of await holds(page)) {
      store.recordDrift(jobKey, key, drift.why);
      report[drift.kind]++;
      if (report.sample.length < SAMPLE) report.sample.push({ key, ...drift });
    }
    if (page.length < PAGE) break;
  }
  report.ms = Math.round(performance.now() - started);
  return report;
}
