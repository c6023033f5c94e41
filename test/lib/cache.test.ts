/** The one bounded cache every in-process cache is built on, and the registry /v1/limits serves. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BoundedCache, cacheBounds } from '../../src/lib/cache.js';

describe('BoundedCache', () => {
  it('keeps at most max entries, evicting the least recently used', () => {
    const evicted: string[] = [];
    const c = new BoundedCache<string, number>('test_lru', { max: 2, onEvict: (_v, k) => evicted.push(k) });
    c.set('a', 1);
    c.set('b', 2);
    assert.equal(c.get('a'), 1); // a is now the most recent
    c.set('c', 3);
    assert.equal(c.has('b'), false);
    assert.deepEqual([c.get('a'), c.get('c'), c.size], [1, 3, 2]);
    assert.deepEqual(evicted, ['b']);
    // peek reads without refreshing: a stays the least recent and goes next.
    assert.equal(c.peek('a'), 1);
    c.get('c');
    c.set('d', 4);
    assert.equal(c.has('a'), false);
    // Overwrites, deletes and clear are not evictions.
    c.set('d', 5);
    c.delete('c');
    c.clear();
    assert.deepEqual(evicted, ['b', 'a']);
    assert.equal(c.size, 0);
  });

  it('bounds bytes as well as entries, and keeps no entry heavier than the budget', () => {
    const c = new BoundedCache<string, Uint8Array>('test_bytes', { max: 10, maxBytes: 100, bytesOf: (v) => v.byteLength });
    c.set('x', new Uint8Array(60));
    c.set('y', new Uint8Array(60));
    assert.deepEqual([c.has('x'), c.has('y')], [false, true]);
    c.set('z', new Uint8Array(101));
    assert.equal(c.has('z'), false);
    c.set('empty', new Uint8Array(0));
    assert.equal(c.size, 2);
  });

  it('forgets entries older than its TTL', async () => {
    const c = new BoundedCache<string, number>('test_ttl', { max: 4, ttlMs: 20 });
    c.set('k', 1);
    assert.equal(c.get('k'), 1);
    await new Promise((r) => setTimeout(r, 40));
    assert.equal(c.get('k'), undefined);
  });

  it('refuses bounds that are not positive integers', () => {
    assert.throws(() => new BoundedCache('test_bad', { max: 0 }), /max/);
    assert.throws(() => new BoundedCache('test_bad', { max: 1, ttlMs: 0.5 }), /ttlMs/);
    assert.throws(() => new BoundedCache('test_bad', { max: 1, maxBytes: 10 }), /bytesOf/);
  });

  it('lists every cache by name with its bounds', () => {
    const b = cacheBounds();
    assert.deepEqual(b.test_lru, { max: 2 });
    assert.deepEqual(b.test_bytes, { max: 10, max_bytes: 100 });
    assert.deepEqual(b.test_ttl, { max: 4, ttl_ms: 20 });
    assert.equal(b.test_bad, undefined, 'a refused cache is not listed');
    assert.deepEqual(Object.keys(b), Object.keys(b).sort());
  });
});
