/**
 * Polygon mode: a place with extent fans out over its sample cells. The locate primitive is
 * injected (a hand-made LocateResp), so these tests do not depend on the gazetteer.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../../src/protocol/index.js';
import type { LocateResp } from '../../../../src/geo/types.js';
import { placeShortcut } from '../../../../src/primitives/shortcuts/read.js';
import { bandStats, parseNCells, sampleCells } from '../../../../src/primitives/shortcuts/aggregate.js';
import { evenPick } from '../../../../src/primitives/reads/common.js';
import { build, type TestApp } from '../../../support/app.js';
import { fakeConnector } from '../../../support/fake-connector.js';
import { verifies } from '../reads/helpers.js';

let t: TestApp;

const LAT0 = 48.1;
const LNG0 = 11.5;
/** 20 cells on a 4×5 grid, 10 cells apart: the polygon's sample cells. */
const SAMPLE = Array.from({ length: 20 }, (_, i) => P.cellOf(LAT0 + Math.floor(i / 5) * 10 * P.PITCH_LAT_DEG, LNG0 + (i % 5) * 10 * P.PITCH_LNG_DEG));
const CENTRE = P.cellOf(LAT0 + 15 * P.PITCH_LAT_DEG, LNG0 + 20 * P.PITCH_LNG_DEG);
const index = new Map(SAMPLE.map((c, i) => [c, i]));
/** Land cover by sample index: 10 tree cover ×3 of every 5, 40 cropland ×2 of every 5. */
const classOf = (cell: string) => ((index.get(cell) ?? 0) % 5 < 3 ? 10 : 40);
/** Ozone is a signed absence on odd sample cells. */
const ozoneAbsent = (cell: string) => (index.get(cell) ?? 0) % 2 === 1;

const val = (v: number | number[]) => ({ status: 'value' as const, value: v, provenance: { source: 'fake' }, fn: 'fake@1' });

function locateResp(over: Partial<LocateResp> = {}): LocateResp {
  const c = P.cellCenter(CENTRE);
  return {
    cell64: CENTRE,
    via: 'admin2',
    label: 'Testkreis',
    lat: c.lat,
    lng: c.lng,
    localized_names: {},
    neighborhood_cells: P.neighbours(CENTRE),
    polygon_bbox: { min_lat: LAT0, min_lng: LNG0, max_lat: LAT0 + 40 * P.PITCH_LAT_DEG, max_lng: LNG0 + 50 * P.PITCH_LNG_DEG, source: 'admin2_table' },
    polygon_sample_cells: SAMPLE,
    data_at_this_cell: {},
    selected: { label: 'Testkreis', kind: 'admin2', is_high_confidence: true, reason: 'exact admin2 name', score: 0.97 },
    alternatives: [],
    ...over,
  };
}

const locate = (resp: LocateResp) => async () => resp;

before(async () => {
  const fake = fakeConnector(['indices.ndvi', 'landcover.esa_worldcover_2021', 'forest.treecover2000', 'forest.gain', 'air.pm2_5', 'air.ozone', 'copdem30m.elevation_mean', 'weather.temperature_2m'], {
    'indices.ndvi': (req) => val(Number((0.1 + (index.get(req.cell) ?? 0) * 0.03).toFixed(4))),
    'landcover.esa_worldcover_2021': (req) => val(classOf(req.cell)),
    'forest.treecover2000': (req) => val((index.get(req.cell) ?? 0) * 5),
    'forest.gain': () => val(0),
    'air.ozone': (req) => (ozoneAbsent(req.cell) ? { status: 'absence', reason: 'unavailable_capability', provenance: { source: 'fake' }, fn: 'fake@1' } : val(60 + (index.get(req.cell) ?? 0))),
    'air.pm2_5': () => val(12.5),
  });
  t = await build({}, {}, { materializers: [fake] });
});
after(async () => t.close());

