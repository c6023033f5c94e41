import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { blake3 } from '../../../src/protocol/hash.js';
import { LeafIndex, OffsetTable } from '../../../src/store/log/memory-index.js';

function hashes(n: number, dupEvery = 0): Uint8Array[] {
  const dup = blake3(new Uint8Array([0]));
  return Array.from({ length: n }, (_, i) => (dupEvery && i % dupEvery === 0 ? dup : blake3(new Uint8Array([1, i & 255, i >> 8, i >> 16]))));
}

test('leaf index: incremental adds find every leaf, duplicates resolve to the lowest index', () => {
  const hs = hashes(20000, 1000); // leaves 0, 1000, 2000, … share one hash
  const idx = new LeafIndex((i) => hs[i]);
  hs.forEach((h, i) => idx.add(i, h));
  for (let i = 0; i < hs.length; i++) assert.equal(idx.find(hs[i]), i % 1000 === 0 ? 0 : i);
  assert.equal(idx.find(blake3(new Uint8Array([9]))), null);
  assert.equal(idx.find(new Uint8Array(31)), null);
  assert.throws(() => idx.add(5, hs[5]), RangeError);
});

test('leaf index: bulk tags + rebuild equals incremental adds', () => {
  const hs = hashes(30000, 777);
  const idx = new LeafIndex((i) => hs[i]);
  for (let from = 0; from < hs.length; from += 4096) {
    const chunk = new Uint8Array(Math.min(4096, hs.length - from) * 32);
    for (let k = 0; k < chunk.length / 32; k++) chunk.set(hs[from + k], k * 32);
    idx.appendTags(chunk);
  }
  idx.rebuild();
  for (let i = 0; i < hs.length; i++) assert.equal(idx.find(hs[i]), i % 777 === 0 ? 0 : i);
  const more = blake3(new Uint8Array([42, 42]));
  hs.push(more);
  idx.add(30000, more);
  assert.equal(idx.find(more), 30000);
});

test('offset table grows and keeps every location', () => {
  const t = new OffsetTable();
  t.reserve(10);
  for (let i = 0; i < 5000; i++) t.push(i >> 10, i * 2 ** 31 + 7);
  assert.equal(t.size, 5000);
  for (let i = 0; i < 5000; i += 97) {
    assert.equal(t.segment(i), i >> 10);
    assert.equal(t.offset(i), i * 2 ** 31 + 7);
  }
});
