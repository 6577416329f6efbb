// The one judgement of a source's file against what the checkpoint store remembers of it: new,
// changed, unchanged or retry (decide.ts), the content read once when the size matches and the time
// does not (decide's `compare`). The run's walk (walk.ts) and the dry run's plan (plan.ts) both ask
// it, so that a plan is what the run then does (test/jobs/plan-equals-run.test.ts).
import type { ItemFingerprint } from '../store/types.js';
import type { FileEntry } from './types.js';
import { decide, type LocalFile } from './decide.js';
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
