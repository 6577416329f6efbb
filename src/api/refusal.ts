// "Refused": what the service's processing refused a document for. One definition, read by scan
// (the project's history), report and watch (a batch's tally), check and ls, so that none of them
// calls a document refused that another calls processing or taken.
import type { Document } from './types.js';

/**
 * The reason the service's processing refused the document, or undefined when it did not (taken,
 * or still processing). Its `uploadFailedReason` when it gives one; `unsupportedFileType` when only
 * that flag says so; `unknown` when processing ended (not in progress) unsuccessful with no reason.
 */
export function refusalOf(doc: Pick<Document, 'uploadFailedReason' | 'unsupportedFileType' | 'uploadSuccessful' | 'uploadInProgress'>): string | undefined {
  if (doc.uploadFailedReason) return doc.uploadFailedReason;
  if (doc.unsupportedFileType) return 'unsupportedFileType';
  return doc.uploadSuccessful === false && doc.uploadInProgress === false ? 'unknown' : undefined;
}
