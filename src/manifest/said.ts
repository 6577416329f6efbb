// How a run's manifest is said in a summary or a plan: light (no SQLite), for the command line's output.
import { visible } from '../text.js';

/** Paths named in text when rows match no file, or files have no row (more under --json). */
export const UNMATCHED_SHOWN = 5;

/** Files without a row listed under --json (a count beyond). */
export const WITHOUT_ROW_LISTED = 1_000;

/** The manifest in one line of a summary or a plan: rows read, rows that met a file, files no row names. */
export function manifestLine(o: ManifestOutcome): string {
  const first = o.withoutRow.paths.slice(0, UNMATCHED_SHOWN).map((p) => `"${visible(p)}"`).join(', ');
  const more = o.withoutRow.count > UNMATCHED_SHOWN ? `, … (--json lists ${Math.min(o.withoutRow.count, WITHOUT_ROW_LISTED)})` : '';
  return `manifest ${visible(o.file)}: ${o.rows} row${o.rows === 1 ? '' : 's'} read, ${o.matched} matched a file, ${o.unmatched.count} named none; ${o.withoutRow.count} file${o.withoutRow.count === 1 ? '' : 's'} with no row${o.withoutRow.count ? ` (${first}${more})` : ''}`;
}


/** What a run's manifest did: its rows, and those that named no file of the source (every one, for --json). */
export interface ManifestOutcome {
  file: string;
  rows: number;
  /** Rows that met a file of the source. */
  matched: number;
  /** Files of the source that no row names (they carry only the run's own values): the first WITHOUT_ROW_LISTED by path. */
  withoutRow: { count: number; paths: string[] };
  unmatched: { count: number; paths: string[] };
  /** Rows whose `\\` was read as `/` (a sheet made on Windows), when any. */
  separatorsRead?: number;
}
