// The job lock: one live holder per job key across every process sharing a checkpoint store.
// Taken before a run is started or resumed, so a second process can neither start beside a live
// run nor resume (join) it; a holder killed outright is detected by its pid and process start
// time, and its lock taken over. Every job kind takes its lock here.
import { randomUUID } from 'node:crypto';
import { FerryError } from '../api/errors.js';
import type { CheckpointStore, LockHolder } from '../store/types.js';

export class LockedError extends FerryError {
  constructor(readonly jobKey: string, readonly holder: LockHolder) {
    super(`another run (${holder.runId || 'starting'}, pid ${holder.pid} on ${holder.host}, since ${holder.acquiredAt}) is already working on this job; not starting a second one`);
  }
}

export interface HeldLock {
  readonly jobKey: string;
  /**
   * This acquisition's token; a run's lease on the service is held under the same token, so that
   * the next run of this store knows the lease of a holder it proved dead.
   */
  readonly token: string;
  /**
   * The tokens of a holder that died (kill -9) and whose lock was taken over, and of the dead
   * holders it had itself taken over from, if so.
   */
  readonly replaced?: readonly string[] | undefined;
  /** Records which run now works under the lock (shown to whoever is refused). */
  attach(runId: number): void;
  release(): void;
}

/** Takes the job's lock or throws LockedError naming the holder. */
export function takeLock(store: CheckpointStore, jobKey: string): HeldLock {
  const token = randomUUID();
  const result = store.acquireLock(jobKey, token);
  if (!result.ok) throw new LockedError(jobKey, result.holder);
  let released = false;
  return {
    jobKey,
    token,
    replaced: result.replaced,
    attach(runId) {
      store.acquireLock(jobKey, token, runId);
    },
    release() {
      if (released) return;
      released = true;
      store.releaseLock(jobKey, token);
    },
  };
}
