/**
 * A small least-recently-used map bounded by entry count and, optionally, by a total weight
 * (bytes of decoded tiles), so a busy responder keeps hot COG headers and tiles without growing.
 */

/** LRU map with an entry bound and an optional weight bound. */
export class Lru<K, V> {
  private readonly map = new Map<K, { value: V; weight: number }>();
  private total = 0;

  /** `maxEntries` ≥ 1; `maxWeight` caps the sum of the weights passed to set(). */
  constructor(readonly maxEntries: number, readonly maxWeight = Infinity) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new RangeError(`maxEntries: expected an integer ≥ 1, got ${maxEntries}`);
  }

  get size(): number {
    return this.map.size;
  }

  /** Sum of the weights held. */
  get weight(): number {
    return this.total;
  }

  /** The value under `key`, marking it most recently used. */
  get(key: K): V | undefined {
    const e = this.map.get(key);
    if (!e) return undefined;
    // Re-insertion moves the key to the end of Map's insertion order: the MRU end.
    this.map.delete(key);
    this.map.set(key, e);
    return e.value;
  }

  has(key: K): boolean {
    return this.map.has(key);
  }

  /** Stores `value`; evicts least recently used entries past either bound. */
  set(key: K, value: V, weight = 0): void {
    const old = this.map.get(key);
    if (old) {
      this.total -= old.weight;
      this.map.delete(key);
    }
    // An entry heavier than the whole budget is not cached at all.
    if (weight > this.maxWeight) return;
    this.map.set(key, { value, weight });
    this.total += weight;
    while (this.map.size > this.maxEntries || this.total > this.maxWeight) {
      const oldest = this.map.keys().next();
      if (oldest.done) break;
      this.delete(oldest.value);
    }
  }

  delete(key: K): boolean {
    const e = this.map.get(key);
    if (!e) return false;
    this.total -= e.weight;
    return this.map.delete(key);
  }

  clear(): void {
    this.map.clear();
    this.total = 0;
  }
}
