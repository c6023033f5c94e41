import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../../src/protocol/index.js';
import { build, type TestApp } from '../../../support/app.js';
import { makeAttester } from '../../../support/attester.js';
import { attest, fails, post, vec, verifies } from './helpers.js';

let t: TestApp;
const op = makeAttester('reads-compare-operator');
const A = P.cellOf(-30, -60);
const B = P.cellOf(-30.001, -60);
const LONE = P.cellOf(-31, -61);
const bits = (seed: number) => vec(seed).map((x) => (x > 0 ? 1 : 0));

before(async () => {
  t = await build({ attesterKeys: [op.publicKey] });
  const f = (cell: string, band: string, value: unknown, tslot: number, unit = 'unitless') => ({ kind: 'primary', cell, band, tslot, value, unit });
  await attest(t, op, [
    f(A, 'indices.ndvi', 0.5, 680),
    f(B, 'indices.ndvi', 0.7, 680),
    f(A, 'indices.evi', 0.2, 680),
    f(B, 'indices.evi', 0.1, 680),
    f(A, 'geotessera', vec(1), 54),
    f(A, 'geotessera', vec(2), 55),
    f(B, 'geotessera', vec(1), 55),
    f(A, 'geotessera.bin128', bits(1), 55, 'bit'),
    f(A, 's1.vv_db', -12, 680, 'dB'),
    f(A, 'landcover.esa_worldcover_2021', 10, 0, 'class'),
    f(B, 'landcover.esa_worldcover_2021', 20, 0, 'class'),
  ]);
});
after(async () => t.close());

describe('POST /v1/compare', () => {
  it('a shared vector band: score is the cosine and deltas are absent', async () => {
    const r = await post(t, '/v1/compare', { a: A, b: B });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.score_kind, 'cosine');
    assert.ok(r.body.score > -1 && r.body.score <= 1);
    assert.equal(r.body.deltas, undefined);
    assert.ok(r.body.skipped_bands.includes('landcover.esa_worldcover_2021'));
    assert.ok(verifies(t, r.body.receipt));
    assert.deepEqual(r.body.receipt.cells, [A, B]);
    assert.equal(r.body.receipt.fact_cids.length, 2);
  });

  it('family indices: mean scalar delta (b − a) with per-band deltas', async () => {
    const r = await post(t, '/v1/compare', { a: A, b: B, family: 'indices' });
    assert.equal(r.body.score_kind, 'mean_scalar_delta');
    assert.deepEqual(r.body.deltas, { 'indices.evi': -0.1, 'indices.ndvi': 0.2 });
    assert.equal(r.body.score, 0.05);
    assert.equal(r.body.receipt.fact_cids.length, 4);
    assert.ok(verifies(t, r.body.receipt));
  });

  it('nothing shared → score null', async () => {
    const r = await post(t, '/v1/compare', { a: A, b: LONE });
    assert.equal(r.body.score, null);
    assert.deepEqual(r.body.receipt.fact_cids, []);
    assert.ok(verifies(t, r.body.receipt));
  });

  it('validates a, b, family', async () => {
    fails(await post(t, '/v1/compare', { a: A }), 422, 'invalid_argument', 'b');
    fails(await post(t, '/v1/compare', { a: A, b: 'defi.nope' }), 422, 'invalid_cell', 'b');
    fails(await post(t, '/v1/compare', { a: A, b: B, family: 'nosuchfamily' }), 422, 'invalid_argument', 'family');
  });
});

describe('POST /v1/compare_bands', () => {
  it('scalar pair: delta (b − a), percent change and a predicate verdict', async () => {
    const r = await post(t, '/v1/compare_bands', { cell: A, a: 'indices.ndvi', b: 'indices.evi', predicate: { kind: 'abs_diff_le', threshold: 0.3 } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.delta, -0.3);
    assert.equal(r.body.percent_change, -60);
    assert.equal(r.body.cosine, null);
    assert.deepEqual(r.body.predicate_verdict, { holds: true, kind: 'abs_diff_le', threshold: 0.3, decidable: true });
    assert.ok(verifies(t, r.body.receipt));
    assert.equal(r.body.receipt.primitive, 'svc.compare_bands');
    const lt = await post(t, '/v1/compare_bands', { cell64: A, a: 'indices.ndvi', b: 'indices.evi', predicate: { kind: 'abs_diff_lt', threshold: 0.3 } });
    assert.equal(lt.body.predicate_verdict.holds, false);
  });

  it('one vector band at two tslots: cosine and L2; the tslot defaults to the latest attested', async () => {
    const r = await post(t, '/v1/compare_bands', { cell: A, a: 'geotessera', b: 'geotessera', tslot_a: 54, predicate: { kind: 'cosine_ge', threshold: -1 } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.b.tslot, 55);
    assert.equal(r.body.delta, null);
    assert.ok(typeof r.body.cosine === 'number');
    assert.ok(r.body.l2 > 0);
    assert.equal(r.body.predicate_verdict.holds, true);
    assert.ok(verifies(t, r.body.receipt));
    assert.equal(r.body.receipt.fact_cids.length, 2);
  });

  it('two different vector bands → HTTP 400', async () => {
    fails(await post(t, '/v1/compare_bands', { cell: A, a: 'geotessera', b: 'geotessera.bin128' }), 400, 'invalid_argument', 'b');
  });

  it('not computable → delta null with a receipt; predicate does not hold', async () => {
    const r = await post(t, '/v1/compare_bands', { cell: A, a: 'indices.ndvi', b: 'indices.nbr', predicate: { kind: 'abs_diff_le', threshold: 1 } });
    assert.equal(r.status, 200);
    assert.equal(r.body.delta, null);
    assert.equal(r.body.predicate_verdict.holds, false);
    assert.equal(r.body.predicate_verdict.decidable, false);
    assert.ok(verifies(t, r.body.receipt));
    const cat = await post(t, '/v1/compare_bands', { cell: A, a: 'landcover.esa_worldcover_2021', b: 'landcover.esa_worldcover_2021' });
    assert.equal(cat.body.delta, null);
  });

  it('validates: same vector band at one tslot, vector vs scalar, predicate kind for the pair, cell alias', async () => {
    fails(await post(t, '/v1/compare_bands', { cell: A, a: 'geotessera', b: 'geotessera' }), 422, 'invalid_argument', 'tslot');
    fails(await post(t, '/v1/compare_bands', { cell: A, a: 'geotessera', b: 'geotessera', tslot_a: 55, tslot_b: 55 }), 422, 'invalid_argument', 'tslot_b');
    fails(await post(t, '/v1/compare_bands', { cell: A, a: 'geotessera', b: 'indices.ndvi' }), 422, 'invalid_argument', 'b');
    fails(await post(t, '/v1/compare_bands', { cell: A, a: 'indices.ndvi', b: 'indices.evi', predicate: { kind: 'cosine_ge', threshold: 0.5 } }), 422, 'invalid_argument', 'predicate.kind');
    fails(await post(t, '/v1/compare_bands', { cell: A, a: 'indices.ndvi', b: 'indices.evi', predicate: { kind: 'bigger', threshold: 0.5 } }), 422, 'invalid_argument', 'predicate');
    fails(await post(t, '/v1/compare_bands', { a: 'indices.ndvi', b: 'indices.evi' }), 422, 'invalid_argument', 'cell');
    fails(await post(t, '/v1/compare_bands', { cell: A, cell64: B, a: 'indices.ndvi', b: 'indices.evi' }), 422, 'invalid_argument', 'cell64');
  });
});
