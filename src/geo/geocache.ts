/**
 * Persistent cache of network geocoder answers (the `cache` tier): the interface the locator
 * reads through and writes to, and an in-process implementation. The persistent ones belong to
 * the store (`store.geocache`, src/store/contract.ts): a file `geocache.sqlite` of the data
 * directory on the embedded driver (src/store/sqlite/geocache.ts), table `geocache` of the
 * deployment's schema on PostgreSQL (src/store/postgres/geocache.ts), so every responder of a
 * deployment shares the answers. Whoever makes a cache closes it (the store, at its close);
 * the locator only reads and writes. Entries expire (30 days for answers, 1 day for "nobody
 * knows this place").
 */

/** What a cache entry holds: the network tier that answered and its normalized answer, or a miss. */
export interface CachedAnswer {
  source: 'photon' | 'nominatim' | 'none';
  /** JSON of the resolution (opaque to the cache). */
  payload: unknown;
  /** Unix milliseconds, by the writer's clock; the entry expires at stored_at + ttlMs. */
  stored_at: number;
}

export interface GeoCache {
  readonly driver: 'sqlite' | 'postgres' | 'memory';
  /** The live entry under `key` at `now` (default: the current time), or undefined. */
  get(key: string, now?: number): Promise<CachedAnswer | undefined>;
  /** Keep `answer` under `key` until answer.stored_at + ttlMs, replacing any earlier entry. */
  put(key: string, answer: CachedAnswer, ttlMs: number): Promise<void>;
}

export const ANSWER_TTL_MS = 30 * 24 * 3600 * 1000;
export const MISS_TTL_MS = 24 * 3600 * 1000;

/** In-process cache (tests, benches). */
export function memoryGeoCache(): GeoCache {
  const m = new Map<string, { a: CachedAnswer; expires: number }>();
  return {
    driver: 'memory',
    async get(key, now = Date.now()) {
      const e = m.get(key);
      return e && e.expires > now ? e.a : undefined;
    },
    async put(key, a, ttlMs) {
      m.set(key, { a, expires: a.stored_at + ttlMs });
    },
  };
}
