/**
 * A batch's bodies encoded once (src/store/encoded-body.ts): what is recorded is exactly what
 * encoding the bodies again gives, the bodies cannot change afterwards, a record serves only the
 * very same bodies in the same order, and a log entry built from a record is byte for byte the
 * one built without it (same entry, same index rows, same tree).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { b32encode } from '../../src/protocol/base32.js';
import { encodeCanonical } from '../../src/protocol/cbor.js';
import { cellOf } from '../../src/protocol/cell64.js';
import { factDigest } from '../../src/protocol/cid.js';
import { batchProofs, proofToJson } from '../../src/protocol/merkle-batch.js';
import { OwnedBatchEncoder, ownedBatch } from '../../src/store/encoded-body.js';
import { batchEntry, cidDigest, claimedDigests } from '../../src/store/sqlite/batch-entry.js';
import { BatchTree, buildBatchTree } from '../../src/store/batch-tree.js';
import { makeBatch, makeFact } from './support/facts.js';

const HERE = cellOf(51.5, -0.12);

/** A fresh, unshared copy of a body (as a parsed request gives). */
const parsed = (b: Record<string, unknown>) => JSON.parse(JSON.stringify(b)) as Record<string, unknown>;

function encodeAll(bodies: Record<string, unknown>[]) {
  const enc = new OwnedBatchEncoder();
  const out = bodies.map((b) => enc.encode(b));
  return { out, tree: enc.finish() };
}

describe('OwnedBatchEncoder', () => {
  it('records encodeCanonical of each body, its digest and cid, the tree, and freezes the bodies whole', () => {
    const bodies = [
      parsed(makeFact({ cell: HERE, band: 'indices.ndvi', tslot: 12, value: [0.5, -0.25], scope: { org_id: 'o1' } })),
      parsed(makeFact({ cell: HERE, band: 'era5.t2m', tslot: 3, value: 1 })),
    ];
    const { out, tree } = encodeAll(bodies);
    bodies.forEach((body, i) => {
      assert.deepEqual(out[i].bytes, encodeCanonical(body as never));
      assert.deepEqual(out[i].digest, factDigest(body));
      assert.equal(out[i].cid, b32encode(out[i].digest));
    });
    assert.deepEqual(tree, buildBatchTree(bodies.map((b) => factDigest(b))));
    const rec = ownedBatch(bodies)!;
    assert.equal(rec.tree, tree);
    assert.deepEqual(rec.encoded, out);
    const body = bodies[0];
    assert.ok(Object.isFrozen(body) && Object.isFrozen(body.value) && Object.isFrozen(body.scope) && Object.isFrozen(body.derivation));
    assert.throws(() => {
      (body.value as number[])[0] = 1;
    }, TypeError);
  });

  it('serves a record only to the very same bodies in the same order', () => {
    const bodies = [1, 2, 3].map((v) => parsed(makeFact({ cell: HERE, band: 'era5.t2m', tslot: v, value: v })));
    encodeAll(bodies);
    assert.ok(ownedBatch([...bodies]));
    assert.equal(ownedBatch([bodies[0], bodies[2], bodies[1]]), undefined);
    assert.equal(ownedBatch(bodies.slice(0, 2)), undefined);
    assert.equal(ownedBatch([bodies[0], bodies[1], parsed(bodies[2])]), undefined, 'an equal but distinct object');
    assert.equal(ownedBatch(bodies.map(parsed)), undefined);
  });

  it('records nothing for a batch holding more than plain data', () => {
    const bodies = [parsed(makeFact({ cell: HERE, band: 'x', tslot: 0, value: 1 })), { ...parsed(makeFact({ cell: HERE, band: 'x', tslot: 1, value: 1 })), value: new Uint8Array([1, 2]) }];
    const { out } = encodeAll(bodies);
    assert.deepEqual(out[1].bytes, encodeCanonical(bodies[1] as never));
    assert.equal(ownedBatch(bodies), undefined);
  });
});

describe('batchEntry with a batch the write path encoded', () => {
  it('builds the same entry bytes, digests and batch tree as without it', () => {
    const bodies = [
      makeFact({ cell: HERE, band: 'copdem30m.elevation_mean', tslot: 0, value: 918.5 }),
      makeFact({ cell: HERE, band: 'indices.ndvi', tslot: 12, value: [0.5, -0.25], scope: { org_id: 'o1', user_id: 'u1' } }),
      makeFact({ cell: HERE, band: 'era5.t2m', tslot: 3, value: null, kind: 'absence' }),
    ];
    const plain = makeBatch(bodies.map(parsed));
    const owned = makeBatch(bodies.map(parsed));
    const { tree } = encodeAll(owned.facts.map((f) => f.body));
    const claimed = (b: typeof plain) => b.facts.map((f) => cidDigest(f.fact_cid));
    assert.deepEqual(claimedDigests(owned), claimed(plain));
    const a = batchEntry(plain, claimed(plain), '2026-03-01T12:00:00Z');
    const b = batchEntry(owned, claimedDigests(owned), '2026-03-01T12:00:00Z');
    assert.deepEqual(b.encoded.bytes, a.encoded.bytes);
    assert.deepEqual(b.encoded.bodyAt, a.encoded.bodyAt);
    assert.deepEqual(b.indexed.tree, a.indexed.tree);
    assert.equal(b.indexed.tree, tree, 'the tree the write path built');
    assert.deepEqual(
      b.indexed.facts.map((x) => x.digest),
      a.indexed.facts.map((x) => x.digest),
    );
  });

  it('still refuses a fact_cid that does not name the body', () => {
    const batch = makeBatch([parsed(makeFact({ cell: HERE, band: 'era5.t2m', tslot: 3, value: 1 })), parsed(makeFact({ cell: HERE, band: 'era5.t2m', tslot: 4, value: 2 }))]);
    encodeAll(batch.facts.map((f) => f.body));
    const swapped = { ...batch, facts: [{ ...batch.facts[0], fact_cid: batch.facts[1].fact_cid }, batch.facts[1]] };
    assert.throws(() => batchEntry(swapped, claimedDigests(swapped), '2026-03-01T12:00:00Z'), /facts\[0\]\.fact_cid: does not match/);
    const garbled = { ...batch, facts: [{ ...batch.facts[0], fact_cid: 'not a cid' }, batch.facts[1]] };
    assert.deepEqual(claimedDigests(garbled)[0], null);
  });
});

describe('the batch tree acceptBatch builds', () => {
  it('gives batchProofs root and proofs, duplicates included', () => {
    for (const n of [1, 2, 3, 7, 8, 9, 256, 257]) {
      const digests = Array.from({ length: n }, (_, i) => factDigest({ i: i % Math.max(1, n - 2) }));
      const tree = buildBatchTree(digests);
      const { root, proofs } = batchProofs(digests);
      assert.deepEqual(tree.root, root);
      const reader = new BatchTree(tree.count, tree.blob);
      digests.forEach((_, i) => assert.deepEqual(reader.proof(tree.leafIndex[i]), proofToJson(proofs[i])));
    }
  });
});
