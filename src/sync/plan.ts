// What to do with one file, given what the checkpoint store remembers of it. Pure.
import type { ItemFingerprint } from '../store/types.js';

export type Decision = 'new' | 'changed' | 'unchanged' | 'retry';

export interface LocalFile {
  size: number;
  mtimeMs: number;
  /** Present when comparing by checksum. */
  sha256?: string | undefined;
}

export function decide(file: LocalFile, known: ItemFingerprint | undefined): Decision {
  if (!known) return 'new';
  // An interrupted or failed upload is tried again; an interrupted one was settled first.
  if (known.state !== 'uploaded' || !known.remoteId) return known.remoteId ? 'changed' : 'retry';
  if (known.size !== file.size) return 'changed';
  if (file.sha256 !== undefined && known.sha256) return file.sha256 === known.sha256 ? 'unchanged' : 'changed';
  return known.mtimeMs === file.mtimeMs ? 'unchanged' : 'changed';
}
