// The one vocabulary of failure every layer reads: what an error means for the work, not where it
// came from. A backend (the API client, the file system, a zip) marks its errors once, where it
// knows what they are; the engine, the jobs and the command line read marks only. After rclone's
// fserrors (retry, fatal, no-retry), with the two cases bulk transfers need besides.
//
//   transient  try the item again later (a 5xx, a dropped connection, a busy file)
//   throttled  transient, and the service asks for less (429, 503): fewer at once
//   fatal      every other item would fail the same way (the token, a permission): stop the job
//   gone       the thing is not there any more (404 after a listing, a file deleted meanwhile)
//   conflict   the thing is in a state that refuses this (409, a local file in the way)
//   item       this item is at fault (a bad name, a 400): fail it, go on with the rest
// Ground floor: imports nothing of ferry, so every room can read it.

export type Mark = 'transient' | 'throttled' | 'fatal' | 'gone' | 'conflict' | 'item';

const MARKS = new Set<string>(['transient', 'throttled', 'fatal', 'gone', 'conflict', 'item']);

/** File-system codes that may pass (a file busy on a network share). */
const TRANSIENT_CODES = new Set(['EBUSY', 'EAGAIN']);

/** The mark of any thrown value: its own `mark`, a transient file-system code, else `item`. */
export function markOf(err: unknown): Mark {
  const own = (err as { mark?: unknown } | null | undefined)?.mark;
  if (typeof own === 'string' && MARKS.has(own)) return own as Mark;
  const code = (err as { code?: unknown } | null | undefined)?.code;
  if (typeof code === 'string' && TRANSIENT_CODES.has(code)) return 'transient';
  return 'item';
}

/** Worth another try later: transient or throttled. */
export function isRetryable(mark: Mark): boolean {
  return mark === 'transient' || mark === 'throttled';
}
