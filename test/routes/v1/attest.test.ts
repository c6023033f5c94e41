import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../src/protocol/index.js';
import { build, type TestApp } from '../../support/app.js';
import { makeAttester, sampleFact, type TestAttester } from '../../support/attester.js';

let t: TestApp;
let op: TestAttester;
let stranger: TestAttester;
let revoked: TestAttester;
before(async () => {
  op = makeAttester('operator');
  stranger = makeAttester('stranger');
  revoked = makeAttester('revoked');
  t = await build({ attesterKeys: [op.publicKey, revoked.publicKey], revokedKeys: [revoked.publicKey] });
});
after(async () => t.close());

const post = async (url: string, payload: unknown) => {
  const r = await t.app.inject({ method: 'POST', url, payload: payload as any });
  return { status: r.statusCode, body: r.json() };
};
const manifests = () => t.service.manifests;

/** Everything a rejected write must leave unchanged. */
async function snapshot() {
  const s = t.service.store;
  return { size: await s.log.size(), root: P.toHex(await s.log.root()), stats: await s.stats() };
}

async function expectRejected(payload: unknown, code: string, status: number, url = '/v1/attest') {
  const before = await snapshot();
  const r = await post(url, payload);
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.equal(r.body.code, code);
  assert.equal(r.body.schema, 'svc.error.v1');
  assert.deepEqual(await snapshot(), before, 'a rejection changes nothing');
  return r.body;
}

describe('POST /v1/attest', () => {
  describe('when the batch is good', () => {
    it('accepts it from an operator-listed key, durably, with proofs that verify', async () => {
      const facts = [sampleFact(), sampleFact({ band: 'copdem30m.elevation_mean', tslot: 0, value: 918.0, unit: 'm_msl' })];
      const r = await post('/v1/attest', op.batch(facts, manifests()));
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const b = r.body;
      assert.equal(b.accepted, true);
      assert.deepEqual(
        b.fact_cids,
        facts.map((f) => P.factCid(f)),
      );
      // The tree head includes the batch and verifies.
      const sth = b.tree_head;
      assert.ok(sth.tree_size > b.log_index);
      const pub = P.b32decode(sth.responder, 32);
      assert.ok(P.verifyStrict(P.b32decode(sth.signature, 64), P.sthDigest(sth.tree_size, P.b32decode(sth.root, 32), sth.signed_at, pub), pub));
      // The log entry is included in that head.
      const entry = await t.service.store.log.entry(b.log_index);
      assert.ok(
        P.verifyInclusion(
          b.log_index,
          sth.tree_size,
          P.leafHash(entry!),
          b.log_inclusion.path.map((x: string) => P.b32decode(x, 32)),
          P.b32decode(sth.root, 32),
        ),
      );
      // Each fact's proof reaches the submitted root.
      for (const cid of b.fact_cids) {
        const proof = P.proofFromJson(b.merkle_proofs[cid]);
        assert.ok(P.verifyBatchProof(P.b32decode(cid, 32), proof));
        assert.equal(P.toHex(proof.root), P.toHex(Uint8Array.from(op.batch(facts, manifests()).batch_root)));
      }
      assert.ok(P.verifyReceipt(b.receipt, { publicKey: t.service.keys.publicKeyB32 }).valid);
      // And the store serves the exact body.
      const stored = await t.service.store.getFact(b.fact_cids[1]);
      assert.deepEqual(stored!.body, facts[1]);
      assert.equal(stored!.tslot, 0);
    });

    it('leaves the per-fact proofs out of the answer on ?proofs=none, and refuses an unknown choice', async () => {
      const facts = [sampleFact({ band: 'copdem30m.elevation_mean', tslot: 0, value: 411.5, unit: 'm_msl' })];
      const r = await post('/v1/attest?proofs=none', op.batch(facts, manifests()));
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.merkle_proofs, undefined);
      assert.deepEqual(r.body.fact_cids, [P.factCid(facts[0])]);
      // The receipt still carries the first fact's proof, and the stored fact its own.
      assert.ok(P.verifyReceipt(r.body.receipt, { publicKey: t.service.keys.publicKeyB32 }).valid);
      assert.ok(r.body.receipt.merkle_proof);
      const stored = await t.service.store.getFact(r.body.fact_cids[0]);
      assert.ok(P.verifyBatchProof(P.b32decode(stored!.fact_cid, 32), P.proofFromJson(stored!.proof)));
      await expectRejected(op.batch([sampleFact({ value: 3 })], manifests()), 'invalid_argument', 422, '/v1/attest?proofs=some');
    });

    it('reports a re-submission as duplicates without a new log entry', async () => {
      const facts = [sampleFact()];
      const first = await post('/v1/attest', op.batch(facts, manifests()));
      assert.equal(first.status, 200);
      const size = await t.service.store.log.size();
      const again = await post('/v1/attest', op.batch(facts, manifests()));
      assert.equal(again.status, 200);
      assert.deepEqual(again.body.duplicates, first.body.fact_cids);
      assert.equal(await t.service.store.log.size(), size);
    });
  });

  describe('when the batch is bad, it is refused and nothing changes', () => {
    it('root mismatch → bad_merkle_proof saying so', async () => {
      const p = op.batch([sampleFact()], manifests());
      p.batch_root[0] ^= 1;
      const e = await expectRejected(p, 'bad_merkle_proof', 422);
      assert.match(e.message, /merkle root mismatch/);
    });
    it('a fact changed after signing → bad_merkle_proof', async () => {
      const p = op.batch([sampleFact()], manifests());
      // Still a valid temperature, so only the root can give the change away.
      p.facts[0] = { ...p.facts[0], value: (p.facts[0].value as number) + 1 };
      await expectRejected(p, 'bad_merkle_proof', 422);
    });
    it('signature by another key → bad_signature', async () => {
      const p = op.batch([sampleFact()], manifests());
      p.signature = stranger.batch(p.facts, manifests()).signature;
      const e = await expectRejected(p, 'bad_signature', 401);
      assert.match(e.message, /bad signature/);
    });
    it('signature over other manifests → bad_signature', async () => {
      const p = op.batch([sampleFact()], { registry_cid: 'x', schema_cid: 'y' });
      await expectRejected(p, 'bad_signature', 401);
    });
    it('an unlisted key → 403', async () => {
      const e = await expectRejected(stranger.batch([sampleFact()], manifests()), 'unauthorized', 403);
      assert.equal(e.details.field, 'attester');
    });
    it('a revoked key → attester_revoked', async () => {
      await expectRejected(revoked.batch([sampleFact()], manifests()), 'attester_revoked', 403);
    });
    it('missing signature → unauthorized naming the field (spec part 5)', async () => {
      const p: any = op.batch([sampleFact()], manifests());
      delete p.signature;
      const e = await expectRejected(p, 'unauthorized', 401);
      assert.match(e.message, /signature/);
      const p2: any = op.batch([sampleFact()], manifests());
      p2.signature = '';
      await expectRejected(p2, 'unauthorized', 401);
    });
    it('a subject that is neither a cell nor an entity → unaddressable_subject', async () => {
      await expectRejected(op.batch([sampleFact({ cell: 'somewhere nice' })], manifests()), 'unaddressable_subject', 422);
    });
    it('an unknown band → band_not_in_registry', async () => {
      await expectRejected(op.batch([sampleFact({ band: 'ndvi' })], manifests()), 'band_not_in_registry', 404);
    });
    it('tslot off the band grid → tslot_mismatch', async () => {
      await expectRejected(op.batch([sampleFact({ band: 'copdem30m.elevation_mean', tslot: 3 })], manifests()), 'tslot_mismatch', 422);
    });
    it('restricted facts from an operator key at full resolution → privacy_refused', async () => {
      await expectRejected(op.batch([sampleFact({ privacy_class: 'restricted' })], manifests()), 'privacy_refused', 403);
    });
    it('batch_root as a hex string → invalid_argument', async () => {
      const p: any = op.batch([sampleFact()], manifests());
      p.batch_root = 'ab'.repeat(32);
      const e = await expectRejected(p, 'invalid_argument', 422);
      assert.match(e.message, /batch_root/);
    });
    it('an unknown registry_cid → registry_cid_unknown', async () => {
      const p: any = op.batch([sampleFact()], manifests());
      p.registry_cid = 'nope';
      await expectRejected(p, 'registry_cid_unknown', 404);
    });
  });
});

