/**
 * In-memory indexes rebuilt on open: where each entry's record lives, and which leaf index a
 * leaf hash has. Both are flat typed arrays rather than Maps of objects or hex strings, so ten
 * million entries cost about 250 MB instead of several GB.
 */

/** Per-entry record location: (segment number, byte offset of the record). */
export class OffsetTable {
  private segs = new Uint32Array(1024);
  private offs = new Float64Array(1024);
  private n = 0;

  get size(): number {
    return this.n;
  }

  /** Make room for `n` entries up front (open knows the checkpointed size). */
  reserve(n: number): void {
    if (n <= this.segs.length) return;
    const segs = new Uint32Array(n);
    segs.set(this.segs.subarray(0, this.n));
    this.segs = segs;
    const offs = new Float64Array(n);
    offs.set(this.offs.subarray(0, this.n));
    this.offs = offs;
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
   * Bulk load (open): record the tags of the next leaves from consecutive 32-byte hashes
   * without placing them; `rebuild()` must follow before any lookup.
   */
  appendTags(hashes: Uint8Array): void {
    const count = hashes.length / 32;
    if (this.n + count > this.tags.length) {
      const tags = new Uint32Array(Math.max(this.n + count, this.tags.length * 2));
      tags.set(this.tags.subarray(0, this.n));
      this.tags = tags;
    }
    for (let k = 0, at = 0; k < count; k++, at += 32) {
      this.tags[this.n + k] = (hashes[at] | (hashes[at + 1] << 8) | (hashes[at + 2] << 16) | (hashes[at + 3] << 24)) >>> 0;
    }
    this.n += count;
  }

  /** Re-place every leaf into a table sized for the current count. */
  rebuild(): void {
    let capacity = 4096;
    while (this.n * 4 > capacity * 3) capacity *= 2;
    this.rehash(capacity);
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

  /**
   * Place every leaf into a fresh table of `capacity` slots. Leaves go in order of their home
   * slot (a stable bucket sort on its top 16 bits), so the writes sweep the table once instead
   * of missing the cache on every insert; stability keeps duplicates in index order.
   */
  private rehash(capacity: number): void {
    this.slots = new Uint32Array(capacity);
    this.mask = capacity - 1;
    const shift = Math.max(0, Math.log2(capacity) - 16);
    const buckets = capacity >>> shift;
    const starts = new Uint32Array(buckets + 1);
    for (let i = 0; i < this.n; i++) starts[((this.tags[i] & this.mask) >>> shift) + 1]++;
    for (let b = 0; b < buckets; b++) starts[b + 1] += starts[b];
    const order = new Uint32Array(this.n);
    for (let i = 0; i < this.n; i++) order[starts[(this.tags[i] & this.mask) >>> shift]++] = i;
    for (let k = 0; k < this.n; k++) this.place(order[k], this.tags[order[k]]);
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
}
