/** Hot cache: the LRU, was_cached honesty over LRU and Redis, and degradation when Redis is down. */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { cellOf } from '../../src/protocol/cell64.js';
import { cachedStore, type CachedStore } from '../../src/store/cache/cached-store.js';
import type { HotCache } from '../../src/store/cache/hot-cache.js';
import { LruCache } from '../../src/store/cache/lru-cache.js';
import { RedisCache } from '../../src/store/cache/redis-cache.js';
import { openStore, redisKeyPrefixOf } from '../../src/store/index.js';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { makeBatch, makeFact, testSigner } from './support/facts.js';
import { createInMemoryLog } from './support/memory-log.js';

const signer = testSigner();
const root = mkdtempSync(join(tmpdir(), 'svc-cache-test-'));
after(() => rmSync(root, { recursive: true, force: true }));
let seq = 0;

const HERE = cellOf(51.5, -0.12);
const THERE = cellOf(48.85, 2.35);
const ELEV = 'copdem30m.elevation_mean';
const NDVI = 'indices.ndvi';
const REDIS_URL = process.env.SVC_TEST_REDIS_URL;
const NO_REDIS = 'SVC_TEST_REDIS_URL not set: Redis tests need a server';
// As for PostgreSQL: skip only when no server is named, never when CI requires services.
const REDIS_SKIP = REDIS_URL || process.env.SVC_TEST_REQUIRE_SERVICES === '1' ? undefined : NO_REDIS;

/** A sqlite store over a memory log, wrapped with `cache`. */
async function cachedSqlite(cache: HotCache, onError?: (e: Error, op: string) => void): Promise<CachedStore> {
  const store = await createSqliteStore({ dataDir: join(root, `s-${seq++}`), scanCellLimit: 100 }, createInMemoryLog({ signer }), { logger: () => {} });
  return cachedStore(store, cache, { onError: onError ?? (() => {}) });
}

describe('LruCache', () => {
  it('evicts the least recently used entry beyond its bound', async () => {
    const c = new LruCache({ maxEntries: 2 });
    const v = (n: number) => new Uint8Array([n]);
    await c.set('a', v(1), 60);
    await c.set('b', v(2), 60);
    assert.deepEqual(await c.get('a'), v(1)); // a is now the most recent
    await c.set('c', v(3), 60);
    assert.equal(await c.get('b'), null);
    assert.deepEqual(await c.get('a'), v(1));
    assert.deepEqual(await c.get('c'), v(3));
    assert.equal(c.size, 2);
  });

  it('expires entries after their TTL', async () => {
    let now = 1_000_000;
    const c = new LruCache({ now: () => now });
    await c.set('k', new Uint8Array([1]), 10);
    now += 9_999;
    assert.ok(await c.get('k'));
    now += 1;
    assert.equal(await c.get('k'), null);
  });

  it('issues a fresh generation on every bump, never reusing one after eviction', async () => {
    const c = new LruCache({ maxCells: 2 });
    const g0 = await c.generation('x');
    await c.bumpGeneration('x');
    const g1 = await c.generation('x');
    assert.notEqual(g1, g0);
    await c.bumpGeneration('y');
    await c.bumpGeneration('z'); // evicts x's generation
    const g2 = await c.generation('x');
    assert.ok(![g0, g1].includes(g2), `forgotten generation ${g2} must differ from ${g0} and ${g1}`);
  });

  it('rejects a bound that is not a positive integer', () => {
    assert.throws(() => new LruCache({ maxEntries: 0 }), /maxEntries/);
  });
});