describe('POST /v1/attest_cbor', () => {
  const cbor = (p: ReturnType<TestAttester['batch']>) =>
    P.encodeCanonical({ batch_root: Uint8Array.from(p.batch_root), attester: P.b32decode(p.attester, 32), signature: P.b32decode(p.signature, 64), facts: p.facts as any });

  it('accepts the canonical CBOR envelope', async () => {
    const p = op.batch([sampleFact()], manifests());
    const r = await t.app.inject({ method: 'POST', url: '/v1/attest_cbor', payload: Buffer.from(cbor(p)), headers: { 'content-type': 'application/cbor' } });
    assert.equal(r.statusCode, 200, r.body);
    assert.deepEqual(r.json().fact_cids, [P.factCid(p.facts[0])]);
  });

  it('refuses non-canonical bytes (unsorted keys) with canonical_encoding_divergence, changing nothing', async () => {
    const p = op.batch([sampleFact()], manifests());
    const good = cbor(p);
    // Re-encode the top-level map with its keys in reverse order: same content, not canonical.
    const m = P.decodeCanonical(good) as Record<string, any>;
    const keys = Object.keys(m).sort().reverse();
    const parts: number[] = [0xa0 + keys.length];
    for (const k of keys) {
      parts.push(...P.encodeCanonical(k), ...P.encodeCanonical(m[k]));
    }
    const before = await snapshot();
    const r = await t.app.inject({ method: 'POST', url: '/v1/attest_cbor', payload: Buffer.from(parts), headers: { 'content-type': 'application/cbor' } });
    assert.equal(r.statusCode, 422);
    assert.equal(r.json().code, 'canonical_encoding_divergence');
    assert.deepEqual(await snapshot(), before);
  });

  it('refuses garbage bytes in the envelope', async () => {
    const r = await t.app.inject({ method: 'POST', url: '/v1/attest_cbor', payload: Buffer.from([0xff, 0x00]), headers: { 'content-type': 'application/cbor' } });
    assert.equal(r.statusCode, 422);
    assert.equal(r.json().code, 'canonical_encoding_divergence');
  });
});
