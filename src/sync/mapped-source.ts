// A source whose entries pass through a function on their way out (a manifest noting each file, a
// pulled folder giving names back): the one way to wrap a Source, so that batches, patterns, the
// expected count and notes are carried through alike.
import type { Source, SourceEntry } from './types.js';

export function mappedSource(inner: Source, map: (entry: SourceEntry) => SourceEntry, notes?: () => string[]): Source {
  const wrapped: Source = {
    description: inner.description,
    prepare: () => inner.prepare(),
    close: () => inner.close(),
    entries: async function* (signal?: AbortSignal) {
      for await (const e of inner.entries(signal)) yield map(e);
    },
    ...(inner.batches ? { batches: async function* (signal?: AbortSignal) {
      for await (const batch of inner.batches!(signal)) yield batch.map(map);
    } } : {}),
    ...(inner.takes ? { takes: (key: string) => inner.takes!(key) } : {}),
    ...(notes || inner.notes ? { notes: () => [...(inner.notes?.() ?? []), ...(notes?.() ?? [])] } : {}),
  };
  Object.defineProperty(wrapped, 'expectedCount', { get: () => inner.expectedCount });
  return wrapped;
}