/** The was_cached behaviour every HotCache must give the cached store. */
function wasCachedSuite(name: string, makeCache: () => Promise<HotCache>, skip?: string): void {
  describe(`cached reads (${name})`, { skip }, () => {
    it('reports a miss, then a hit for the identical read', async () => {
      const s = await cachedSqlite(await makeCache());
      try {
        await s.append(makeBatch([makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 1 }), makeFact({ cell: HERE, band: NDVI, tslot: 2, value: 0.2 })]));
        const first = await s.readLatest({ cell: HERE, bands: [NDVI, ELEV] });
        assert.equal(first.was_cached, false);
        const second = await s.readLatest({ cell: HERE, bands: [ELEV, NDVI] }); // same query, other order
        assert.equal(second.was_cached, true);
        assert.deepEqual(second.facts, first.facts);
        assert.equal((await s.readLatest({ cell: HERE, bands: [ELEV] })).was_cached, false, 'another query is another key');
        const cid = first.facts[0].fact_cid;
        assert.deepEqual(await s.readFact(cid).then((r) => r.was_cached), false);
        const again = await s.readFact(cid);
        assert.equal(again.was_cached, true);
        assert.deepEqual(again.fact, first.facts[0]);
        assert.deepEqual(await s.readFact('a'.repeat(52)), { fact: null, was_cached: false });
        assert.deepEqual(await s.readFact('a'.repeat(52)), { fact: null, was_cached: false }, 'absence is not cached');
      } finally {
        await s.close();
      }
    });

    it('serves the next read of a written cell fresh, and leaves other cells cached', async () => {
      const s = await cachedSqlite(await makeCache());
      try {
        await s.append(makeBatch([makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 1 }), makeFact({ cell: THERE, band: ELEV, tslot: 0, value: 5 })]));
        await s.readLatest({ cell: HERE });
        await s.readLatest({ cell: THERE });
        assert.equal((await s.readLatest({ cell: HERE })).was_cached, true);
        const v2 = makeBatch([makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 2, signed_at: '2026-02-01T00:00:00Z' })]);
        await s.append(v2);
        const fresh = await s.readLatest({ cell: HERE });
        assert.equal(fresh.was_cached, false);
        assert.deepEqual(
          fresh.facts.map((f) => f.fact_cid),
          [v2.facts[0].fact_cid],
        );
        assert.equal((await s.readLatest({ cell: HERE })).was_cached, true);
        assert.equal((await s.readLatest({ cell: THERE })).was_cached, true, 'a write elsewhere keeps this cell cached');
        // The Store methods go through the same cache.
        assert.deepEqual(
          (await s.latest({ cell: HERE })).map((f) => f.fact_cid),
          [v2.facts[0].fact_cid],
        );
      } finally {
        await s.close();
      }
    });

    it('does not touch the cache when an append is rejected', async () => {
      const s = await cachedSqlite(await makeCache());
      try {
        await s.append(makeBatch([makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 1 })]));
        await s.readLatest({ cell: HERE });
        const bad = makeBatch([makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 9, signed_at: '2026-02-01T00:00:00Z' })]);
        await assert.rejects(s.append({ ...bad, batch_root: new Uint8Array(32) }));
        assert.equal((await s.readLatest({ cell: HERE })).was_cached, true);
      } finally {
        await s.close();
      }
    });
  });
}

wasCachedSuite('lru', async () => new LruCache());
// One random prefix per run, so concurrent runs on a shared server never see each other's keys.
const REDIS_PREFIX = `svc-test:${randomBytes(6).toString('hex')}:`;
if (REDIS_URL) {
  after(async () => {
    const r = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await r.connect();
      const keys = await r.keys(`${REDIS_PREFIX}*`);
      if (keys.length > 0) await r.del(...keys);
    } finally {
      r.disconnect();
    }
  });
}
wasCachedSuite(
  'redis',
  async () => {
    if (!REDIS_URL) throw new Error('SVC_TEST_REQUIRE_SERVICES=1 but SVC_TEST_REDIS_URL is not set');
    const c = new RedisCache({ url: REDIS_URL, keyPrefix: REDIS_PREFIX, generationTtlS: 900 });
    assert.ok(await c.ready(2000), 'redis at SVC_TEST_REDIS_URL is reachable');
    return c;
  },
  REDIS_SKIP,
);

describe('degraded cache', () => {
  it('answers from the store when Redis is unreachable, reporting errors but never throwing', async () => {
    const errors: string[] = [];
    const cache = new RedisCache({ url: 'redis://127.0.0.1:1', connectTimeoutMs: 200, onError: (_e, op) => errors.push(op) });
    assert.equal(await cache.ready(300), false);
    const s = await cachedSqlite(cache, (_e, op) => errors.push(`wrapper:${op}`));
    try {
      const batch = makeBatch([makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 1 })]);
      await s.append(batch);
      for (let i = 0; i < 2; i++) {
        const r = await s.readLatest({ cell: HERE });
        assert.equal(r.was_cached, false);
        assert.deepEqual(
          r.facts.map((f) => f.fact_cid),
          [batch.facts[0].fact_cid],
        );
        const f = await s.readFact(batch.facts[0].fact_cid);
        // The first read comes from the store; a repeat may be served by the in-process tier of
        // the hot cache (facts by cid are immutable), which was_cached then reports honestly.
        if (i === 0) assert.equal(f.was_cached, false);
        assert.ok(f.fact);
      }
      // generation is not even asked of a cache that has not checked its connection: it answers
      // -1 (do not cache) at once, so only the fact read and the bump report faults.
      assert.ok(errors.includes('get') && errors.includes('bumpGeneration'), `errors seen: ${errors.join(', ')}`);
    } finally {
      await s.close();
    }
  });

  it('survives a cache whose every call throws', async () => {
    const boom = () => Promise.reject(new Error('boom'));
    const cache: HotCache = { get: boom, getEntry: boom, set: boom, bumpGeneration: boom, generation: boom, close: async () => {} };
    const errors: string[] = [];
    const s = await cachedSqlite(cache, (_e, op) => errors.push(op));
    try {
      await s.append(makeBatch([makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 1 })]));
      assert.equal((await s.readLatest({ cell: HERE })).facts.length, 1);
      assert.equal((await s.readFact('a'.repeat(52))).fact, null);
      assert.deepEqual([...new Set(errors)].sort(), ['bumpGeneration', 'generation', 'get']);
    } finally {
      await s.close();
    }
  });

  it('treats an undecodable cached value as a miss', async () => {
    const lru = new LruCache();
    const errors: string[] = [];
    const s = await cachedSqlite(lru, (_e, op) => errors.push(op));
    try {
      const batch = makeBatch([makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 1 })]);
      await s.append(batch);
      await lru.set(`f:${batch.facts[0].fact_cid}`, new Uint8Array([0xff]), 60);
      const r = await s.readFact(batch.facts[0].fact_cid);
      assert.equal(r.was_cached, false);
      assert.ok(r.fact);
      assert.deepEqual(errors, ['get']);
    } finally {
      await s.close();
    }
  });
});

