import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../../src/protocol/index.js';
import { build, type TestApp } from '../../../support/app.js';
import { makeAttester } from '../../../support/attester.js';
import { fakeConnector, slow, type FakeConnector } from '../../../support/fake-connector.js';
import { attest, fails, post, verifies } from './helpers.js';

let t: TestApp;
let fake: FakeConnector;
const op = makeAttester('reads-many-operator');
const pitch = P.PITCH_LAT_DEG;

/** The box of (2k+1)×(2k+1) cells centred on the cell at (lat, lng). */
function boxAround(lat: number, lng: number, k: number) {
  const c = P.cellCenter(P.cellOf(lat, lng));
  const h = (k + 0.4) * pitch;
  const w = (k + 0.4) * P.PITCH_LNG_DEG;
  return { min_lat: c.lat - h, max_lat: c.lat + h, min_lng: c.lng - w, max_lng: c.lng + w };
}

before(async () => {
  fake = fakeConnector(['copdem30m.elevation_mean', 'soil.clay_0_30cm'], {
    'soil.clay_0_30cm': slow(2_000, { status: 'value', value: 30, provenance: { source: 'fake' }, fn: 'fake@1' }),
  });
  t = await build({ attesterKeys: [op.publicKey] }, {}, { materializers: [fake] });
});
after(async () => t.close());

describe('POST /v1/recall_many', () => {
  it('one independently verifiable receipt per cell, bands_already_attested_at_cell per cell, merged_facts flattened', async () => {
    const cells = [P.cellOf(1.001, 2), P.cellOf(1.002, 2), P.cellOf(1.003, 2)];
    const cids = await attest(
      t,
      op,
      cells.map((cell, i) => ({ kind: 'primary', cell, band: 'copdem30m.elevation_mean', tslot: 0, value: 100 + i, unit: 'm_msl' })),
    );
    const calls = fake.calls.length;
    const r = await post(t, '/v1/recall_many', { cells: [...cells, cells[0]], bands: ['copdem30m.elevation_mean'] });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.cells, cells, 'duplicates removed, order kept');
    assert.equal(fake.calls.length, calls, 'warm cells fetch nothing');
    for (const [i, cell] of cells.entries()) {
      const one = r.body.by_cell[cell];
      assert.ok(verifies(t, one.receipt));
      assert.equal(one.receipt.primitive, 'svc.recall_many');
      assert.deepEqual(one.receipt.cells, [cell]);
      assert.deepEqual(one.receipt.fact_cids, [cids[i]]);
      assert.deepEqual(one.bands_already_attested_at_cell, ['copdem30m.elevation_mean']);
      assert.equal(one.etag, undefined);
      assert.ok(verifies(t, one.facts[0].receipt));
    }
    assert.deepEqual(
      r.body.merged_facts.map((f: any) => f.fact_cid),
      cids,
    );
    assert.equal(r.body.receipt, undefined, 'no aggregate signature over merged_facts');
  });

  it('257 cells → 422 invalid_argument naming cells; 256 is accepted', async () => {
    const many = Array.from({ length: 257 }, (_, i) => P.cellOf(3 + i * 0.001, 3));
    fails(await post(t, '/v1/recall_many', { cells: many, bands: ['copdem30m.elevation_mean'] }), 422, 'invalid_argument', 'cells');
    const ok = await post(t, '/v1/recall_many', { cells: many.slice(0, 256), bands: ['s1.vv_db'] });
    assert.equal(ok.status, 200);
    assert.equal(Object.keys(ok.body.by_cell).length, 256);
  });

  it('validates every field: empty cells, a bad cell (named by index), unknown band, unknown field', async () => {
    fails(await post(t, '/v1/recall_many', { cells: [] }), 422, 'invalid_argument', 'cells');
    fails(await post(t, '/v1/recall_many', { cells: [P.cellOf(1, 1), 'defi.zb400.bafi.bab'] }), 422, 'invalid_cell', 'cells[1]');
    fails(await post(t, '/v1/recall_many', { cells: [P.cellOf(1, 1)], bands: ['ndvi'] }), 404, 'band_not_in_registry');
    fails(await post(t, '/v1/recall_many', { cells: [P.cellOf(1, 1)], nope: 1 }), 422, 'invalid_argument', 'nope');
  });
});

