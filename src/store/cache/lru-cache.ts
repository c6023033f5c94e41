/** In-process HotCache: a least-recently-used cache bounded by entry count, with per-entry TTLs. */
import { BoundedCache } from '../../lib/cache.js';
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
  // Each value keeps its own expiry, not the cache's TTL: every set() gives its own TTL, the
  // clock can be the caller's, and getEntry() reports the milliseconds left.
  private readonly values: BoundedCache<string, Slot>;
  private readonly gens: BoundedCache<string, number>;
  private readonly now: () => number;
  /**
   * Generations come from one counter, so a value is never issued twice. A cell whose
   * generation was evicted reads `floor`, which moves past every issued value at each
   * eviction: keys cached under a forgotten generation can then never match again.
   */
  private counter = 0;
  private floor = 0;

  constructor(opts: LruCacheOptions = {}) {
    const maxEntries = opts.maxEntries ?? 10_000;
    const maxCells = opts.maxCells ?? 100_000;
    this.now = opts.now ?? Date.now;
    if (!Number.isSafeInteger(maxEntries) || maxEntries < 1) throw new RangeError('maxEntries: expected a positive integer');
    if (!Number.isSafeInteger(maxCells) || maxCells < 1) throw new RangeError('maxCells: expected a positive integer');
    this.values = new BoundedCache('hot_cache', { max: maxEntries });
    this.gens = new BoundedCache('hot_cache_generations', {
      max: maxCells,
      // The forgotten cell now reads `floor`: move it past every generation issued so far.
      onEvict: () => {
        this.floor = ++this.counter;
      },
    });
  }

  /** Number of values held (expired ones included until touched). */
  get size(): number {
    return this.values.size;
  }

  async get(key: string): Promise<Uint8Array | null> {
    return (await this.getEntry(key))?.value ?? null;
  }

  async getEntry(key: string): Promise<CacheHit | null> {
    const slot = this.values.get(key); // marks it most recently used
    if (!slot) return null;
    const ttlMs = slot.expiresAt - this.now();
    if (ttlMs <= 0) {
      this.values.delete(key);
      return null;
    }
    return { value: slot.value, ttlMs };
  }

  async set(key: string, value: Uint8Array, ttlS: number): Promise<void> {
    this.values.set(key, { value, expiresAt: this.now() + ttlS * 1000 });
  }

  async bumpGeneration(cell: string): Promise<void> {
    this.gens.set(cell, ++this.counter);
  }

  /** A batch's cells in one call: no promise per cell. */
  async bumpGenerations(cells: readonly string[]): Promise<void> {
    for (const cell of cells) this.gens.set(cell, ++this.counter);
  }

  async generation(cell: string): Promise<number> {
    // peek: a read leaves recency alone, so the table keeps the cells written most recently.
    return this.gens.peek(cell) ?? this.floor;
  }

  async close(): Promise<void> {
    this.values.clear();
    this.gens.clear();
  }
}
