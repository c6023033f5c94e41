/**
 * Hot cache in front of store reads. A cache is an optimisation only: every implementation
 * reports its own failures as misses, so a cache fault can slow a read but never fail it.
 */
import type { FactQuery, StoredFact } from '../contract.js';

/** A cached value and how long the cache will still keep it. */
export interface CacheHit {
  /** Treat it as read-only. */
  value: Uint8Array;
  /** Milliseconds before the entry expires in the cache (> 0): no copy may outlive it. */
  ttlMs: number;
}

/**
 * Byte-valued cache with per-cell generations. A generation names the state of a cell's facts:
 * it changes on every write to the cell and is never issued twice for a cell, even after the
 * cache lost its state (a value filed under a generation must never be reachable again once
 * the cell changed).
 */
export interface HotCache {
  /** The value under `key`, or null on a miss, expiry or cache fault. Treat it as read-only. */
  get(key: string): Promise<Uint8Array | null>;
  /** `get` with the entry's remaining TTL, for copies kept elsewhere (the in-process memo). */
  getEntry(key: string): Promise<CacheHit | null>;
  /** Store `value` under `key` for `ttlS` seconds (best effort). */
  set(key: string, value: Uint8Array, ttlS: number): Promise<void>;
  /** Give the cell a new generation, making every result cached for it unreachable (best effort). */
  bumpGeneration(cell: string): Promise<void>;
  /** bumpGeneration of each cell, where a cache can do them all at once (best effort). */
  bumpGenerations?(cells: readonly string[]): Promise<void>;
  /**
   * The cell's current generation (≥ 0), or -1 when the cache cannot vouch for one (a fault, a
   * reconnect not yet checked, a write not yet recorded): then nothing may be cached or served.
   */
  generation(cell: string): Promise<number>;
  close(): Promise<void>;
}

/** Reads that say whether the hot cache answered them (the receipt's `cost.was_cached`). */
export interface CachedReader {
  readLatest(q: FactQuery): Promise<{ facts: StoredFact[]; was_cached: boolean }>;
  readFact(cid: string): Promise<{ fact: StoredFact | null; was_cached: boolean }>;
}

/** Called with every cache fault (the read itself falls back to the store). */
export type CacheErrorHook = (err: Error, op: string) => void;

/** A hook that writes at most one line per `everyMs` to stderr, so a dead Redis does not flood logs. */
export function throttledErrorLog(everyMs = 30_000, write: (line: string) => void = (l) => process.stderr.write(l + '\n')): CacheErrorHook {
  let last = -Infinity;
  let dropped = 0;
  return (err, op) => {
    const now = Date.now();
    if (now - last < everyMs) {
      dropped++;
      return;
    }
    write(`hot cache: ${op} failed (${err.message}); serving from the store${dropped > 0 ? ` (${dropped} similar errors suppressed)` : ''}`);
    last = now;
    dropped = 0;
  };
}
