// The set of files a run saw, kept as 53-bit hashes in a typed array: 8 bytes a file instead of
// a string per file, and no write per unchanged file. After the walk, items of the checkpoint
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

/** Two 32-bit FNV-1a variants combined into the 53 bits a double holds exactly. */
function hash53(s: string): number {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
  }
  return (a >>> 0) * 0x200000 + ((b >>> 0) >>> 11);
}
