// A source and a destination held in memory: the transfer engine tested on its own, with no
// emulator, no HTTP and no file system (only the checkpoint store, a real SQLite file).
import { Readable } from 'node:stream';
import type { Destination, Placement, WriteContext } from '../../src/sync/engine.js';
import type { FileEntry, Source, SourceEntry } from '../../src/sync/types.js';
import type { ItemRecord } from '../../src/store/types.js';
import { FerryError } from '../../src/errors.js';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { SqliteCheckpointStore } from '../../src/store/index.js';
import type { JobContext } from '../../src/runner/job.js';
import type { Mark } from '../../src/marks.js';

/** An error carrying the mark a backend would give it. */
export class Marked extends FerryError {
  constructor(
    message: string,
    private readonly m: Mark,
  ) {
    super(message);
  }
  override get mark(): Mark {
    return this.m;
  }
}

export function file(key: string, content: string, mtimeMs = 1_000): FileEntry {
  return { kind: 'file', key, size: Buffer.byteLength(content), mtimeMs, open: () => Readable.from([Buffer.from(content)]) };
}

/** Entries handed out one at a time; `listed` says how far the engine has read. */
export class MemorySource implements Source {
  readonly description = 'memory';
  listed = 0;
  constructor(private readonly items: () => Iterable<SourceEntry>) {}
  async prepare(): Promise<void> {}
  async *entries(signal?: AbortSignal): AsyncIterable<SourceEntry> {
    for (const entry of this.items()) {
      if (signal?.aborted) return;
      this.listed++;
      yield entry;
    }
  }
  async close(): Promise<void> {}
}

export type WriteHook = (entry: FileEntry, attempt: number, dest: MemoryDestination, ctx: WriteContext) => Promise<void> | void;

/** Documents by key; a hook may fail or delay a write. Records every attempt. */
export class MemoryDestination implements Destination<Placement> {
  readonly description = 'memory';
  readonly held = new Map<string, { id: string; content: string }>();
  readonly attempts = new Map<string, number>();
  writesStarted = 0;
  writesDone = 0;
  private nextId = 0;
  constructor(private readonly hook: WriteHook = () => undefined) {}

  async prepare(): Promise<void> {}
  async settle(inFlight: ItemRecord[]): Promise<Map<string, { remoteId: string }>> {
    const landed = new Map<string, { remoteId: string }>();
    for (const item of inFlight) {
      const found = this.held.get(item.sourceKey);
      if (found) landed.set(item.sourceKey, { remoteId: found.id });
    }
    return landed;
  }
  async ensureFolder(): Promise<void> {}
  async place(): Promise<Placement> {
    return { parentId: null };
  }
  async write(entry: FileEntry, _placement: Placement, ctx: WriteContext): Promise<{ remoteId: string }> {
    const attempt = (this.attempts.get(entry.key) ?? 0) + 1;
    this.attempts.set(entry.key, attempt);
    this.writesStarted++;
    try {
      await this.hook(entry, attempt, this, ctx);
      return { remoteId: this.land(entry, await text(entry.open())) };
    } finally {
      this.writesDone++;
    }
  }
  /** Stores the content as a write that reached the destination would. */
  land(entry: FileEntry, content: string): string {
    const id = `doc-${this.nextId++}`;
    this.held.set(entry.key, { id, content });
    return id;
  }
  report(): Record<string, unknown> {
    return {};
  }
}

async function text(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString();
}

const stores: SqliteCheckpointStore[] = [];

/** A real checkpoint store in a folder of its own; closed by `closeStores` (a test file's afterEach). */
export function newStore(): SqliteCheckpointStore {
  const store = new SqliteCheckpointStore(join(mkdtempSync(join(tmpdir(), 'ferry-engine-')), 'state.sqlite'));
  stores.push(store);
  return store;
}

export function closeStores(): void {
  for (const s of stores.splice(0)) s.close();
}

/** A run of job key `k` in the store, as the runner hands it to the engine. */
export function context(store: SqliteCheckpointStore, extra: Partial<JobContext> = {}): JobContext {
  const run = store.startRun({ job: 'test', jobKey: 'k', params: {}, uploadId: 'u' });
  return { run, uploadId: 'u', signal: new AbortController().signal, counts: { discovered: 0, uploaded: 0, unchanged: 0, skipped: 0, failed: 0, reconciled: 0 }, errors: [], problems: [], bytes: 0, ...extra };
}
