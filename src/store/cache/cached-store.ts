/**
 * A Store with a hot cache in front of `getFact` and `latest`, reporting honestly whether the
 * cache answered (`was_cached`).
 *
 * Facts by cid are immutable, so they are cached freely. Query results are filed under a key
 * holding the cell's generation, read BEFORE the store, and `append` gives every cell it touched
 * a new generation AFTER the store commit. Consequences:
 * - a result read before a commit is filed under the old generation, which the bump makes
 *   unreachable, so it is never served after the bump;
 * - between the commit and its bump (one cache round trip) a reader may still get the
 *   pre-commit result: that race window is the only staleness while the cache is healthy;
 * - bumping before the commit instead would let a reader file pre-commit data under the new
 *   generation, stale until the next write to the cell, so the order matters.
 * Generations are never reissued (see HotCache), so a cache that lost its state (a Redis
 * restart, flush or restore) cannot make an old result reachable again, and a cache that cannot
 * vouch for a generation answers -1: the read then goes to the store and nothing is cached.
 * Every entry, in Redis and in this process, expires with its TTL regardless: that bounds a
 * write whose bump never reached the cache (the writer retries it; if the writer dies first,
 * the query TTL is the bound). See docs/reliability.md, "Hot cache staleness".
 */
import { createHash } from 'node:crypto';
import { BoundedCache } from '../../lib/cache.js';
import { decodeTrusted, encodeCanonical, type CborValue } from '../../protocol/cbor.js';
import { isoSeconds } from '../../protocol/receipt.js';
import type { AppendBatch, AppendResult, FactQuery, Store, StoredFact } from '../contract.js';
import { scopeKey } from '../entry.js';
import { throttledErrorLog, type CacheErrorHook, type CachedReader, type HotCache } from './hot-cache.js';

export interface CachedStoreOptions {
  /** TTL of facts by cid (immutable; default one day). */
  factTtlS?: number;
  /** TTL of query results (default 5 minutes; also bounds staleness when a bump is lost). */
  queryTtlS?: number;
  onError?: CacheErrorHook;
  /** Decoded values kept in process (default 20 000). */
  memoEntries?: number;
  /** Clock in ms for in-process expiry (tests). */
  now?: () => number;
}

/** A Store whose reads go through a hot cache, plus the was_cached-reporting reads. */
export type CachedStore = Store &
  CachedReader & {
    readonly cache: HotCache;
    /** The cell's generation in the hot cache, or -1 on a cache fault (reported to onError). */
    generation(cell: string): Promise<number>;
    /**
     * Lookups per kind of read since the store opened: a hit was answered by the cache (memo or
     * cache), a miss went to the store, including reads the cache could not vouch for (`/metrics`).
     */
    readonly lookups: Readonly<Record<'fact' | 'query' | 'bands', { hits: number; misses: number }>>;
  };

/** The cache key material of a query: every filter, normalised so equal queries share a key. */
function queryKey(q: FactQuery): string {
  const norm = {
    b: q.bands === undefined ? null : [...new Set(q.bands)].sort(),
    t: q.tslot ?? null,
    at: q.as_of_tslot ?? null,
    as: q.as_of_signed_at === undefined ? null : isoSeconds(q.as_of_signed_at),
    s: scopeKey(q.scope),
    p: q.provenance === undefined ? null : [...new Set(q.provenance)].sort(),
  };
  return createHash('sha256').update(JSON.stringify(norm)).digest('base64url').slice(0, 22);
}

