// What `ferry scan` reports (jobs/scan.ts makes it; ./render.ts shows it; --json is this object,
// described in docs/json-output.schema.json).
import type { CensusFigures } from './census.js';
import type { DuplicateFigures } from './duplicates.js';
import type { Outlook } from './predict.js';

export interface ScanTime {
  /** Requests a mirror would send: an upload per file, a folder create per folder it lacks, its batch. */
  requests: number;
  bytes: number;
  requestsPerSecond: number | null;
  bwlimit: number | null;
  /** The least time at those limits; null where neither is set (then the service's pace decides). */
  leastSeconds: number | null;
}

export interface ScanReport {
  source: string;
  target?: { tenant: string; project: string; folder: string };
  census: CensusFigures;
  duplicates: DuplicateFigures;
  /** Entries gone between the walk and their read, or during the walk: counted, never fatal. */
  vanished: number;
  /** Against the project's folder, as `mirror --dry-run` counts them (with --project). */
  plan?: { new: number; changed: number; unchanged: number; bytes: number; foldersToCreate: number };
  /** What the service will likely do with the files to send (with --project). */
  outlook?: Outlook;
  time: ScanTime;
  notes: string[];
}

