// The one judgement of a source's file: against what the checkpoint store remembers of it (new,
// changed, unchanged or retry, decide.ts, the content read once when the size matches and the time
// does not), against a document found at its path (`judgePresent`), and against a document the
// destination lists (`asListed`, for `ferry check`). The run's walk (walk.ts), the dry run's plan
// (plan.ts), the project destination and check all ask it, so that a plan is what the run then
// does (test/jobs/plan-equals-run.test.ts) and check calls matching what a mirror leaves alone.
// The group digest (groups.ts) is this judgement kept: recorded only after every file of a group
// was judged and landed, over exactly the fields decide() reads.
import type { ItemFingerprint } from '../store/types.js';
import type { FileEntry } from './types.js';
import { carriesAsked, decide, UNKNOWN_MTIME, type LocalFile } from './decide.js';
import { sha256Of } from './checksum.js';

export interface Judgement {
  decision: 'new' | 'changed' | 'unchanged' | 'retry';
  /** What the entry is compared by: its sha256 under --checksum, else the source's marker. */
  marker: string | undefined;
  /** The content's sha256 when it was read (--checksum, or a comparison): never read twice. */
  contentSha: string | undefined;
  /** Unchanged by its content alone (a new time on the same bytes): the store notes the new time. */
  sameContent: boolean;
  /** The file as decide() saw it. */
  file: LocalFile;
}

/**
 * `again`: sent whatever the store says (the retries of failed documents): changed, its content
 * still read under --checksum.
 */
export async function judge(entry: FileEntry, known: ItemFingerprint | undefined, opts: { checksum?: boolean | undefined; again?: boolean | undefined } = {}): Promise<Judgement> {
  const marker = opts.checksum ? (entry.sha256 ?? (await sha256Of(entry.open()))) : entry.marker;
  let contentSha = opts.checksum ? marker : undefined;
  const file: LocalFile = { size: entry.size, mtimeMs: entry.mtimeMs, sha256: marker, attrs: entry.attributesDigest };
  const decided = opts.again ? 'changed' : decide(file, known);
  if (decided !== 'compare') return { decision: decided, marker, contentSha, sameContent: false, file };
  // Same size, another time: read it once; equal content is the same file.
  contentSha = entry.sha256 ?? (await sha256Of(entry.open()));
  const same = contentSha === known?.sha256;
  return { decision: same ? 'unchanged' : 'changed', marker, contentSha, sameContent: same, file };
}

/** A document at the entry's path holding its content (its marker), as the destination found it. */
export interface PresentDocument {
  remoteId: string;
  /** The identity of what it carries (null: nothing known). */
  attrs: string | null;
}

/**
 * The present-document case: the newest document at the entry's path holds its content (another
 * store wrote it since, or a write whose answer was lost). `taken`: it is the entry's, nothing is
 * sent (counted reconciled): it carries what the entry's row asks and is neither the document the
 * entry replaces (`previous`) nor one another entry of the run took (`claimed`). `resend`: the
 * content is there but not what the row asks, so a version with the row's metadata is sent.
 * Undefined: no such document counts, and the store's judgement stands.
 */
export function judgePresent(entry: Pick<FileEntry, 'attributesDigest'>, there: PresentDocument | undefined, previous: string | null, claimed: { has(id: string): boolean }): 'taken' | 'resend' | undefined {
  if (!there || there.remoteId === previous || claimed.has(there.remoteId)) return undefined;
  return carriesAsked(entry.attributesDigest, there.attrs) ? 'taken' : 'resend';
}

/**
 * A listed document as decide() reads a remembered item: written, with no time to compare (the
 * service keeps none of the file's), its sha256 when it carries ferry's fingerprint. What a
 * document carries beside its content is compared apart (check names each key), so not here.
 */
export function asListed(doc: { id: string; size: number; sha256: string | null }): ItemFingerprint {
  return { state: 'uploaded', remoteId: doc.id, size: doc.size, mtimeMs: UNKNOWN_MTIME, sha256: doc.sha256 };
}
