// The local path a pull gives each document's key: the name rules segment by segment (names.ts),
// then the two things no stateless rule can carry, told apart by a hash of the original:
//  - a segment over 255 bytes keeps its start and its extension, with `~` and 8 hex digits;
//  - two documents that would land on one path (the file system folds case, or one document is
//    already named like another's mapped form) never share a file: the first listed keeps the
//    path, the other gets `~hash` of its full key before its extension.
// Folders that differ only by case share one folder where case is folded (as the file system
// itself would have it). Segments the file system refused although the rules allowed them are
// remembered by key prefix and mapped with the strict rules from then on.
import { posix } from 'node:path';
import { hash53, NumberByKey } from '../../hashed-keys.js';
import { visible } from '../../text.js';
import { encodeSegment, hash, MAX_NAME_BYTES, shorten, type NameRules } from '../name-rules.js';

export interface Mapped {
  local: string;
  /** Why the path is not the key, in words, when it is not. */
  why?: string;
}

export class LocalNamer {
  /**
   * Mapped paths taken in this run (folded when the file system ignores case) -> the key holding
   * it, as hashes (slot 0: the key; slot 1, only where case is ignored: the key in lower case).
   */
  private taken: NumberByKey;
  /** Key prefixes (a folder's or a file's key) whose last segment the file system refused: strict rules. */
  private readonly strictKeys = new Set<string>();
  /** Slots a folder holds (few beside the files): folders differing only by case share them. */
  private readonly folderSlots = new Set<string>();
  /** Folders that had to take another name (a file held theirs first), by their key as slots fold it -> their local path. */
  private readonly movedFolders = new Map<string, string>();

  constructor(
    readonly rules: NameRules,
    readonly caseInsensitive: boolean,
  ) {
    this.taken = new NumberByKey(caseInsensitive ? 2 : 1);
  }

  reserve(count: number): void {
    this.taken.reserve(count);
  }

  /** From now on the last segment of `keyPrefix` is written with the strict rules. */
  strict(keyPrefix: string): void {
    this.strictKeys.add(keyPrefix);
  }

  isStrict(keyPrefix: string): boolean {
    return this.strictKeys.has(keyPrefix);
  }

  /** One segment (with the key up to it, for the strict rules), without the hash for a clash. */
  segment(segment: string, keyPrefix: string): { name: string; why?: string } {
    const rules: NameRules = this.strictKeys.size > 0 && this.strictKeys.has(keyPrefix) ? 'strict' : this.rules;
    let { name, why } = encodeSegment(segment, rules);
    if (rules === 'strict') why = `the file system refused the name under ${this.rules} rules: ${why ?? 'mapped with the strict rules'}`;
    if (Buffer.byteLength(name) > MAX_NAME_BYTES) {
      name = shorten(name, hash(segment));
      why = `${why ? `${why}; ` : ''}longer than ${MAX_NAME_BYTES} bytes, shortened with a hash of the full name`;
    }
    return why ? { name, why } : { name };
  }

  /** The local path of a key; the same answer each time it is asked. */
  map(key: string, isFolder = false): Mapped {
    const reasons = new Set<string>();
    const parts = key.split('/');
    const segments = parts.map((segment, i) => {
      const { name, why } = this.segment(segment, parts.slice(0, i + 1).join('/'));
      if (why) reasons.add(why);
      return name;
    });
    let local = segments.join('/');
    // Under a folder that had to take another name, the path is under that name.
    for (let j = parts.length - 1; j > 0 && this.movedFolders.size > 0; j--) {
      const moved = this.movedFolders.get(this.slotOf(parts.slice(0, j).join('/')));
      if (moved === undefined) continue;
      local = [moved, ...segments.slice(j)].join('/');
      break;
    }
    const slot = this.slotOf(local);
    const owner = this.taken.get(slot);
    const mine = hash53(key);
    // Folders that differ only by case share one folder; a file never shares a name with another
    // entry: the later one is told apart by a hash (a folder too, when a file holds its name).
    const moved = isFolder ? this.movedFolders.get(this.slotOf(key)) : undefined;
    if (moved !== undefined) return { local: moved, why: 'a file holds its name (folded), so the folder has a hash' };
    const clash = owner !== undefined && owner !== mine && (!isFolder || !this.folderSlots.has(slot));
    if (clash) {
      const byCase = this.caseInsensitive && this.taken.get(slot, 1) === hash53(key.toLocaleLowerCase('en-US'));
      const contested = local;
      local = posix.join(posix.dirname(local), shorten(posix.basename(local), hash(key)));
      reasons.add(byCase ? 'another name differs from it only by case, which this file system does not tell apart' : `another document maps to the same local path ("${visible(contested)}")`);
      this.take(this.slotOf(local), key, mine, isFolder);
      if (isFolder) this.movedFolders.set(this.slotOf(key), local);
    } else if (owner === undefined) this.take(slot, key, mine, isFolder);
    return reasons.size ? { local, why: [...reasons].join('; ') } : { local };
  }

  /** A path an earlier run gave `key` (a file still there): taken, so that no new document lands on it. */
  claim(local: string, key: string): void {
    const slot = this.slotOf(local);
    if (this.taken.get(slot) === undefined) this.take(slot, key, hash53(key));
  }

  private slotOf(local: string): string {
    return this.caseInsensitive ? local.normalize('NFC').toLocaleLowerCase('en-US') : local;
  }

  private take(slot: string, key: string, keyHash: number, isFolder = false): void {
    this.taken.set(slot, keyHash);
    if (isFolder) this.folderSlots.add(slot);
    if (this.caseInsensitive) this.taken.set(slot, hash53(key.toLocaleLowerCase('en-US')), 1);
  }
}
