// What to do with one file, given what the checkpoint store remembers of it. Pure.
import type { ItemFingerprint } from '../store/types.js';

/**
 * `compare`: same size, another time, and the store knows the content's sha256: the content decides
 * (a fresh checkout or a copy touches every file's time without changing a byte).
 */
export type Decision = 'new' | 'changed' | 'unchanged' | 'retry' | 'compare';

/**
 * The time of an item adopted from a service that kept no fingerprint of it: found there by path
 * and size alone, so size is all there is to compare.
 */
export const UNKNOWN_MTIME = -1;

export interface LocalFile {
  size: number;
  mtimeMs: number;
  /** Present when comparing by checksum. */
  sha256?: string | undefined;
  /** The identity of what the document must carry (a manifest row), when a row applies. */
  attrs?: string | undefined;
}

/**
 * The file's row asks its document to carry something else than it did when last written. Only a
 * file with a row is compared: a file without one keeps whatever its document carries.
 */
export function attributesChanged(file: LocalFile, known: ItemFingerprint | undefined): boolean {
  return known?.state === 'uploaded' && !!known.remoteId && !carriesAsked(file.attrs, known.attrs);
}

/**
 * Whether a document carries what a file's row asks (`asked`, its identity; undefined: no row, so
 * nothing is asked) given the identity of what it carries (`carried`; null or undefined: nothing
 * known). The one rule of "adopted only when its metadata matches too": a document found by its
 * content (another store's upload, a cold start) is the file's only when this holds as well.
 */
export function carriesAsked(asked: string | undefined, carried: string | null | undefined): boolean {
  return asked === undefined || (carried ?? undefined) === asked;
}

export function decide(file: LocalFile, known: ItemFingerprint | undefined): Decision {
  if (!known) return 'new';
  // An interrupted or failed upload is tried again; an interrupted one was settled first.
  if (known.state !== 'uploaded' || !known.remoteId) return known.remoteId ? 'changed' : 'retry';
  if (known.size !== file.size) return 'changed';
  if (attributesChanged(file, known)) return 'changed';
  if (file.sha256 !== undefined && known.sha256) return file.sha256 === known.sha256 ? 'unchanged' : 'changed';
  if (known.mtimeMs === file.mtimeMs) return 'unchanged';
  // Adopted by path and size (no fingerprint on the service): unchanged, unless --checksum asks
  // for a comparison there is nothing to compare with.
  if (known.mtimeMs === UNKNOWN_MTIME && !known.sha256) return file.sha256 === undefined ? 'unchanged' : 'changed';
  if (known.sha256 && file.sha256 === undefined) return 'compare';
  return 'changed';
}
