// Old ids mapped to new ones in the checkpoint store, one item per recreated object: the intent is
// written before each create leaves, the new id when it answers. A resumed import skips what is
// mapped and, for an intent without an answer (a crash, a lost response), first looks on the
// target for what the create may have made before making it again: nothing is created twice.
import type { CheckpointStore } from '../store/types.js';

export type MapOutcome = 'created' | 'reconciled' | 'existing';

export interface Settle {
  /** Finds what an earlier, unanswered create made; `since` is when its intent was written. */
  (since: Date): Promise<string | undefined>;
}

export class IdMap {
  /** Every mapping known so far (old -> new), for rewriting trees. */
  readonly ids = new Map<string, string>();

  constructor(
    private readonly store: CheckpointStore,
    private readonly jobKey: string,
    private readonly runId: number,
    private readonly batch: string,
    /** Awaited before every create: throws when the run may write no more (its lease lost). */
    private readonly gate?: () => Promise<void>,
  ) {}

  private key(kind: string, oldId: string): string {
    return `${kind}/${oldId}`;
  }

  /** The new id of an object already recreated, if any. */
  get(kind: string, oldId: string): string | undefined {
    const fp = this.store.fingerprint(this.jobKey, this.key(kind, oldId));
    return fp?.state === 'uploaded' ? (fp.remoteId ?? undefined) : undefined;
  }

  /** Records a mapping that needs no create (an existing object reused, e.g. an option by name). */
  note(oldId: string, newId: string): void {
    this.ids.set(oldId, newId);
  }

  async ensure(kind: string, oldId: string, create: () => Promise<string>, settle: Settle): Promise<{ id: string; outcome: MapOutcome }> {
    const key = this.key(kind, oldId);
    const item = this.store.getItem(this.jobKey, key);
    if (item?.state === 'uploaded' && item.remoteId) {
      this.ids.set(oldId, item.remoteId);
      return { id: item.remoteId, outcome: 'existing' };
    }
    if (item?.state === 'in-flight') {
      const found = await settle(new Date(item.updatedAt));
      if (found) {
        this.done(key, oldId, found);
        return { id: found, outcome: 'reconciled' };
      }
    }
    await this.gate?.();
    this.store.recordIntent(this.jobKey, key, { size: 0, mtimeMs: 0, sha256: null, uploadId: this.batch, parentId: null, runId: this.runId });
    const id = await create();
    this.done(key, oldId, id);
    return { id, outcome: 'created' };
  }

  /** Records that `oldId` already has its counterpart on the target (found there, not made by this store). */
  adopt(kind: string, oldId: string, newId: string): void {
    this.done(this.key(kind, oldId), oldId, newId);
  }

  /** Ids already claimed by a mapping of `kind` (so settling never adopts them twice). */
  claimed(): Set<string> {
    return new Set(this.ids.values());
  }

  private done(key: string, oldId: string, newId: string): void {
    this.store.recordUploaded(this.jobKey, key, { remoteId: newId, size: 0, mtimeMs: 0, sha256: null, parentId: null });
    this.store.flush();
    this.ids.set(oldId, newId);
  }
}
