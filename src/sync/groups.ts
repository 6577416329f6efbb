// The group digest, one of the exactly-once rules: files of one folder met one after another (a
// chunk of at most GROUP_MAX) share a digest of what they were. The digest is recorded only once
// every file of the group has landed (or was unchanged), so that a group whose digest matches
// holds nothing unwritten; a rerun over it looks none of its files up. A group with a failure, or
// one the run was stopped in, keeps its old digest (or none) and is looked at again next time.
import { createHash } from 'node:crypto';
import type { CheckpointStore } from '../store/types.js';
import type { FileEntry } from './types.js';

/** Files of one folder under one digest. */
const GROUP_MAX = 4_096;

/**
 * Fewer files met together are looked up one by one and get no digest: a source that interleaves
 * folders (a project listed by date) would otherwise write a digest for nearly every file.
 */
const GROUP_MIN = 8;

export interface Group {
  folder: string;
  chunk: number;
  files: FileEntry[];
  digest: string | null;
  /** Files of the group not yet landed, unchanged or failed. */
  pending: number;
  ok: boolean;
}

export class Groups {
  private current: Group | undefined;

  constructor(
    private readonly store: CheckpointStore,
    private readonly jobKey: string,
    /** Off under --checksum (content decides) and for a retry batch (only some files). */
    private readonly useDigests: boolean,
  ) {}

  /** Adds a file; returns the group it closed (another folder, or a full chunk), if any. */
  add(entry: FileEntry): Group | undefined {
    const folder = folderOf(entry.key);
    let closed: Group | undefined;
    if (this.current && (this.current.folder !== folder || this.current.files.length >= GROUP_MAX)) {
      closed = this.current;
      this.current = { folder, chunk: closed.folder === folder ? closed.chunk + 1 : 0, files: [], digest: null, pending: 0, ok: true };
    }
    this.current ??= { folder, chunk: 0, files: [], digest: null, pending: 0, ok: true };
    this.current.files.push(entry);
    return closed;
  }

  /** The group still open at the end of the walk. */
  last(): Group | undefined {
    const last = this.current;
    this.current = undefined;
    return last;
  }

  /**
   * A closed group: true when its digest is the one recorded after every one of its files last
   * landed (none needs a look); otherwise its files are to be looked up, each ended by `done`.
   */
  unchanged(group: Group): boolean {
    if (this.useDigests && group.files.length >= GROUP_MIN) {
      group.digest = groupDigest(group.files);
      if (this.store.groupDigest(this.jobKey, group.folder, group.chunk) === group.digest) return true;
    }
    group.pending = group.files.length;
    return false;
  }

  /** One file of the group ended; the last one of a group that all landed records its digest. */
  done(group: Group, ok: boolean): void {
    if (!ok) group.ok = false;
    if (--group.pending === 0 && group.ok && group.digest) this.store.setGroupDigest(this.jobKey, group.folder, group.chunk, group.digest);
  }
}

/** The key up to and including its last '/' ('' at the root): the store's trigger computes the same. */
export function folderOf(key: string): string {
  return key.slice(0, key.lastIndexOf('/') + 1);
}

/** What a group of files is, in the order met: the fields `decide` reads, and the change marker. */
export function groupDigest(files: readonly FileEntry[]): string {
  const hash = createHash('sha256');
  let text = '';
  for (const f of files) text += `${f.key}\u0000${f.size}\u0000${f.mtimeMs}\u0000${f.marker ?? ''}\u0000${f.attributesDigest ?? ''}\u0000`;
  return hash.update(text).digest('base64');
}
