// Keys held as 53-bit hashes in typed arrays, so that memory stays small per key on listings of
// millions (no string and no map entry per key). Written by hand: no maintained library offers a
// compact hashed set and map of strings for Node.
//
// SeenSet: the set of files a run saw, 8 bytes a file, and no write per unchanged file. After the
// walk, items of the checkpoint store that are not in it were deleted locally. A hash collision
// (about 1 in 10^4 on a tree of a million files) would only hide one such report; nothing is ever
// deleted because of it. It is added to, then asked (sorted once); NumberByKey and KeySet below
// are asked between additions.

export class SeenSet {
  private hashes = new Float64Array(1024);
  private size = 0;
  private sorted = false;

  add(key: string): void {
    if (this.size === this.hashes.length) {
      const grown = new Float64Array(this.hashes.length * 2);
      grown.set(this.hashes);
      this.hashes = grown;
    }
    this.hashes[this.size++] = hash53(key);
    this.sorted = false;
  }

  /** Room for `count` keys without growing, when the count is known ahead (a listing's totalCount). */
  reserve(count: number): void {
    if (count <= this.hashes.length) return;
    const room = new Float64Array(count);
    room.set(this.hashes.subarray(0, this.size));
    this.hashes = room;
  }

  has(key: string): boolean {
    if (!this.sorted) {
      this.hashes = this.hashes.slice(0, this.size).sort();
      this.sorted = true;
    }
    const h = hash53(key);
    let lo = 0;
    let hi = this.size - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const v = this.hashes[mid] as number;
      if (v === h) return true;
      if (v < h) lo = mid + 1;
      else hi = mid - 1;
    }
    return false;
  }
}

/**
 * Numbers per key (a document's date per path, and its fingerprint), kept as a 53-bit hash and
 * `width` doubles (0: a set of keys): 8 x (1 + width) bytes a slot, at most three quarters of the
 * slots full, instead of a string and a map entry per key. Open addressing, linear probing. A
 * collision (about 1 in 10^4 over a million keys) makes two keys share their numbers: the later
 * one is then taken for an older copy of the first and reported as such, never dropped unsaid.
 * `reserve` sizes it once for a count known ahead (a listing's totalCount): growing by doubling
 * holds the old arrays and the new at once, half as much again at the moment of the last growth.
 */
export class NumberByKey {
  // Small at first: a run may hold one per folder (what each folder of a project holds), and
  // most of them stay small or empty (a migration into a new tenant: 10,000 empty folders).
  private keys = new Float64Array(16);
  private values: Float64Array;
  private size = 0;

  constructor(private readonly width = 1) {
    this.values = new Float64Array(16 * width);
  }

  /** The key's number at `slot` (0 to width - 1), or undefined when the key was never set. */
  get(key: string, slot = 0): number | undefined {
    const i = this.find(hash53(key) + 1); // 0 marks an empty slot
    return this.keys[i] === 0 ? undefined : this.values[i * this.width + slot];
  }

  /** Whether the key was ever set (the only question of a width of 0: a set). */
  has(key: string): boolean {
    return this.keys[this.find(hash53(key) + 1)] !== 0;
  }

  /** Sets the key's number at `slot`; the key's other numbers stay (0 for a new key). */
  set(key: string, value: number, slot = 0): void {
    if ((this.size + 1) * 4 > this.keys.length * 3) this.resize(this.keys.length * 2);
    const h = hash53(key) + 1;
    const i = this.find(h);
    if (this.keys[i] === 0) {
      this.keys[i] = h;
      this.size++;
    }
    if (this.width > 0) this.values[i * this.width + slot] = value;
  }

  /** Room for `count` keys without growing: exactly enough, not the next power of two. */
  reserve(count: number): void {
    const slots = Math.ceil(((count + 1) * 4) / 3);
    if (slots > this.keys.length) this.resize(slots);
  }

  /** The slot holding `h`, or the empty slot where it would go. */
  private find(h: number): number {
    const n = this.keys.length;
    for (let i = h % n; ; i = i + 1 === n ? 0 : i + 1) {
      const k = this.keys[i] as number;
      if (k === 0 || k === h) return i;
    }
  }

  private resize(slots: number): void {
    const [keys, values, width] = [this.keys, this.values, this.width];
    this.keys = new Float64Array(slots);
    this.values = new Float64Array(slots * width);
    for (let i = 0; i < keys.length; i++) {
      const h = keys[i] as number;
      if (h === 0) continue;
      const j = this.find(h);
      this.keys[j] = h;
      for (let w = 0; w < width; w++) this.values[j * width + w] = values[i * width + w] as number;
    }
  }
}

/**
 * A set of keys taken in any order and asked about between takes, as hashes: 8 bytes a slot (the
 * hash alone, no number beside it), at most three quarters full (a Set of a million document ids
 * held about 100 MiB). A collision (about 1 in 10^10 a question, with a million keys) answers yes
 * for a key never added.
 */
export class KeySet {
  private readonly keys = new NumberByKey(0);

  add(key: string): void {
    this.keys.set(key, 0);
  }

  has(key: string): boolean {
    return this.keys.has(key);
  }

  reserve(count: number): void {
    this.keys.reserve(count);
  }
}

/** Two 32-bit FNV-1a variants combined into the 53 bits a double holds exactly. */
export function hash53(s: string): number {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
  }
  return (a >>> 0) * 0x200000 + ((b >>> 0) >>> 11);
}
