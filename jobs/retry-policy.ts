// What an upload job does with the files of each failure reason when it retries a batch: the
// policy's shape and its documented default, apart from the job (every job command reads its
// settings through jobs/definition.ts, which should not load an upload to do so).
import type { OCRStrategy, UploadFailedReason } from '../src/api/types.js';

/** What to do with the files of each failure reason when retrying. */
export type RetryAction = 'retry' | 'never' | 'fallback' | 'stop';

export interface RetryPolicy {
  reasons: Record<UploadFailedReason, RetryAction>;
  /** Retry batches at most (default 2). */
  maxRounds: number;
  /** The OCR strategy `fallback` files are sent with (e.g. `never`); without one they are not retried. */
  ocrFallback?: OCRStrategy | undefined;
}

/** The documented default: transient reasons retried, permanent ones never, credits stop the job. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  reasons: {
    uploadFailure: 'retry',
    unknownException: 'retry',
    fileScanTimedOut: 'retry',
    outOfMemory: 'retry',
    maliciousFile: 'never',
    unsupportedFileType: 'never',
    badFile: 'never',
    ocrPageLimitExceeded: 'fallback',
    insufficientCredits: 'stop',
  },
  maxRounds: 2,
};