/** Wrap `store` with `cache`; the wrapper owns both (close closes both). */
export function cachedStore(store: Store, cache: HotCache, opts: CachedStoreOptions = {}): CachedStore {
  const factTtlS = opts.factTtlS ?? 86_400;
  const queryTtlS = opts.queryTtlS ?? 300;
  const onError = opts.onError ?? throttledErrorLog();

  const now = opts.now ?? Date.now;
  const lookups = { fact: { hits: 0, misses: 0 }, query: { hits: 0, misses: 0 }, bands: { hits: 0, misses: 0 } };

  // Decoded values of recent keys, so a warm read skips the cache round trip and the CBOR
  // decode. Query keys carry the generation, which is read from the cache on every query; each
  // entry also keeps the expiry of the cache entry it copies, so no answer is served from here
  // for longer than the cache itself would serve it (a generation alone never expires).
  const memo = new BoundedCache<string, { value: unknown; expiresAt: number }>('hot_cache_decoded', { max: opts.memoEntries ?? 20_000 });
  function keep(key: string, value: unknown, ttlMs: number): void {
    if (!(ttlMs > 0)) return;
    memo.set(key, { value, expiresAt: now() + ttlMs });
  }

  // Cache implementations already turn faults into misses; this also covers a value that
  // does not decode (corrupt or from an incompatible build) and a cache that throws anyway.
  async function lookup<T>(key: string): Promise<T | undefined> {
    const m = memo.get(key);
    if (m !== undefined) {
      if (m.expiresAt > now()) return m.value as T;
      memo.delete(key);
    }
    try {
      const hit = await cache.getEntry(key);
      if (hit === null) return undefined;
      const value = decodeTrusted(hit.value) as T;
      keep(key, value, hit.ttlMs);
      return value;
    } catch (err) {
      onError(err as Error, 'get');
      return undefined;
    }
  }

  function store_(key: string, value: unknown, ttlS: number): void {
    keep(key, value, ttlS * 1000);
    // Not awaited: the read already has its answer. Commands on one connection stay in order,
    // so a later get on the same key sees this set.
    let bytes: Uint8Array;
    try {
      bytes = encodeCanonical(value as CborValue);
    } catch (err) {
      onError(err as Error, 'encode');
      return;
    }
    cache.set(key, bytes, ttlS).catch((err) => onError(err as Error, 'set'));
  }

  async function generation(cell: string): Promise<number> {
    try {
      return await cache.generation(cell);
    } catch (err) {
      onError(err as Error, 'generation');
      return -1;
    }
  }

  const reader: CachedReader = {
    async readFact(cid) {
      const key = `f:${cid}`;
      const hit = await lookup<StoredFact>(key);
      if (hit !== undefined) {
        lookups.fact.hits++;
        return { fact: hit, was_cached: true };
      }
      lookups.fact.misses++;
      const fact = await store.getFact(cid);
      // Absence is not cached: the fact may be appended a moment later.
      if (fact !== null) store_(key, fact, factTtlS);
      return { fact, was_cached: false };
    },
    async readLatest(q) {
      const gen = await generation(q.cell);
      if (gen < 0) {
        lookups.query.misses++;
        return { facts: await store.latest(q), was_cached: false };
      }
      const key = `q:${q.cell}:${gen}:${queryKey(q)}`;
      const hit = await lookup<StoredFact[]>(key);
      if (hit !== undefined) {
        lookups.query.hits++;
        return { facts: hit, was_cached: true };
      }
      lookups.query.misses++;
      const facts = await store.latest(q);
      store_(key, facts, queryTtlS);
      return { facts, was_cached: false };
    },
  };

  return {
    driver: store.driver,
    log: store.log,
    // Memory reads go to the driver: the index answers them in one query, nothing to cache.
    memory: store.memory,
    // Short-lived state is the store's own and must never be answered from the cache.
    transients: store.transients,
    // Documents are the store's own (one lookup by key) and the geocache is a cache already.
    documents: store.documents,
    geocache: store.geocache,
    // Artifacts are bytes the store bounds itself; the hot cache holds facts only.
    artifacts: store.artifacts,
    cache,
    generation,
    lookups,
    readFact: reader.readFact,
    readLatest: reader.readLatest,
    getFact: async (cid) => (await reader.readFact(cid)).fact,
    latest: async (q) => (await reader.readLatest(q)).facts,
    history: (q) => store.history(q),
    async bandsAt(cell, scope) {
      const gen = await generation(cell);
      if (gen < 0) {
        lookups.bands.misses++;
        return store.bandsAt(cell, scope);
      }
      const key = `b:${cell}:${gen}:${scopeKey(scope)}`;
      const hit = await lookup<string[]>(key);
      if (hit !== undefined) {
        lookups.bands.hits++;
        return hit;
      }
      lookups.bands.misses++;
      const bands = await store.bandsAt(cell, scope);
      store_(key, bands, queryTtlS);
      return bands;
    },
    cellsWithPrefix: (prefix, limit, scope) => store.cellsWithPrefix(prefix, limit, scope),
    stats: () => store.stats(),
    // Counts move with every write and feed a limit: never served from the cache.
    attesterFactsOn: (attester, day) => store.attesterFactsOn(attester, day),
    publicFactsByAttester: () => store.publicFactsByAttester(),
    // Scope claims are store state the cache must never answer: forwarded as is.
    claimScope: (scope, claimant, exclude) => store.claimScope(scope, claimant, exclude),
    addWitness: (w) => store.addWitness(w),
    witnesses: () => store.witnesses(),
    async append(batch: AppendBatch): Promise<AppendResult> {
      const res = await store.append(batch); // a rejected append never reaches the cache
      // Every touched cell, duplicates included: a batch repeating a new fact reports it as a
      // duplicate, and a wasted bump only costs one miss.
      const cells = [...new Set(batch.facts.map((f) => f.cell))];
      if (cache.bumpGenerations) await cache.bumpGenerations(cells).catch((err) => onError(err as Error, 'bumpGeneration'));
      else await Promise.all(cells.map((c) => cache.bumpGeneration(c).catch((err) => onError(err as Error, 'bumpGeneration'))));
      return res;
    },
    async close() {
      try {
        await store.close();
      } finally {
        await cache.close();
      }
    },
  };
}
