// What each UploadFailedReason means and what to do about it, in words for the people who
// read ferry's summaries and reports.
import type { UploadFailedReason } from '../api/types.js';

export interface ReasonHelp {
  meaning: string;
  action: string;
  /** Worth uploading again unchanged. */
  transient: boolean;
}

export const FAILED_REASONS: Record<UploadFailedReason, ReasonHelp> = {
  unsupportedFileType: { meaning: 'the service does not index files of this type', action: 'convert it (e.g. to PDF) or leave it out with --exclude', transient: false },
  maliciousFile: { meaning: 'the virus scan flagged the file', action: 'do not retry; have the file checked by security', transient: false },
  badFile: { meaning: 'the file is empty, damaged or not what its extension says', action: 'open and re-save it from its source, then run the same job again (a changed file is uploaded again)', transient: false },
  ocrPageLimitExceeded: { meaning: 'the document has more pages than OCR accepts', action: 'give its --manifest row ocrStrategy never (that document alone is sent again, with OCR off), or split it; not --ocr-strategy for a whole run with a manifest: every file would be sent again', transient: false },
  insufficientCredits: { meaning: 'the tenant ran out of processing credits', action: 'top up credits, then run again; further uploads will fail the same way', transient: false },
  outOfMemory: { meaning: 'processing ran out of memory on the service', action: 'retry later; split very large files', transient: true },
  uploadFailure: { meaning: 'the upload did not complete on the service', action: 'retry', transient: true },
  unknownException: { meaning: 'the service failed for an unstated reason', action: 'retry; report it if it persists', transient: true },
  fileScanTimedOut: { meaning: 'the virus scan did not finish in time', action: 'retry later', transient: true },
};

export function explain(reason: string): ReasonHelp {
  return FAILED_REASONS[reason as UploadFailedReason] ?? { meaning: 'a reason ferry does not know yet', action: 'check the service documentation', transient: false };
}
