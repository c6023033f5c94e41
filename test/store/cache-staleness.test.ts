/**
 * Issue 13 item 1: a hot cache that lost its state must never serve a pre-outage answer.
 *
 * Two "responders" (two cached wrappers, each with its own Redis client and in-process memo)
 * share one store and one private redis-server, which the tests restart, flush, snapshot or
 * freeze between a warm read and a write. The old value must not come back, and memoised
 * answers must expire within the query TTL whatever the cache says.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { cellOf } from '../../src/protocol/cell64.js';
import { cachedStore, type CachedStore } from '../../src/store/cache/cached-store.js';
import { LruCache } from '../../src/store/cache/lru-cache.js';
import { RedisCache } from '../../src/store/cache/redis-cache.js';
import type { Store } from '../../src/store/contract.js';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { makeBatch, makeFact, testSigner } from './support/facts.js';
import { createInMemoryLog } from './support/memory-log.js';
import { redisServerSkip, startPrivateRedis, type PrivateRedis } from './support/redis-server.js';

const signer = testSigner();
const root = mkdtempSync(join(tmpdir(), 'svc-cache-stale-'));
after(() => rmSync(root, { recursive: true, force: true }));
let seq = 0;
const ELEV = 'copdem30m.elevation_mean';
const quiet = () => undefined;

async function sqliteStore(): Promise<Store> {
  return createSqliteStore({ dataDir: join(root, `s-${seq++}`), scanCellLimit: 100 }, createInMemoryLog({ signer }), { logger: quiet });
}

/** Version `n` of the elevation at `cell` (a later signed_at supersedes the earlier one). */
function version(cell: string, n: number) {
  return makeBatch([makeFact({ cell, band: ELEV, tslot: 0, value: n, signed_at: `2026-01-01T00:00:${String(n).padStart(2, '0')}Z` })]);
}

async function waitFor(cond: () => boolean, what: string, ms = 5000): Promise<void> {
  for (const end = Date.now() + ms; !cond(); ) {
    if (Date.now() > end) assert.fail(`${what}: not within ${ms} ms`);
    await new Promise((res) => setTimeout(res, 25));
  }
}

const valueOf = (r: { facts: Array<{ body: Record<string, unknown> }> }) => r.facts.map((f) => f.body.value);

