/**
 * Named, bounded in-process caches: every cache in this process is one of these, over
 * `lru-cache`, and `cacheBounds()` lists them by name with their bounds for /v1/limits.
 *
 * Why bounded: a cache is keyed by what callers ask for (cells, URLs, keys, query shapes), and
 * callers are outside our control, so an unbounded map is a memory leak an attacker can steer.
 * Every cache therefore has a fixed entry bound (and, where entries differ widely in size, a
 * byte bound), and the bound is part of the served limits, not a number buried in one file.
 *
 * Why least recently used: when full, something must go. Dropping the entry read longest ago
 * keeps what is read again and again (a hot cell, a COG's header, an active key) and lets the
 * one-off keys go; clearing everything, or dropping the oldest insert, throws the hot entries
 * out with the cold ones. A cache only saves work: every miss must be answerable from the
 * source, so an eviction costs time and never changes an answer.
 */
import { LRUCache } from 'lru-cache';

export interface CacheOptions<K, V> {
  /** Entries kept at most (a positive integer). */
  max: number;
  /** An entry older than this reads as absent (ms, a positive integer). */
  ttlMs?: number;
  /** Bytes kept at most, each entry weighing `bytesOf(value)`; an entry heavier than this is not kept. */
  maxBytes?: number;
  bytesOf?: (value: V, key: K) => number;
  /** Called when a bound pushes an entry out (not on delete, clear or overwrite). */
  onEvict?: (value: V, key: K) => void;
}

/** A cache's bounds as /v1/limits serves them. */
export interface CacheBound {
  max: number;
  ttl_ms?: number;
  max_bytes?: number;
}

// Name → bounds of the last cache created under that name. Several instances may share a name
// (one per connector, per store, per table); they share its bounds unless a caller overrides
// them, and a process serves one configuration. Holding bounds, not caches, keeps this from
// pinning any cache in memory.
const registry = new Map<string, CacheBound>();

const positiveInt = (n: number | undefined) => n === undefined || (Number.isSafeInteger(n) && n > 0);

/** A least-recently-used cache with a name and fixed bounds. */
export class BoundedCache<K extends {}, V extends {}> {
  private readonly lru: LRUCache<K, V>;

  constructor(
    readonly name: string,
    opts: CacheOptions<K, V>,
  ) {
    const { max, ttlMs, maxBytes, bytesOf, onEvict } = opts;
    if (!positiveInt(max)) throw new RangeError(`cache ${name}: max must be a positive integer, got ${max}`);
    if (!positiveInt(ttlMs)) throw new RangeError(`cache ${name}: ttlMs must be a positive integer, got ${ttlMs}`);
    if (!positiveInt(maxBytes)) throw new RangeError(`cache ${name}: maxBytes must be a positive integer, got ${maxBytes}`);
    if ((maxBytes === undefined) !== (bytesOf === undefined)) throw new RangeError(`cache ${name}: maxBytes and bytesOf go together`);
    const dispose = onEvict && ((v: V, k: K, reason: LRUCache.DisposeReason) => reason === 'evict' && onEvict(v, k));
    const ttl = ttlMs === undefined ? {} : { ttl: ttlMs };
    this.lru = bytesOf
      ? new LRUCache<K, V>({
          max,
          maxSize: maxBytes,
          // lru-cache wants a positive size; an empty entry still takes a slot.
          sizeCalculation: (v, k) => Math.max(1, Math.ceil(bytesOf(v, k))),
          ...ttl,
          ...(dispose ? { dispose } : {}),
        })
      : // lru-cache allocates its slot arrays for `max` up front; a count given as size 1 against
        // maxSize grows them with use instead, so many large, mostly empty caches (one per COG
        // tag array, per interned table) cost nothing until they fill.
        new LRUCache<K, V>({ maxSize: max, sizeCalculation: () => 1, ...ttl, ...(dispose ? { dispose } : {}) });
    registry.set(name, { max, ...(ttlMs === undefined ? {} : { ttl_ms: ttlMs }), ...(maxBytes === undefined ? {} : { max_bytes: maxBytes }) });
  }

  /** The value under `key`, marking it most recently used; undefined when absent or expired. */
  get(key: K): V | undefined {
    return this.lru.get(key);
  }

  /** The value under `key` without touching its recency. */
  peek(key: K): V | undefined {
    return this.lru.peek(key);
  }

  has(key: K): boolean {
    return this.lru.has(key);
  }

  /** Keeps `value` as the most recently used entry, evicting the least recently used past a bound. */
  set(key: K, value: V): void {
    this.lru.set(key, value);
  }

  delete(key: K): boolean {
    return this.lru.delete(key);
  }

  clear(): void {
    this.lru.clear();
  }

  /** Entries held (expired ones count until read or pushed out). */
  get size(): number {
    return this.lru.size;
  }
}

/** Every cache created in this process, by name, with its bounds (served by GET /v1/limits). */
export function cacheBounds(): Record<string, CacheBound> {
  return Object.fromEntries([...registry].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([name, b]) => [name, { ...b }]));
}
