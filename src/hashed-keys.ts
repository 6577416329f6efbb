// Keys held as 53-bit hashes in typed arrays, so that memory stays small per key on listings of
// millions (no string and no map entry per key). Written by hand: no maintained library offers a
// compact hashed set and map of strings for Node.
//
// SeenSet: the set of files a run saw, 8 bytes a file, and no write per unchanged file. After the walk, items of the checkpoint
// store that are not in it were deleted locally. A hash collision (about 1 in 10^4 on a tree of a
// million files) would only hide one such report; nothing is ever deleted because of it.

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
 * A number per key (a document's date per path), kept as a 53-bit hash and a double: 16 bytes a key
 * at most half full, instead of a string and a map entry per key. Open addressing, linear probing.
 * A collision (about 1 in 10^4 over a million keys) makes two keys share one number: the later
 * one is then taken for an older copy of the first and reported as such, never dropped unsaid.
 */
export class NumberByKey {
  private keys = new Float64Array(1024);
  private values = new Float64Array(1024);
  private size = 0;

  get(key: string): number | undefined {
    const h = hash53(key) + 1; // 0 marks an empty slot
    const mask = this.keys.length - 1;
    for (let i = h % this.keys.length; ; i = (i + 1) & mask) {
      const k = this.keys[i] as number;
      if (k === 0) return undefined;
      if (k === h) return this.values[i];
    }
  }

  set(key: string, value: number): void {
    if ((this.size + 1) * 2 > this.keys.length) this.grow();
    this.put(hash53(key) + 1, value);
  }

  private put(h: number, value: number): void {
    const mask = this.keys.length - 1;
    for (let i = h % this.keys.length; ; i = (i + 1) & mask) {
      const k = this.keys[i] as number;
      if (k === 0) {
        this.keys[i] = h;
        this.values[i] = value;
        this.size++;
        return;
      }
      if (k === h) {
        this.values[i] = value;
        return;
      }
    }
  }

  private grow(): void {
    const [keys, values] = [this.keys, this.values];
    this.keys = new Float64Array(keys.length * 2);
    this.values = new Float64Array(keys.length * 2);
    this.size = 0;
    for (let i = 0; i < keys.length; i++) if (keys[i] !== 0) this.put(keys[i] as number, values[i] as number);
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