describe('hot cache after Redis loses its state', { skip: redisServerSkip }, () => {
  let redis: PrivateRedis;
  let store: Store;
  let a: CachedStore;
  let b: CachedStore;
  let cell: string;
  const caches: RedisCache[] = [];
  const newCache = (connectionName?: string) => {
    const c = new RedisCache({ url: redis.url, keyPrefix: 'dep:', onError: quiet, connectionName });
    caches.push(c);
    return c;
  };
  const settle = async () => {
    for (const c of caches) assert.ok(await c.ready(5000), 'the cache reconnects');
  };

  before(async () => {
    redis = await startPrivateRedis();
  });
  after(async () => {
    await redis?.stop();
  });
  // Per test: one store, two responders in front of it, a cell no other test touches.
  const setUp = async () => {
    store = await sqliteStore();
    a = cachedStore(store, newCache(), { onError: quiet });
    b = cachedStore(store, newCache(), { onError: quiet });
    cell = cellOf(40 + seq / 100, 10);
    await settle();
  };
  afterEach(async () => {
    await Promise.all(caches.splice(0).map((c) => c.close()));
    await store?.close();
  });

  /** v1 written and read twice through A (the second read is warm); returns after the warm read. */
  async function warmV1(): Promise<void> {
    await a.append(version(cell, 1));
    assert.deepEqual(valueOf(await a.readLatest({ cell })), [1]);
    const warm = await a.readLatest({ cell });
    assert.equal(warm.was_cached, true, 'the repeat is served from the cache');
    assert.deepEqual(valueOf(warm), [1]);
  }

  it('a restarted, empty Redis: a write through the other responder is seen by the warm one', async () => {
    await setUp();
    await warmV1();
    await redis.restart();
    await settle();
    await b.append(version(cell, 2));
    const r = await a.readLatest({ cell });
    assert.deepEqual(valueOf(r), [2], `pre-restart answer served again (was_cached ${r.was_cached})`);
    // And the new answer is cached normally afterwards.
    assert.equal((await a.readLatest({ cell })).was_cached, true);
  });

  it('a restarted, empty Redis: a write through the same responder is seen', async () => {
    await setUp();
    await warmV1();
    await redis.restart();
    await settle();
    await a.append(version(cell, 2));
    assert.deepEqual(valueOf(await a.readLatest({ cell })), [2]);
    assert.deepEqual(valueOf(await b.readLatest({ cell })), [2]);
  });

  it('FLUSHALL while connected (no reconnect to notice): the old value does not come back', async () => {
    await setUp();
    await warmV1();
    await redis.admin.flushall();
    await b.append(version(cell, 2));
    assert.deepEqual(valueOf(await a.readLatest({ cell })), [2]);
    // Several writes after the flush: the counter would pass the old generation again.
    await b.append(version(cell, 3));
    assert.deepEqual(valueOf(await a.readLatest({ cell })), [3]);
  });

  it('a Redis restored from an older snapshot: answers cached before the restore are not trusted', async () => {
    await setUp();
    await warmV1();
    await redis.admin.save(); // the snapshot holds the generation v1 was cached under
    await b.append(version(cell, 2));
    assert.deepEqual(valueOf(await a.readLatest({ cell })), [2]);
    await redis.restart(); // loads the snapshot: the generation goes back to v1's
    await settle();
    const r = await a.readLatest({ cell });
    assert.deepEqual(valueOf(r), [2], `answer from before the snapshot's successor served (was_cached ${r.was_cached})`);
    assert.deepEqual(valueOf(await b.readLatest({ cell })), [2]);
  });

  it('while Redis is frozen nothing is served from the cache; afterwards the newer value is', async () => {
    await setUp();
    await warmV1();
    redis.pause();
    try {
      await b.append(version(cell, 2)); // the bump times out; the write itself is committed
      const during = await a.readLatest({ cell });
      assert.deepEqual(valueOf(during), [2]);
      assert.equal(during.was_cached, false);
    } finally {
      redis.resume();
    }
    await settle();
    await waitFor(() => (b.cache as RedisCache).pendingBumps === 0, 'the timed-out bump is recorded again');
    assert.deepEqual(valueOf(await a.readLatest({ cell })), [2]);
  });

  it('a bump lost on a dropped connection is re-recorded when the writer reconnects', async () => {
    store = await sqliteStore();
    a = cachedStore(store, newCache('a'), { onError: quiet });
    b = cachedStore(store, newCache('b'), { onError: quiet });
    cell = cellOf(39 + seq / 100, 9);
    await settle();
    await warmV1();
    // Drop only the writer's connection: Redis keeps its state, so nothing but the writer knows
    // that the generation A read is now stale.
    const list = String(await redis.admin.client('LIST'));
    const id = /id=(\d+) [^\n]* name=b /.exec(list)?.[1];
    assert.ok(id, list);
    await redis.admin.client('KILL', 'ID', id);
    await b.append(version(cell, 2));
    // The writer itself never serves the cell from the cache while its write is unrecorded.
    assert.deepEqual(valueOf(await b.readLatest({ cell })), [2]);
    // The other responder may serve v1 until the writer has reconnected and re-recorded the
    // write (a few hundred ms here); never longer.
    let seen: unknown[] = [];
    for (const end = Date.now() + 3000; Date.now() < end; await new Promise((res) => setTimeout(res, 25))) {
      seen = valueOf(await a.readLatest({ cell }));
      if (seen[0] === 2) break;
    }
    assert.deepEqual(seen, [2], 'the write stayed hidden behind the old generation');
    assert.equal((b.cache as RedisCache).pendingBumps, 0);
  });

  it('a generation key that vanished alone (eviction, expiry) is reseeded, never restarted', async () => {
    await setUp();
    await warmV1();
    const keys = await redis.admin.keys('dep:*');
    const genKeys = keys.filter((k) => !k.startsWith('dep:v:'));
    assert.ok(genKeys.length > 0, `generation keys exist: ${keys.join(', ')}`);
    for (const k of genKeys) if (!k.endsWith(':era') && k !== 'dep:era') await redis.admin.del(k);
    await b.append(version(cell, 2));
    assert.deepEqual(valueOf(await a.readLatest({ cell })), [2]);
  });

  it('memoised answers expire with the query TTL even while the generation stands', async () => {
    store = await sqliteStore();
    a = cachedStore(store, newCache(), { onError: quiet, queryTtlS: 1 });
    cell = cellOf(41 + seq / 100, 11);
    await settle();
    await a.append(version(cell, 1));
    await a.readLatest({ cell });
    assert.equal((await a.readLatest({ cell })).was_cached, true);
    await new Promise((res) => setTimeout(res, 1200));
    assert.equal((await a.readLatest({ cell })).was_cached, false, 'an answer older than the TTL is not served');
  });
});

