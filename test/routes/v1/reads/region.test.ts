import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../../src/protocol/index.js';
import { build, type TestApp } from '../../../support/app.js';
import { makeAttester } from '../../../support/attester.js';
import { bearerFor } from '../../../support/scopes.js';
import { attest, fails, post, vec, verifies } from './helpers.js';

let t: TestApp;
const op = makeAttester('reads-region-operator');
// Five NDVI cells spread over a ~0.04° box, one signed absence, two geotessera vectors.
const ndviCells = [0, 1, 2, 3, 4].map((i) => P.cellOf(20 + i * 0.009, 30 + i * 0.007));
const absentCell = P.cellOf(20.02, 30.03);
const vecCells = [P.cellOf(20.001, 30.001), P.cellOf(20.002, 30.002)];
let ndviCids: string[];

before(async () => {
  t = await build({ attesterKeys: [op.publicKey] });
  ndviCids = await attest(
    t,
    op,
    ndviCells.map((cell, i) => ({ kind: 'primary', cell, band: 'indices.ndvi', tslot: 680, value: (i + 1) / 10, unit: 'unitless' })),
  );
  await attest(t, op, [{ kind: 'absence', cell: absentCell, band: 'indices.ndvi', tslot: 680, value: null, absence_reason: 'outside_coverage' }]);
  await attest(
    t,
    op,
    vecCells.map((cell, i) => ({ kind: 'primary', cell, band: 'geotessera', tslot: 55, value: vec(i), unit: 'unitless' })),
  );
});
after(async () => t.close());

const bbox = [29.99, 19.99, 30.05, 20.05];