describe('POST /v1/recall_polygon', () => {
  it('a small box is enumerated exactly: is_exhaustive, converged, per-cell receipts', async () => {
    const box = boxAround(2, 2, 1);
    const r = await post(t, '/v1/recall_polygon', { polygon_bbox: box, bands: ['s1.vv_db'] });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.cells_sampled.length, 9);
    assert.equal(r.body.is_exhaustive, true);
    assert.equal(r.body.converged, true);
    assert.deepEqual(r.body.pending, []);
    for (const c of r.body.cells_sampled) {
      assert.ok(verifies(t, r.body.by_cell[c].receipt));
      assert.equal(r.body.by_cell[c].receipt.primitive, 'svc.recall_polygon');
    }
  });

  it('a large polygon is sampled deterministically to max_cells, all inside, not exhaustive', async () => {
    const polygon = {
      type: 'Polygon',
      coordinates: [
        [
          [10, 10],
          [10.5, 10],
          [10.5, 10.5],
          [10, 10.5],
          [10, 10],
        ],
        [
          [10.2, 10.2],
          [10.3, 10.2],
          [10.3, 10.3],
          [10.2, 10.3],
          [10.2, 10.2],
        ],
      ],
    };
    const a = await post(t, '/v1/recall_polygon', { polygon, max_cells: 20, bands: ['s1.vv_db'], budget_ms: 20_000 });
    const b = await post(t, '/v1/recall_polygon', { polygon, max_cells: 20, bands: ['s1.vv_db'], budget_ms: 20_000 });
    assert.equal(a.status, 200, JSON.stringify(a.body));
    assert.equal(a.body.cells_sampled.length, 20);
    assert.deepEqual(a.body.cells_sampled, b.body.cells_sampled);
    assert.equal(a.body.is_exhaustive, false);
    for (const c of a.body.cells_sampled) {
      const { lat, lng } = P.cellCenter(c);
      assert.ok(lat >= 10 && lat <= 10.5 && lng >= 10 && lng <= 10.5);
      assert.ok(!(lat > 10.2 && lat < 10.3 && lng > 10.2 && lng < 10.3), 'never inside the hole');
    }
  });

  it('a tiny budget_ms returns a typed partial result: pending[] and converged false', async () => {
    const box = boxAround(4, 4, 3); // 49 cells, each with a slow upstream
    const started = Date.now();
    const r = await post(t, '/v1/recall_polygon', { polygon_bbox: box, bands: ['soil.clay_0_30cm'], budget_ms: 30 });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.ok(Date.now() - started < 1_500, 'answers near the budget, not after the slow upstream');
    assert.ok(r.body.pending.length > 0);
    assert.equal(r.body.converged, false);
    assert.equal(r.body.cells.length + r.body.pending.length, r.body.cells_sampled.length);
    for (const c of r.body.pending) assert.equal(r.body.by_cell[c], undefined);
    for (const c of r.body.cells) {
      const note = r.body.by_cell[c].materialize_notes[0];
      assert.deepEqual([note.status, note.reason_class, note.absence], ['skipped', 'timeout', false]);
    }
  });

  it('cells form, ftw_fields reported honestly unavailable', async () => {
    const cells = [P.cellOf(6, 6), P.cellOf(6.001, 6)];
    const r = await post(t, '/v1/recall_polygon', { cells, bands: ['s1.vv_db'], include: ['ftw_fields'] });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.cells_sampled, cells);
    assert.equal(r.body.ftw_fields.status, 'unavailable');
    assert.match(r.body.ftw_fields.reason, /field-boundary/);
  });

  it('validates: exactly one area, polygon type, max_cells and budget ranges, ring closure', async () => {
    fails(await post(t, '/v1/recall_polygon', { bands: ['s1.vv_db'] }), 422, 'invalid_argument', 'polygon');
    fails(await post(t, '/v1/recall_polygon', { cells: [P.cellOf(1, 1)], polygon_bbox: boxAround(1, 1, 1) }), 422, 'invalid_argument');
    fails(await post(t, '/v1/recall_polygon', { polygon: { type: 'Point', coordinates: [1, 1] } }), 422, 'invalid_argument', 'polygon.type');
    fails(await post(t, '/v1/recall_polygon', { polygon_bbox: boxAround(1, 1, 1), max_cells: 257 }), 422, 'invalid_argument', 'max_cells');
    fails(await post(t, '/v1/recall_polygon', { polygon_bbox: boxAround(1, 1, 1), budget_ms: 0 }), 422, 'invalid_argument', 'budget_ms');
    fails(
      await post(t, '/v1/recall_polygon', {
        polygon: {
          type: 'Polygon',
          coordinates: [
            [
              [0, 0],
              [1, 0],
              [1, 1],
              [0, 1],
            ],
          ],
        },
      }),
      422,
      'invalid_argument',
      'polygon.coordinates[0]',
    );
    fails(await post(t, '/v1/recall_polygon', { polygon_bbox: { min_lat: 2, max_lat: 1, min_lng: 0, max_lng: 1 } }), 422, 'invalid_argument', 'polygon_bbox');
  });
});