describe('hot cache over a Redis that refuses INFO to its user', { skip: redisServerSkip }, () => {
  it('still works, and a reconnect starts a new era (colder, never stale)', async () => {
    // An ACL user without INFO (ioredis tolerates NOPERM on its own ready check).
    const redis = await startPrivateRedis(['--user', 'svc', 'on', 'nopass', '~*', '&*', '+@all', '-info']);
    const store = await sqliteStore();
    const cache = new RedisCache({ url: redis.url.replace('redis://', 'redis://svc@'), keyPrefix: 'noinfo:', onError: quiet });
    const s = cachedStore(store, cache, { onError: quiet });
    try {
      assert.ok(await cache.ready(5000));
      const cell = cellOf(46, 16);
      await s.append(version(cell, 1));
      await s.readLatest({ cell });
      assert.equal((await s.readLatest({ cell })).was_cached, true);
      const era = await redis.admin.get('noinfo:era');
      assert.match(String(era), /^unknown\//);
      await redis.admin.client('KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
      // Until the client notices the dropped connection it still trusts its generations.
      for (let i = 0; i < 100 && (await cache.ready(0)); i++) await new Promise((res) => setTimeout(res, 10));
      assert.ok(await cache.ready(5000));
      assert.notEqual(await redis.admin.get('noinfo:era'), era, 'a new era after the reconnect');
      assert.equal((await s.readLatest({ cell })).was_cached, false);
    } finally {
      await s.close();
      await redis.stop();
    }
  });
});

describe('hot cache, in-process LRU path', () => {
  it('memoised answers expire with the query TTL', async () => {
    let now = Date.parse('2026-03-01T00:00:00Z');
    const clock = () => now;
    const store = await sqliteStore();
    const s = cachedStore(store, new LruCache({ now: clock }), { onError: quiet, queryTtlS: 60, now: clock });
    try {
      const cell = cellOf(42, 12);
      await s.append(version(cell, 1));
      await s.readLatest({ cell });
      now += 59_000;
      assert.equal((await s.readLatest({ cell })).was_cached, true);
      now += 1_000;
      const r = await s.readLatest({ cell });
      assert.equal(r.was_cached, false, 'served past its TTL');
      assert.deepEqual(valueOf(r), [1]);
      // Facts by cid are immutable, so they may live longer, but not past their own TTL.
      const cid = r.facts[0].fact_cid;
      await s.readFact(cid);
      assert.equal((await s.readFact(cid)).was_cached, true);
      now += 86_400_000;
      assert.equal((await s.readFact(cid)).was_cached, false);
    } finally {
      await s.close();
    }
  });

  it('a write is seen at once, and generations never repeat across a bounded generation table', async () => {
    const store = await sqliteStore();
    const lru = new LruCache({ maxCells: 2 });
    const s = cachedStore(store, lru, { onError: quiet });
    try {
      const cell = cellOf(43, 13);
      await s.append(version(cell, 1));
      await s.readLatest({ cell });
      assert.equal((await s.readLatest({ cell })).was_cached, true);
      const seen = new Set([await lru.generation(cell)]);
      // Writes to other cells push this cell's generation out of the table.
      await s.append(version(cellOf(44, 14), 1));
      await s.append(version(cellOf(45, 15), 1));
      seen.add(await lru.generation(cell));
      await s.append(version(cell, 2));
      const g = await lru.generation(cell);
      assert.ok(!seen.has(g), `generation ${g} was issued before (${[...seen].join(', ')})`);
      assert.deepEqual(valueOf(await s.readLatest({ cell })), [2]);
    } finally {
      await s.close();
    }
  });
});