describe('polygon mode (locate returns an extent)', () => {
  it('/v1/ndvi samples 16 cells evenly; stats, polygon block and one receipt over every cell and fact', async () => {
    const r = await placeShortcut(t.service, 'ndvi', { place: 'Testkreis' }, { locate: locate(locateResp()) });
    const expected = evenPick(SAMPLE, 16);
    assert.equal(r.mode, 'sampled');
    assert.deepEqual(r.polygon?.cells_sampled, expected);
    assert.equal(r.polygon?.n_cells, 16);
    assert.equal(r.polygon?.source, 'admin2_table');
    assert.deepEqual(r.receipt.cells, expected, 'the receipt signs every sampled cell');
    assert.deepEqual(
      r.receipt.fact_cids,
      r.facts.map((f) => f.fact_cid),
      'and every fact used',
    );
    assert.equal(r.receipt.primitive, 'svc.ndvi');
    assert.ok(verifies(t, r.receipt));
    assert.equal(r.facts.length, 16);
    const values = r.facts.map((f) => f.value as number).sort((a, b) => a - b);
    const s = r.stats!['indices.ndvi'];
    assert.equal(s.kind, 'numeric');
    if (s.kind !== 'numeric') return;
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    assert.equal(s.n, 16);
    assert.equal(s.n_absent, 0);
    assert.ok(Math.abs(s.mean! - mean) < 1e-9);
    assert.equal(s.min, values[0]);
    assert.equal(s.max, values[15]);
    assert.ok(Math.abs(s.median! - (values[7] + values[8]) / 2) < 1e-9);
    assert.ok(Math.abs(s.std! - Math.sqrt(values.reduce((a, x) => a + (x - mean) ** 2, 0) / 16)) < 1e-9);
    assert.equal(r.place.via, 'admin2');
    assert.equal(r.place.query, 'Testkreis');
  });

  it('n_cells 4 is honoured; n_cells 1 forces a point read at the centroid', async () => {
    const four = await placeShortcut(t.service, 'ndvi', { place: 'Testkreis', n_cells: 4 }, { locate: locate(locateResp()) });
    assert.deepEqual(four.receipt.cells, evenPick(SAMPLE, 4));
    assert.equal(four.stats!['indices.ndvi'].n, 4);
    const one = await placeShortcut(t.service, 'ndvi', { place: 'Testkreis', n_cells: 1 }, { locate: locate(locateResp()) });
    assert.equal(one.mode, 'point');
    assert.deepEqual(one.receipt.cells, [CENTRE]);
    assert.equal(one.facts.length, 1);
    assert.ok(one.caveats.some((c) => /reads only its centre cell/.test(c)));
  });

  it('/v1/at defaults to 1 cell on a place with extent; n_cells 3 samples', async () => {
    const r = await placeShortcut(t.service, 'at', { place: 'Testkreis', bands: 'indices.ndvi' }, { locate: locate(locateResp()) });
    assert.equal(r.mode, 'point');
    assert.deepEqual(r.receipt.cells, [CENTRE]);
    const s = await placeShortcut(t.service, 'at', { place: 'Testkreis', bands: ['indices.ndvi'], n_cells: 3 }, { locate: locate(locateResp()) });
    assert.equal(s.mode, 'sampled');
    assert.equal(s.receipt.cells.length, 3);
  });

  it('categorical bands: mode, mode_label and class distribution', async () => {
    const r = await placeShortcut(t.service, 'forest', { place: 'Testkreis', n_cells: 10 }, { locate: locate(locateResp()) });
    const cells = evenPick(SAMPLE, 10);
    const lc = r.stats!['landcover.esa_worldcover_2021'];
    assert.equal(lc.kind, 'categorical');
    if (lc.kind !== 'categorical') return;
    const trees = cells.filter((c) => classOf(c) === 10).length;
    const crops = cells.filter((c) => classOf(c) === 40).length;
    assert.equal(lc.n, 10);
    assert.deepEqual(Object.keys(lc.distribution), [...(trees ? ['10'] : []), ...(crops ? ['40'] : [])]);
    assert.equal(lc.distribution['10'].count, trees);
    assert.equal(lc.distribution['10'].label, 'Tree cover');
    assert.equal(lc.distribution['10'].fraction, trees / 10);
    assert.equal(lc.distribution['40'].label, 'Cropland');
    assert.equal(lc.mode, trees >= crops ? 10 : 40);
    assert.equal(lc.mode_label, trees >= crops ? 'Tree cover' : 'Cropland');
    const gain = r.stats!['forest.gain'];
    assert.equal(gain.kind, 'categorical');
    if (gain.kind === 'categorical') assert.deepEqual(gain.distribution, { 0: { count: 10, fraction: 1, label: 'No gain' } });
    assert.equal(r.stats!['forest.treecover2000'].kind, 'numeric');
    // forest.lossyear has no connector here: no values → null stats with a reason, never 0.
    const loss = r.stats!['forest.lossyear'];
    assert.equal(loss.n, 0);
    assert.equal(loss.n_missing, 10);
    if (loss.kind === 'numeric') assert.equal(loss.mean, null);
    assert.match(loss.reason!, /no values/);
    assert.ok(r.materialize_notes.some((n) => n.band === 'forest.lossyear' && n.reason_class === 'no_materializer'));
  });

  it('absences are counted apart and never averaged in; a band without values is null, not 0', async () => {
    const r = await placeShortcut(t.service, 'air', { place: 'Testkreis', n_cells: 8 }, { locate: locate(locateResp()) });
    const cells = evenPick(SAMPLE, 8);
    const present = cells.filter((c) => !ozoneAbsent(c)).map((c) => 60 + index.get(c)!);
    const oz = r.stats!['air.ozone'];
    assert.equal(oz.kind, 'numeric');
    if (oz.kind !== 'numeric') return;
    assert.equal(oz.n, present.length);
    assert.equal(oz.n_absent, cells.length - present.length);
    assert.ok(oz.n_absent > 0 && oz.n > 0);
    assert.ok(Math.abs(oz.mean! - present.reduce((a, b) => a + b, 0) / present.length) < 1e-9);
    assert.equal(oz.min, Math.min(...present));
    const no2 = r.stats!['air.nitrogen_dioxide'];
    assert.equal(no2.n, 0);
    if (no2.kind === 'numeric') {
      assert.equal(no2.mean, null);
      assert.equal(no2.std, null);
    }
    assert.ok(no2.reason);
    // The absences are signed and in the receipt: they are evidence too.
    const absentCids = r.facts.filter((f) => f.kind === 'absence').map((f) => f.fact_cid);
    assert.equal(absentCids.length, oz.n_absent);
    for (const c of absentCids) assert.ok(r.receipt.fact_cids.includes(c));
  });

  it('a low-confidence geocode adds the wrong-cell caveat', async () => {
    const loc = locateResp({ selected: { label: 'Testkreis?', kind: 'admin2', is_high_confidence: false, reason: 'fuzzy match', score: 0.4 } });
    const r = await placeShortcut(t.service, 'ndvi', { place: 'Tstkreis', n_cells: 2 }, { locate: locate(loc) });
    assert.equal(r.place.is_high_confidence, false);
    assert.equal(r.place.selected.is_high_confidence, false);
    assert.ok(r.caveats.some((c) => /low confidence/.test(c) && /valid signature for the wrong cell/.test(c)));
  });

  it('a centre_cell_bbox is not an extent: point read', async () => {
    const loc = locateResp({ polygon_bbox: { ...P.cellBbox(CENTRE), source: 'centre_cell_bbox' }, polygon_sample_cells: [CENTRE] });
    const r = await placeShortcut(t.service, 'ndvi', { place: 'Somewhere' }, { locate: locate(loc) });
    assert.equal(r.mode, 'point');
    assert.equal(r.polygon, undefined);
    assert.equal(r.stats, undefined);
  });
});

