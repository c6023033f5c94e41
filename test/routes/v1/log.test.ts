import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../src/protocol/index.js';
import { build, type TestApp } from '../../support/app.js';
import { makeAttester, sampleFact } from '../../support/attester.js';

let t: TestApp;
const op = makeAttester('log-operator');
const witnessSeed = (label: string) => P.blake3(P.utf8(`witness ${label}`));
const witnessKey = (label: string) => P.b32encode(P.portableEd25519.publicKey(witnessSeed(label)));
const heads: any[] = [];
before(async () => {
  // Witnesses a and b are known to the operator: only known keys count as operators (issue 13 item 10).
  t = await build({ attesterKeys: [op.publicKey], witnessKeys: { [witnessKey('a')]: 'op-a', [witnessKey('b')]: 'op-b' } });
  for (let i = 0; i < 7; i++) {
    const r = await t.app.inject({ method: 'POST', url: '/v1/attest', payload: op.batch([sampleFact(), sampleFact()], t.service.manifests) });
    assert.equal(r.statusCode, 200, r.body);
    heads.push(r.json().tree_head);
  }
});
after(async () => t.close());

const get = async (url: string) => {
  const r = await t.app.inject({ method: 'GET', url });
  return { status: r.statusCode, body: r.json() };
};
const d = (x: string) => P.b32decode(x, 32);

describe('GET /v1/log/sth', () => {
  it('is signed by the responder over (size, root, signed_at, key)', async () => {
    const s = (await get('/v1/log/sth')).body;
    assert.equal(s.tree_size, 7);
    const pub = d(s.responder);
    assert.equal(s.responder, t.service.keys.publicKeyB32);
    assert.ok(P.verifyStrict(P.b32decode(s.signature, 64), P.sthDigest(s.tree_size, d(s.root), s.signed_at, pub), pub));
    assert.equal(s.root_hex, P.toHex(d(s.root)));
  });
});

describe('GET /v1/log/inclusion', () => {
  it('by leaf index: the path verifies against the root', async () => {
    for (let i = 0; i < 7; i++) {
      const r = (await get(`/v1/log/inclusion?index=${i}`)).body;
      assert.ok(P.verifyInclusion(i, r.tree_size, d(r.leaf_hash), r.path.map(d), d(r.root)), `leaf ${i}`);
    }
  });
  it('by entry hash, at an older tree size', async () => {
    const first = (await get('/v1/log/inclusion?index=2&tree_size=3')).body;
    const r = (await get(`/v1/log/inclusion?entry_hash=${first.leaf_hash}&tree_size=5`)).body;
    assert.equal(r.leaf_index, 2);
    assert.equal(r.tree_size, 5);
    assert.ok(P.verifyInclusion(2, 5, d(r.leaf_hash), r.path.map(d), d(r.root)));
    assert.equal(r.root, heads[4].root);
  });
  it('refuses out-of-range input with typed errors', async () => {
    assert.equal((await get('/v1/log/inclusion?index=7')).body.code, 'invalid_argument');
    assert.equal((await get('/v1/log/inclusion?index=1&tree_size=99')).body.code, 'invalid_argument');
    assert.equal((await get(`/v1/log/inclusion?entry_hash=${'a'.repeat(52)}`)).body.code, 'cid_not_found');
    assert.equal((await get('/v1/log/inclusion?index=-1')).body.code, 'invalid_argument');
    assert.equal((await get('/v1/log/inclusion')).body.code, 'invalid_argument');
  });
});

describe('GET /v1/log/consistency', () => {
  it('every earlier head served is consistent with the current one', async () => {
    for (const h of heads) {
      const r = (await get(`/v1/log/consistency?first=${h.tree_size}&second=7`)).body;
      assert.equal(r.first_root, h.root);
      assert.ok(P.verifyConsistency(h.tree_size, 7, d(h.root), d(r.second_root), r.path.map(d)), `from ${h.tree_size}`);
    }
  });
  it('first > second is refused', async () => {
    assert.equal((await get('/v1/log/consistency?first=5&second=3')).status, 422);
  });
});

describe('GET /v1/log/entries/:index', () => {
  it('decodes the batch entry with its facts', async () => {
    const r = (await get('/v1/log/entries/0')).body;
    assert.equal(r.entry.type, 'batch');
    assert.equal(r.entry.facts.length, 2);
    assert.equal(r.entry.attester, op.publicKey);
    assert.equal(r.leaf_hash, P.b32encode(P.leafHash(P.fromHex(r.cbor_hex))));
  });
});

describe('POST /v1/log/witness and GET /v1/log/witnesses', () => {
  const witness = (label: string) => {
    const seed = witnessSeed(label);
    return { seed, key: P.b32encode(P.portableEd25519.publicKey(seed)) };
  };
  const cosign = (w: { seed: Uint8Array; key: string }, size: number, root: string) => P.b32encode(P.portableEd25519.sign(P.witnessDigest(size, d(root), d(w.key)), w.seed));

  it('accepts co-signatures of this log heads and counts independent operators', async () => {
    const a = witness('a');
    const b = witness('b');
    for (const [w, operator] of [
      [a, 'op-a'],
      [b, 'op-b'],
    ] as const) {
      const h = heads[3];
      const r = await t.app.inject({ method: 'POST', url: '/v1/log/witness', payload: { tree_size: h.tree_size, root: h.root, witness: w.key, signature: cosign(w, h.tree_size, h.root), operator } });
      assert.equal(r.statusCode, 200, r.body);
    }
    const list = (await get('/v1/log/witnesses')).body;
    assert.equal(list.witnesses.length, 2);
    assert.equal(list.independent_operators, 2);
  });
  it('refuses a root that is not this log root at that size', async () => {
    const w = witness('c');
    const fake = P.b32encode(P.blake3(P.utf8('fork')));
    const r = await t.app.inject({ method: 'POST', url: '/v1/log/witness', payload: { tree_size: 3, root: fake, witness: w.key, signature: cosign(w, 3, fake) } });
    assert.equal(r.statusCode, 422);
    assert.equal(r.json().code, 'bad_merkle_proof');
  });
  it('refuses a co-signature that does not verify', async () => {
    const w = witness('d');
    const h = heads[2];
    const r = await t.app.inject({ method: 'POST', url: '/v1/log/witness', payload: { tree_size: h.tree_size, root: h.root, witness: w.key, signature: cosign(w, h.tree_size + 1, h.root) } });
    assert.equal(r.statusCode, 401);
    assert.equal(r.json().code, 'bad_signature');
  });
});