describe('Redis key prefix', () => {
  const pg = (url: string, schema?: string) => redisKeyPrefixOf({ dataDir: '/unused', databaseUrl: url, databaseSchema: schema, scanCellLimit: 1, prefix: 'svc' });
  it('is one per store: responders of one deployment share it, other schemas, databases and data directories do not', () => {
    const a = pg('postgres://svc@db.internal:5432/memory', 'alpha');
    assert.match(a, /^svc:cache:[0-9a-f]{12}:$/);
    assert.equal(pg('postgres://other:secret@db.internal:5432/memory', 'alpha'), a, 'credentials are not part of the identity');
    assert.equal(pg('postgresql://svc@db.internal/memory', 'alpha'), a, 'the default port is the same port');
    assert.notEqual(pg('postgres://svc@db.internal:5432/memory', 'beta'), a);
    assert.notEqual(pg('postgres://svc@db.internal:5432/other', 'alpha'), a);
    assert.notEqual(pg('postgres://svc@db2.internal:5432/memory', 'alpha'), a);
    assert.equal(pg('postgres://svc@db.internal:5432/memory'), pg('postgres://svc@db.internal:5432/memory', 'svc'), 'the default schema is svc');
    const sqlite = (dir: string) => redisKeyPrefixOf({ dataDir: dir, scanCellLimit: 1, prefix: 'svc' });
    assert.notEqual(sqlite('/srv/a'), sqlite('/srv/b'));
    assert.equal(sqlite('/srv/a'), sqlite('/srv/x/../a'));
  });
});

describe('openStore', () => {
  it('opens sqlite over the disk log behind an LRU, and reopens with the same facts', async () => {
    const dataDir = join(root, `open-${seq++}`);
    const quiet = { logger: () => {} };
    let s = await openStore({ dataDir, scanCellLimit: 100 }, signer, quiet);
    const batch = makeBatch([makeFact({ cell: HERE, band: ELEV, tslot: 0, value: 1 })]);
    try {
      assert.equal(s.driver, 'sqlite');
      assert.ok(s.cache instanceof LruCache);
      await s.append(batch);
      assert.equal((await s.readLatest({ cell: HERE })).was_cached, false);
      assert.equal((await s.readLatest({ cell: HERE })).was_cached, true);
    } finally {
      await s.close();
    }
    assert.ok(existsSync(join(dataDir, 'index.sqlite')));
    s = await openStore({ dataDir, scanCellLimit: 100 }, signer, quiet);
    try {
      assert.equal((await s.getFact(batch.facts[0].fact_cid))?.log_index, 0);
      assert.equal(await s.log.size(), 1);
    } finally {
      await s.close();
    }
  });

  it('puts Redis in front when redisUrl is set', { skip: REDIS_SKIP }, async () => {
    const s = await openStore({ dataDir: join(root, `open-${seq++}`), scanCellLimit: 100, redisUrl: REDIS_URL }, signer, { logger: () => {}, redisKeyPrefix: REDIS_PREFIX });
    try {
      assert.ok(s.cache instanceof RedisCache);
      await s.append(makeBatch([makeFact({ cell: THERE, band: ELEV, tslot: 0, value: 1 })]));
      assert.equal((await s.readLatest({ cell: THERE })).was_cached, false);
      assert.equal((await s.readLatest({ cell: THERE })).was_cached, true);
    } finally {
      await s.close();
    }
  });
});
