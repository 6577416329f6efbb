// Group commit of intents: writers that start in the same turn of the event loop share one
// SQLite commit. Each still waits until its own intent is on disk before its request leaves, so
// exactly-once holds; a commit per file was a tenth of a small-file mirror's time.
import type { CheckpointStore, Intent } from '../store/types.js';

interface Waiting {
  sourceKey: string;
  intent: Intent;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class IntentWriter {
  private queue: Waiting[] = [];
  private scheduled = false;

  constructor(
    private readonly store: CheckpointStore,
    private readonly jobKey: string,
  ) {}

  /** Resolves once the intent is committed. */
  write(sourceKey: string, intent: Intent): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ sourceKey, intent, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.commit());
      }
    });
  }

  private commit(): void {
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    try {
      this.store.recordIntents(this.jobKey, batch);
    } catch (err) {
      for (const w of batch) w.reject(err);
      return;
    }
    for (const w of batch) w.resolve();
  }
}
