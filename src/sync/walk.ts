// Walk, group and look up: the source's entries in, the files to write out. Entries are looked up
// in the checkpoint store a batch at a time, and not at all in a folder whose group digest says
// nothing changed (groups.ts): on a rerun over a large, unchanged source that lookup is nearly all
// the work there is. Every entry met is accounted here or by the writes (ledger.ts).
import type { FileEntry, Source, SourceEntry } from './types.js';
import type { Placement } from './contract.js';
import { judge } from './judge.js';
import type { RunParts } from './ledger.js';
import type { Group } from './groups.js';
import type { FolderMaker } from './folders.js';

/** Entries looked up in the checkpoint store per query. */
const LOOKUP_BATCH = 256;

/** A file to write, with what it became last time (from the batch lookup: no second query). */
export interface Pending<P extends Placement = Placement> {
  entry: FileEntry;
  previous: string | null;
  group: Group;
  /** Where it goes, with its intent on disk: made as it joins the backlog (write.ts). */
  prepared?: Promise<P> | undefined;
  /** When an earlier attempt of this entry failed (it may have landed all the same). */
  failedAt?: number | undefined;
}

export interface Walk extends RunParts {
  source: Source;
  folders: FolderMaker;
  filter?: ((entry: FileEntry) => boolean) | undefined;
  only?: ReadonlySet<string> | undefined;
  checksum?: boolean | undefined;
}

/** The files that are new or changed, in the order the source lists them. */
export async function* toWrite(w: Walk, listing: AsyncIterable<SourceEntry[]>): AsyncIterable<Pending> {
  let lookups: Pending[] = [];
  let sized = false;
  for await (const batch of listing) {
    if (!sized && w.source.expectedCount !== undefined) {
      sized = true;
      w.ledger.reserve(w.source.expectedCount);
      w.destination.expect?.(w.source.expectedCount);
    }
    for (const entry of batch) {
      if (entry.kind !== 'file') {
        await other(w, entry);
        continue;
      }
      if (w.filter && !w.filter(entry)) {
        w.ledger.seen.add(entry.key);
        continue;
      }
      const closed = w.groups.add(entry);
      if (closed) lookUp(w, closed, lookups);
      if (lookups.length >= LOOKUP_BATCH) {
        yield* considered(w, lookups);
        lookups = [];
      }
    }
  }
  const last = w.groups.last();
  if (last) lookUp(w, last, lookups);
  yield* considered(w, lookups);
  w.state.discovering = false;
  w.ctx.walk = 'done';
}

/** A folder is made; what cannot be carried is counted, failed or skipped with its reason. */
async function other(w: Walk, entry: Exclude<SourceEntry, FileEntry>): Promise<void> {
  if (entry.kind === 'dir') return w.folders.make(entry.key);
  // Every entry found is counted, what cannot be carried too: discovered = what the source holds.
  if (w.only && !w.only.has(entry.key)) return;
  w.ctx.counts.discovered++;
  if (entry.outcome === 'failed') w.ledger.failed(entry.key, new Error(entry.reason));
  else w.ledger.notCarried(entry.key, entry.reason);
}

/** A closed group: all of it unchanged by its digest, or each of its files queued for a lookup. */
function lookUp(w: Walk, group: Group, lookups: Pending[]): void {
  if (w.groups.unchanged(group)) {
    for (const entry of group.files) {
      w.ledger.seen.add(entry.key);
      w.ctx.counts.discovered++;
      w.ledger.unchanged(entry.key);
    }
    return;
  }
  for (const entry of group.files) lookups.push({ entry, previous: null, group });
  group.files = [];
}

/** A batch of files looked up at once: the unchanged accounted, the others yielded to be written. */
async function* considered(w: Walk, files: Pending[]): AsyncIterable<Pending> {
  if (files.length === 0) return;
  const known = w.store.fingerprints(w.jobKey, files.map((f) => f.entry.key));
  for (const { entry, group } of files) {
    w.ledger.seen.add(entry.key);
    if (w.only && !w.only.has(entry.key)) continue;
    w.ctx.counts.discovered++;
    const previous = known.get(entry.key);
    const { decision, marker, contentSha, sameContent } = await judge(entry, previous, { checksum: w.checksum, again: w.only !== undefined });
    if (sameContent) w.store.recordSameContent(w.jobKey, entry.key, { mtimeMs: entry.mtimeMs, sha256: contentSha! });
    if (decision === 'unchanged') {
      w.ledger.unchanged(entry.key);
      w.groups.done(group, true);
      continue;
    }
    w.state.itemsPlanned++;
    w.state.bytesPlanned += entry.size;
    yield { entry: marker !== entry.marker || contentSha ? ({ ...entry, marker, sha256: contentSha } as FileEntry) : entry, previous: previous?.remoteId ?? null, group };
  }
}
