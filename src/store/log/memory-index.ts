/**
 * In-memory indexes rebuilt on open: where each entry's record lives, and which leaf index a
 * leaf hash has. Both are flat typed arrays rather than Maps of objects or hex strings, so ten
 * million entries cost about 200 MB instead of several GB.
 */

/** Per-entry record location: (segment number, byte offset of the record). */
export class OffsetTable {
  private segs = new Uint32Array(1024);
  private offs = new Float64Array(1024);
  private n = 0;

  get size(): number {
    return this.n;
  }

  push(segment: number, offset: number): void {
    if (this.n === this.segs.length) {
      const segs = new Uint32Array(this.n * 2);
      segs.set(this.segs);
      this.segs = segs;
      const offs = new Float64Array(this.n * 2);
      offs.set(this.offs);
      this.offs = offs;
    }
    this.segs[this.n] = segment;
    this.offs[this.n] = offset;
    this.n++;
  }

  segment(i: number): number {
    return this.segs[i];
  }

  offset(i: number): number {
    return this.offs[i];
  }

  /** Forget entries from `n` on. */
  truncate(n: number): void {
    if (n < this.n) this.n = n;
  }
}

/**
 * Leaf hash → lowest leaf index, as an open-addressing table of (index+1) keyed by the hash's
 * first four bytes (leaf hashes are uniform, so those bytes are already a good hash). A slot
 * matches only after the full 32 bytes compare equal, read through `leafAt`.
 */
export class LeafIndex {
  /** First four bytes (LE) of each leaf's hash, by leaf index. */
  private tags = new Uint32Array(1024);
  private slots = new Uint32Array(4096);
  private mask = 4095;
  private n = 0;

  constructor(private readonly leafAt: (index: number) => Uint8Array) {}

  get size(): number {
    return this.n;
  }

  private static tag(h: Uint8Array): number {
    return (h[0] | (h[1] << 8) | (h[2] << 16) | (h[3] << 24)) >>> 0;
  }

  /**
   * Record leaf `index` (must be the next one). Duplicates are inserted too: linear probing
   * with insertion in index order means a lookup meets the lowest index first.
   */
  add(index: number, leaf: Uint8Array): void {
    if (index !== this.n) throw new RangeError(`leaf index: expected ${this.n}, got ${index}`);
    if (this.n === this.tags.length) {
      const tags = new Uint32Array(this.n * 2);
      tags.set(this.tags);
      this.tags = tags;
    }
    const tag = LeafIndex.tag(leaf);
    this.tags[index] = tag;
    this.n++;
    if (this.n * 4 > this.slots.length * 3) this.rehash(this.slots.length * 2);
    else this.place(index, tag);
  }

  private place(index: number, tag: number): void {
    let p = tag & this.mask;
    while (this.slots[p] !== 0) p = (p + 1) & this.mask;
    this.slots[p] = index + 1;
  }

  private rehash(capacity: number): void {
    this.slots = new Uint32Array(capacity);
    this.mask = capacity - 1;
    for (let i = 0; i < this.n; i++) this.place(i, this.tags[i]);
  }

  /** Lowest leaf index whose hash is `leaf`, or null. */
  find(leaf: Uint8Array): number | null {
    if (leaf.length !== 32) return null;
    const tag = LeafIndex.tag(leaf);
    for (let p = tag & this.mask; this.slots[p] !== 0; p = (p + 1) & this.mask) {
      const j = this.slots[p] - 1;
      if (this.tags[j] !== tag) continue;
      const h = this.leafAt(j);
      let same = true;
      for (let i = 0; i < 32; i++) if (h[i] !== leaf[i]) same = false;
      if (same) return j;
    }
    return null;
  }

  /** Forget leaves from `n` on (rebuilds the table). */
  truncate(n: number): void {
    if (n >= this.n) return;
    this.n = n;
    this.rehash(this.slots.length);
  }
}