describe('POST /v1/query_region', () => {
  it('mean over a bbox counts only stored cells (found by a prefix walk), with a receipt over cells and cids', async () => {
    const size = await t.service.store.log.size();
    const r = await post(t, '/v1/query_region', { bbox, bands: ['indices.ndvi'], agg: 'mean' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const a = r.body.by_band['indices.ndvi'];
    assert.equal(a.agg, 'mean');
    assert.equal(a.value, 0.3);
    assert.equal(a.n_cells, 5);
    assert.equal(a.n_absences, 1, 'a signed absence is reported, not averaged as 0');
    assert.deepEqual([...a.fact_cids].sort(), [...ndviCids].sort());
    assert.ok(verifies(t, r.body.receipt));
    assert.equal(r.body.receipt.primitive, 'svc.query_region');
    assert.deepEqual([...r.body.receipt.cells].sort(), [...ndviCells].sort());
    assert.deepEqual(r.body.receipt.fact_cids, a.fact_cids);
    assert.equal(r.body.is_exhaustive, true);
    assert.equal(await t.service.store.log.size(), size, 'no materialization');
  });

  it("a bbox walk sees only the cells of the reader's scope: private facts are neither counted nor found", async () => {
    const privateCell = P.cellOf(20.03, 30.04);
    const before = await post(t, '/v1/query_region', { bbox, bands: ['indices.ndvi'], agg: 'mean' });
    await attest(t, op, [{ kind: 'primary', cell: privateCell, band: 'indices.ndvi', tslot: 680, value: 0.9, unit: 'unitless', scope: { user_id: 'alice' } }]);
    const pub = await post(t, '/v1/query_region', { bbox, bands: ['indices.ndvi'], agg: 'mean' });
    assert.deepEqual(pub.body.sampling, before.body.sampling, 'the public walk finds the same stored cells');
    assert.equal(pub.body.by_band['indices.ndvi'].value, 0.3);
    const own = await post(t, '/v1/query_region', { bbox, bands: ['indices.ndvi'], agg: 'mean', scope: { user_id: 'alice' } }, { authorization: await bearerFor(t, op, { user_id: 'alice' }) });
    assert.equal(own.status, 200, JSON.stringify(own.body));
    assert.deepEqual(own.body.cells_with_data, [privateCell]);
    assert.equal(own.body.by_band['indices.ndvi'].value, 0.9);
    assert.deepEqual(own.body.receipt.scope, { user_id: 'alice' });
  });

  it('median and p90; geometry cells: form; single cell64', async () => {
    const median = await post(t, '/v1/query_region', { geometry: `cells:${ndviCells.join(',')}`, bands: ['indices.ndvi'], agg: 'median' });
    assert.equal(median.body.by_band['indices.ndvi'].value, 0.3);
    const p90 = await post(t, '/v1/query_region', { geometry: `cells:${ndviCells.join(',')}`, bands: ['indices.ndvi'], agg: 'p90' });
    assert.equal(p90.body.by_band['indices.ndvi'].value, 0.46);
    const one = await post(t, '/v1/query_region', { geometry: ndviCells[1], bands: ['indices.ndvi'] });
    assert.equal(one.body.by_band['indices.ndvi'].value, 0.2);
    assert.equal(one.body.by_band['indices.ndvi'].n_cells, 1);
  });

  it('vector_centroid over geotessera (the default for a vector band)', async () => {
    const r = await post(t, '/v1/query_region', { geometry: `cells:${vecCells.join(',')}`, bands: ['geotessera'] });
    const a = r.body.by_band.geotessera;
    assert.equal(a.agg, 'vector_centroid');
    assert.equal(a.value.length, 128);
    assert.ok(Math.abs(a.value[5] - (vec(0)[5] + vec(1)[5]) / 2) < 1e-9);
    assert.ok(verifies(t, r.body.receipt));
  });

  it('no data → value null and n_cells 0 (never 0 as a value)', async () => {
    const r = await post(t, '/v1/query_region', { bbox: [100, -40, 100.01, -39.99], bands: ['indices.ndvi', 'geotessera'] });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    for (const b of ['indices.ndvi', 'geotessera']) {
      assert.equal(r.body.by_band[b].value, null);
      assert.equal(r.body.by_band[b].n_cells, 0);
    }
    assert.deepEqual(r.body.receipt.fact_cids, []);
    assert.ok(verifies(t, r.body.receipt));
  });

  it('a large bbox is sampled within max_cells', async () => {
    const r = await post(t, '/v1/query_region', { bbox: [50, 50, 52, 52], bands: ['indices.ndvi'], max_cells: 16 });
    assert.equal(r.status, 200);
    assert.ok(r.body.cells_considered <= 16);
    assert.equal(r.body.is_exhaustive, false);
  });

  it('validates: max_cells 1025, categorical mean, vector_centroid on scalar, mean on vector, bands, geometry xor bbox', async () => {
    fails(await post(t, '/v1/query_region', { bbox, bands: ['indices.ndvi'], max_cells: 1025 }), 422, 'invalid_argument', 'max_cells');
    fails(await post(t, '/v1/query_region', { bbox, bands: ['indices.ndvi'], max_cells: 0 }), 422, 'invalid_argument', 'max_cells');
    fails(await post(t, '/v1/query_region', { bbox, bands: ['landcover.esa_worldcover_2021'], agg: 'mean' }), 422, 'invalid_argument', 'agg');
    fails(await post(t, '/v1/query_region', { bbox, bands: ['indices.ndvi'], agg: 'vector_centroid' }), 422, 'invalid_argument', 'agg');
    fails(await post(t, '/v1/query_region', { bbox, bands: ['geotessera'], agg: 'mean' }), 422, 'invalid_argument', 'agg');
    fails(await post(t, '/v1/query_region', { bbox, bands: [] }), 422, 'invalid_argument', 'bands');
    fails(await post(t, '/v1/query_region', { bbox }), 422, 'invalid_argument', 'bands');
    fails(await post(t, '/v1/query_region', { bbox, geometry: ndviCells[0], bands: ['indices.ndvi'] }), 422, 'invalid_argument');
    fails(await post(t, '/v1/query_region', { bands: ['indices.ndvi'] }), 422, 'invalid_argument', 'geometry');
    fails(await post(t, '/v1/query_region', { bbox: [30, 20, 29, 21], bands: ['indices.ndvi'] }), 422, 'invalid_argument', 'bbox');
    fails(await post(t, '/v1/query_region', { geometry: 'cells:nope', bands: ['indices.ndvi'] }), 422, 'invalid_cell', 'geometry[0]');
    fails(await post(t, '/v1/query_region', { bbox, bands: ['ndvi'] }), 404, 'band_not_in_registry', 'bands[0]');
    fails(await post(t, '/v1/query_region', { bbox, bands: ['indices.ndvi'], agg: 'mode' }), 422, 'invalid_argument', 'agg');
  });
});