describe('aggregation units', () => {
  it('parseNCells: 1..64 integers only; query digits accepted on GET', () => {
    assert.equal(parseNCells(undefined), undefined);
    assert.equal(parseNCells(1), 1);
    assert.equal(parseNCells(64), 64);
    assert.equal(parseNCells('7', true), 7);
    for (const bad of [0, 65, 'x', 2.5, '7', [], {}])
      assert.throws(
        () => parseNCells(bad),
        (e: any) => e.code === 'invalid_argument' && e.httpStatus === 400,
      );
  });

  it('sampleCells: default count, fewer available, point fallback', () => {
    const loc = locateResp({ polygon_sample_cells: SAMPLE.slice(0, 5) });
    assert.deepEqual(sampleCells(loc, undefined, 16).cells, SAMPLE.slice(0, 5));
    assert.equal(sampleCells(loc, 1, 16).mode, 'point');
    assert.deepEqual(sampleCells(locateResp({ polygon_bbox: undefined }), 8, 16).cells, [CENTRE]);
  });

  it('bandStats: numeric with absences, categorical ties, vector, empty', () => {
    const num = bandStats('x', { value_kind: 'scalar', unit: 'm' } as any, [
      { cell: 'a', kind: 'primary', value: 1 },
      { cell: 'b', kind: 'absence', value: null },
      { cell: 'c', kind: 'primary', value: 3 },
      undefined,
    ]);
    assert.deepEqual({ ...num }, { band: 'x', unit: 'm', n: 2, n_absent: 1, n_missing: 1, kind: 'numeric', mean: 2, median: 2, min: 1, max: 3, std: 1 });
    const cat = bandStats('lc', { value_kind: 'categorical', unit: 'class', classes: { 10: 'Tree cover', 40: 'Cropland' } } as any, [
      { cell: 'a', kind: 'primary', value: 40 },
      { cell: 'b', kind: 'primary', value: 10 },
    ]);
    assert.equal(cat.kind === 'categorical' && cat.mode, 10, 'ties go to the lowest class id');
    const empty = bandStats('y', undefined, [{ cell: 'a', kind: 'absence', value: null }]);
    assert.equal(empty.n, 0);
    assert.equal(empty.kind === 'numeric' && empty.mean, null);
    assert.match(empty.reason!, /1 signed absence/);
    const vec = bandStats('v', { value_kind: 'vector', unit: 'unitless' } as any, [{ cell: 'a', kind: 'primary', value: [1, 2] }]);
    assert.equal(vec.kind, 'vector');
    assert.equal(vec.n, 1);
  });
});
