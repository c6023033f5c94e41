/** In-process HotCache: a Map in recency order, bounded by entry count, with per-entry TTLs. */
import type { CacheHit, HotCache } from './hot-cache.js';

export interface LruCacheOptions {
  /** Values kept at most (default 10 000). */
  maxEntries?: number;
  /** Cell generations kept at most (default 100 000). */
  maxCells?: number;
  /** Clock in ms (tests). */
  now?: () => number;
}

interface Slot {
  value: Uint8Array;
  expiresAt: number;
}

/** Bounded in-process cache; the default when no Redis is configured. */
export class LruCache implements HotCache {
  private readonly values = new Map<string, Slot>();
  private readonly gens = new Map<string, number>();
  private readonly maxEntries: number;
  private readonly maxCells: number;
  private readonly now: () => number;
  /**
   * Generations come from one counter, so a value is never issued twice. A cell whose
   * generation was evicted reads `floor`, which moves past every issued value at each
   * eviction: keys cached under a forgotten generation can then never match again.
   */
  private counter = 0;
  private floor = 0;

  constructor(opts: LruCacheOptions = {}) {
    this.maxEntries = opts.maxEntries ?? 10_000;
    this.maxCells = opts.maxCells ?? 100_000;
    this.now = opts.now ?? Date.now;
    if (!Number.isSafeInteger(this.maxEntries) || this.maxEntries < 1) throw new RangeError('maxEntries: expected a positive integer');
    if (!Number.isSafeInteger(this.maxCells) || this.maxCells < 1) throw new RangeError('maxCells: expected a positive integer');
  }

  /** Number of values held (expired ones included until touched). */
  get size(): number {
    return this.values.size;
  }

  async get(key: string): Promise<Uint8Array | null> {
    return (await this.getEntry(key))?.value ?? null;
  }

  async getEntry(key: string): Promise<CacheHit | null> {
    const slot = this.values.get(key);
    if (!slot) return null;
    this.values.delete(key);
    const ttlMs = slot.expiresAt - this.now();
    if (ttlMs <= 0) return null;
    this.values.set(key, slot); // most recently used goes last
    return { value: slot.value, ttlMs };
  }

  async set(key: string, value: Uint8Array, ttlS: number): Promise<void> {
    this.values.delete(key);
    this.values.set(key, { value, expiresAt: this.now() + ttlS * 1000 });
    while (this.values.size > this.maxEntries) this.values.delete(this.values.keys().next().value as string);
  }

  async bumpGeneration(cell: string): Promise<void> {
    this.gens.delete(cell);
    this.gens.set(cell, ++this.counter);
    while (this.gens.size > this.maxCells) {
      this.gens.delete(this.gens.keys().next().value as string);
      this.floor = ++this.counter;
    }
  }

  async generation(cell: string): Promise<number> {
    return this.gens.get(cell) ?? this.floor;
  }

  async close(): Promise<void> {
    this.values.clear();
    this.gens.clear();
  }
}
