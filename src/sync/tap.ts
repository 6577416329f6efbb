// A source that shows each entry to an observer as it passes, unchanged: one walk serves a plan and
// whatever else wants to see every entry (ferry scan's census).
import type { Source, SourceEntry } from './types.js';

export function tapped(source: Source, observe: (entry: SourceEntry) => void): Source {
  const batches = source.batches?.bind(source);
  return {
    get description() {
      return source.description;
    },
    get expectedCount() {
      return source.expectedCount;
    },
    prepare: () => source.prepare(),
    async *entries(signal?: AbortSignal) {
      for await (const entry of source.entries(signal)) {
        observe(entry);
        yield entry;
      }
    },
    ...(batches
      ? {
          async *batches(signal?: AbortSignal) {
            for await (const batch of batches(signal)) {
              for (const entry of batch) observe(entry);
              yield batch;
            }
          },
        }
      : {}),
    ...(source.takes ? { takes: source.takes.bind(source) } : {}),
    ...(source.notes ? { notes: source.notes.bind(source) } : {}),
    close: () => source.close(),
  };
}
