// A source's entries in batches: the engine and its dry run read a source the same way.
import type { Source, SourceEntry } from './types.js';

/** The source's entries in batches: its own when it has them, else one entry per batch. */
export async function* batchesOf(source: Source, signal: AbortSignal): AsyncIterable<SourceEntry[]> {
  if (source.batches) {
    yield* source.batches(signal);
    return;
  }
  for await (const entry of source.entries(signal)) yield [entry];
}
