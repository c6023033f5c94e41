/**
 * The attacks of issue 13 items 2, 4 and 5, replayed over HTTP as an outsider would run them.
 * Each case failed before the fix: the log entry handed out a scoped body and its tuple, the
 * tuple alone read the scope, the counts included private facts, any listed key wrote into
 * (and superseded) another tenant's scope, and a body naming the responder as its signer
 * passed for a responder-minted fact.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../src/protocol/index.js';
import { build, type TestApp } from '../../support/app.js';
import { makeAttester } from '../../support/attester.js';
import { attest, fails, post } from './reads/helpers.js';

const alice = makeAttester('scope-attacks-alice');
const mallory = makeAttester('scope-attacks-mallory');
const CELL = P.cellOf(52.52, 13.405);
const SCOPE = { org_id: 'acme-secret-org' };
const SECRET = 0.4242;
const ndvi = (value: number, extra: Record<string, unknown> = {}) => ({ kind: 'primary', cell: CELL, band: 'indices.ndvi', tslot: 680, value, unit: 'unitless', ...extra });

describe('issue 13 attacks on scopes and signers', () => {
  let t: TestApp;
  let scopedCid: string;
  before(async () => {
    t = await build({ attesterKeys: [alice.publicKey, mallory.publicKey] }, {}, { materializers: [] });
    [scopedCid] = await attest(t, alice, [ndvi(SECRET, { scope: SCOPE })]);
  });
  after(async () => t.close());

  it('item 2: the log entry of a scoped batch carries neither its bodies nor its scope tuple', async () => {
    const size = (await t.app.inject({ method: 'GET', url: '/v1/log/sth' })).json().tree_size as number;
    const r = await t.app.inject({ method: 'GET', url: `/v1/log/entries/${size - 1}` });
    assert.equal(r.statusCode, 200);
    const text = r.body;
    assert.ok(!text.includes('acme-secret-org'), 'the scope tuple is not published');
    assert.ok(!text.includes(String(SECRET)), 'the value is not published');
    assert.ok(!text.includes(scopedCid), 'nor the fact_cid');
    assert.equal(r.json().cbor_hex, undefined, 'nor the entry bytes');
    assert.equal(typeof r.json().leaf_hash, 'string', 'the leaf hash still is');
  });

  it('item 2: knowing the tuple does not read the scope (recall without a credential is refused)', async () => {
    const r = await post(t, '/v1/recall', { cell: CELL, bands: ['indices.ndvi'], scope: SCOPE });
    fails(r, 401, 'unauthorized');
  });

  it('item 2: the public counts leave scoped facts out', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/v1/corpus_state_stats' });
    assert.equal(r.json().facts_scanned, 0);
    assert.equal(r.json().cells, 0);
  });

  it('item 2: a scoped fact is not read by its cid', async () => {
    fails(await post(t, '/v1/fetch', { cid: scopedCid }), 404, 'cid_not_found');
  });

  it("item 4: another listed key cannot write into a scope it does not own, nor supersede the owner's fact", async () => {
    const r = await t.app.inject({ method: 'POST', url: '/v1/attest', payload: mallory.batch([ndvi(0.99, { scope: SCOPE, signed_at: '2026-11-21T00:00:00Z' })], t.service.manifests) });
    assert.equal(r.statusCode, 403, r.body);
    assert.equal(r.json().code, 'unauthorized');
    const latest = await t.service.store.latest({ cell: CELL, scope: SCOPE });
    assert.deepEqual(
      latest.map((f) => f.fact_cid),
      [scopedCid],
    );
  });

  it("item 5: a body naming the responder as signer, with a materializer's derivation, is refused", async () => {
    const forged = ndvi(0.77, {
      signer: t.service.keys.publicKeyB32,
      provenance: 'sentinel2',
      derivation: { fn: 'ndvi_from_s2@1', sources: ['sentinel2:S2A_FAKE'] },
    });
    const r = await t.app.inject({ method: 'POST', url: '/v1/attest', payload: mallory.batch([forged], t.service.manifests) });
    fails({ status: r.statusCode, body: r.json() }, 422, 'invalid_argument', 'facts[0].signer');
    assert.equal(r.json().details.field, 'facts[0].signer');
    assert.equal((await t.service.store.latest({ cell: CELL, scope: null })).length, 0, 'nothing written');
  });

  it('item 5: a signer that is not a key, or another listed key, is refused too; naming oneself is fine', async () => {
    const at = (i: number, signer: unknown) => ({ ...ndvi(0.5 + i / 100, { signed_at: `2026-11-2${i}T00:00:00Z` }), signer });
    const other = await t.app.inject({ method: 'POST', url: '/v1/attest', payload: mallory.batch([at(1, mallory.publicKey), at(2, alice.publicKey)], t.service.manifests) });
    assert.equal(other.statusCode, 422);
    assert.equal(other.json().details.field, 'facts[1].signer');
    const odd = await t.app.inject({ method: 'POST', url: '/v1/attest', payload: mallory.batch([at(3, 42)], t.service.manifests) });
    assert.equal(odd.json().details.field, 'facts[0].signer');
    const own = await t.app.inject({ method: 'POST', url: '/v1/attest', payload: mallory.batch([at(4, mallory.publicKey)], t.service.manifests) });
    assert.equal(own.statusCode, 200, own.body);
  });
});
