import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../src/protocol/index.js';
import { loadVectors } from '../support/vectors.js';

describe('batch Merkle tree (spec 4.13, protocol.md §6)', () => {
  const V = loadVectors('merkle/batch.json');
  V.cases.forEach((c: any, i: number) => {
    it(`n=${c.leaves.length}: root and every proof recompute`, () => {
      const leaves = c.leaves.map((x: string) => P.b32decode(x, 32));
      assert.equal(P.toHex(P.batchRoot(leaves)), c.root_hex, `vector ${i}`);
      const { proofs } = P.batchProofs(leaves);
      assert.deepEqual(
        proofs.map((p) => P.proofToJson(p)),
        c.proofs,
        `vector ${i}`,
      );
      leaves.forEach((leaf: Uint8Array, k: number) => assert.ok(P.verifyBatchProof(leaf, proofs[k]), `vector ${i} leaf ${k}`));
    });
  });
  it('the empty set has the all-zero root', () => assert.equal(P.toHex(P.batchRoot([])), '0'.repeat(64)));
  it('the root does not depend on leaf order', () => {
    const leaves = [1, 2, 3, 4, 5].map((i) => P.blake3(P.utf8(String(i))));
    assert.deepEqual(P.batchRoot(leaves), P.batchRoot([...leaves].reverse()));
  });
  it('a proof for another leaf fails', () => {
    const leaves = [1, 2, 3].map((i) => P.blake3(P.utf8(String(i))));
    const { proofs } = P.batchProofs(leaves);
    assert.equal(P.verifyBatchProof(leaves[1], proofs[0]), false);
  });
});

describe('RFC 6962 log tree with BLAKE3 (protocol.md §6)', () => {
  const V = loadVectors('rfc6962/tree.json');
  const entries = Array.from({ length: 64 }, (_, i) => P.utf8(`entry ${i}`));
  const src = P.memoryNodeSource(entries.map(P.leafHash));
  it('the empty tree is H("")', () => assert.equal(P.toHex(P.treeRoot(src, 0)), P.toHex(P.blake3(new Uint8Array(0)))));
  V.sizes.forEach((s: any) => {
    it(`size ${s.size}: root, inclusion and consistency proofs recompute and verify`, () => {
      const root = P.fromHex(s.root);
      assert.equal(P.toHex(P.treeRoot(src, s.size)), s.root);
      for (const inc of s.inclusion) {
        assert.deepEqual(P.inclusionProof(src, inc.index, s.size).map(P.toHex), inc.path, `inclusion ${inc.index}/${s.size}`);
        assert.ok(P.verifyInclusion(inc.index, s.size, P.leafHash(entries[inc.index]), inc.path.map(P.fromHex), root));
      }
      for (const con of s.consistency) {
        assert.deepEqual(P.consistencyProof(src, con.first, s.size).map(P.toHex), con.path, `consistency ${con.first}/${s.size}`);
        assert.ok(P.verifyConsistency(con.first, s.size, P.fromHex(con.first_root), root, con.path.map(P.fromHex)));
      }
    });
  });
  it('every inclusion and consistency proof up to 64 verifies, and a wrong leaf or root fails', () => {
    for (let n = 1; n <= 64; n++) {
      const root = P.treeRoot(src, n);
      for (let m = 0; m < n; m++) {
        const path = P.inclusionProof(src, m, n);
        assert.ok(P.verifyInclusion(m, n, P.leafHash(entries[m]), path, root), `${m}/${n}`);
        assert.equal(P.verifyInclusion(m, n, P.leafHash(P.utf8('forged')), path, root), false);
      }
      for (let m = 1; m <= n; m++) {
        const path = P.consistencyProof(src, m, n);
        assert.ok(P.verifyConsistency(m, n, P.treeRoot(src, m), root, path), `${m}→${n}`);
        if (m < n) assert.equal(P.verifyConsistency(m, n, P.leafHash(P.utf8('forged')), root, path), false);
      }
    }
  });
  it('refuses an index beyond the tree', () => {
    assert.equal(P.verifyInclusion(5, 5, P.leafHash(entries[0]), [], P.treeRoot(src, 5)), false);
    assert.throws(() => P.inclusionProof(src, 5, 5), /index/);
  });
});

describe('tree heads, witnesses and attester digests (protocol.md §6, §7)', () => {
  const V = loadVectors('tree-heads/sth.json');
  V.cases.forEach((c: any) => {
    it(`size ${c.tree_size}: STH and witness digests and signatures`, () => {
      const root = P.fromHex(c.root_hex);
      const pub = P.b32decode(c.responder, 32);
      const sd = P.sthDigest(c.tree_size, root, c.signed_at, pub);
      assert.equal(P.toHex(sd), c.sth_digest_hex);
      assert.ok(P.verifyStrict(P.b32decode(c.sth_signature, 64), sd, pub));
      const wpub = P.b32decode(c.witness, 32);
      const wd = P.witnessDigest(c.tree_size, root, wpub);
      assert.equal(P.toHex(wd), c.witness_digest_hex);
      assert.ok(P.verifyStrict(P.b32decode(c.witness_signature, 64), wd, wpub));
    });
  });
  it('attester digest recomputes', () => {
    const a = V.attester;
    assert.equal(P.toHex(P.attesterDigest(Uint8Array.from(a.batch_root), a.registry_cid, a.schema_cid)), a.digest_hex);
  });
});
