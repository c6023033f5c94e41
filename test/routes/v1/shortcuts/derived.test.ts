import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../../src/protocol/index.js';
import { dnbrClass } from '../../../../src/primitives/shortcuts/change.js';
import { recentAnomaly, spiClass } from '../../../../src/primitives/shortcuts/drought.js';
import { riceCh4 } from '../../../../src/primitives/shortcuts/rice.js';
import { build, type TestApp } from '../../../support/app.js';
import { makeAttester } from '../../../support/attester.js';
import { fakeConnector } from '../../../support/fake-connector.js';
import { attest, fails, post, verifies, vec } from '../reads/helpers.js';

let t: TestApp;
const op = makeAttester('shortcuts-derived');

const SPI_CELL = { lat: 7.11111, lng: 8.22222 };
const vecA = vec(1);
const vecB = vec(2);
const med = P.currentTslot('medium');

before(async () => {
  const spiCell = P.cellOf(SPI_CELL.lat, SPI_CELL.lng);
  const fake = fakeConnector(['precip.spi_3m', 'landcover.esa_worldcover_2021', 'geotessera'], {
    // The SPI connector only knows one cell; elsewhere it fails upstream (nothing is signed).
    'precip.spi_3m': (req) => (req.cell === spiCell ? { status: 'value', value: -1.62, provenance: { source: 'fake' }, fn: 'fake@1' } : { status: 'error', reason: 'upstream down' }),
    'landcover.esa_worldcover_2021': () => ({ status: 'value', value: 40, provenance: { source: 'fake' }, fn: 'fake@1' }),
    // One embedding per yearly slot: the two years differ.
    geotessera: (req) => ({ status: 'value', value: req.tslot % 2 === 0 ? vecA : vecB, provenance: { source: 'fake' }, fn: 'fake@1', tslot: req.tslot }),
  });
  t = await build({ attesterKeys: [op.publicKey] }, {}, { materializers: [fake] });
});
after(async () => t.close());

function signed(body: any): void {
  assert.ok(verifies(t, body.receipt), 'receipt verifies offline');
  const cids = [...body.facts.map((f: any) => f.fact_cid), ...(body.series_inputs ?? []).map((s: any) => s.fact_cid)];
  assert.deepEqual(body.receipt.fact_cids, cids, 'receipt covers exactly the facts used');
}

describe('POST /v1/spi', () => {
  it('uses the signed precip.spi_3m when available (McKee classes)', async () => {
    const r = await post(t, '/v1/spi', SPI_CELL);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.status, 'ok');
    assert.equal(r.body.source, 'precip.spi_3m');
    assert.equal(r.body.spi, -1.62);
    assert.equal(r.body.spi_class, 'severely_dry');
    assert.equal(r.body.drought, true);
    assert.equal(r.body.receipt.primitive, 'svc.spi');
    signed(r.body);
  });

  it('too little stored CHIRPS history → inconclusive with the observed count', async () => {
    const at = { lat: 3.33333, lng: 4.44444 };
    const cell = P.cellOf(at.lat, at.lng);
    const day = P.currentTslot('fast') - 10;
    await attest(
      t,
      op,
      Array.from({ length: 5 }, (_, i) => ({ kind: 'primary', cell, band: 'precip.chirps_daily_mm', tslot: day - i, value: 2 + i, unit: 'mm' })),
    );
    const r = await post(t, '/v1/spi', at);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.status, 'inconclusive');
    assert.equal(r.body.observed_values, 5);
    assert.equal(r.body.spi, null);
    assert.match(r.body.reason, /only 5 stored/);
    assert.ok(r.body.materialize_notes.some((n: any) => n.band === 'precip.spi_3m' && n.status === 'skipped'));
    assert.match(r.body.method, /Not a gamma-fitted SPI/);
    signed(r.body);
  });

  it('with enough history, a stated z-score of the recent 30 days against the earlier days', async () => {
    const at = { lat: 3.55555, lng: 4.66666 };
    const cell = P.cellOf(at.lat, at.lng);
    const last = P.currentTslot('fast') - 1;
    // 40 earlier days alternating 2 and 6 mm (mean 4, sd ≈ 2.03), then 30 dry days of 1 mm.
    const facts = Array.from({ length: 70 }, (_, i) => {
      const tslot = last - 69 + i;
      return { kind: 'primary', cell, band: 'precip.chirps_daily_mm', tslot, value: i < 40 ? (i % 2 === 0 ? 2 : 6) : 1, unit: 'mm' };
    });
    await attest(t, op, facts);
    const r = await post(t, '/v1/spi', at);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.status, 'ok');
    assert.equal(r.body.source, 'chirps_daily_anomaly');
    const a = r.body.anomaly;
    assert.equal(a.n_recent, 30);
    assert.equal(a.n_baseline, 40);
    const sd = Math.sqrt((40 * 4) / 39);
    assert.ok(Math.abs(a.z - (1 - 4) / (sd / Math.sqrt(30))) < 1e-6);
    assert.equal(a.signal, 'drier_than_baseline');
    assert.equal(r.body.series_inputs.length, 70);
    signed(r.body);
  });

  it('units: classes and the anomaly guard', () => {
    assert.equal(spiClass(2.1), 'extremely_wet');
    assert.equal(spiClass(0), 'near_normal');
    assert.equal(spiClass(-1), 'moderately_dry');
    assert.equal(spiClass(-2), 'extremely_dry');
    const r = recentAnomaly(Array.from({ length: 30 }, (_, i) => ({ tslot: i, value: i })));
    assert.equal(r.status, 'inconclusive', 'all values inside the window: no baseline');
  });
});

describe('POST /v1/burn_severity', () => {
  const at = { lat: 36.12345, lng: -118.54321 };
  it('dNBR = NBR_pre − NBR_post from two stored NBR facts, classed per USGS', async () => {
    const cell = P.cellOf(at.lat, at.lng);
    const cids = await attest(t, op, [
      { kind: 'primary', cell, band: 'indices.nbr', tslot: med - 8, value: 0.62, unit: 'unitless' },
      { kind: 'primary', cell, band: 'indices.nbr', tslot: med - 2, value: 0.08, unit: 'unitless' },
    ]);
    const r = await post(t, '/v1/burn_severity', at);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.status, 'ok');
    assert.equal(r.body.source, 'indices.nbr');
    assert.ok(Math.abs(r.body.dnbr - 0.54) < 1e-9);
    assert.equal(r.body.severity, 'moderate_high');
    assert.equal(r.body.pre.tslot, med - 8);
    assert.equal(r.body.post.tslot, med - 2);
    assert.ok(cids.every((c) => r.body.receipt.fact_cids.includes(c)));
    signed(r.body);
    const g = await post(t, '/v1/burn_severity', { ...at, tslot_pre: med - 8, tslot_post: med - 2 });
    assert.equal(g.status, 200, JSON.stringify(g.body));
    assert.equal(g.body.severity, 'moderate_high');
    assert.deepEqual(
      g.body.facts.map((f: any) => f.fact_cid),
      cids,
    );
    signed(g.body);
  });

  it('no NBR history → inconclusive; bad tslot pairs are refused', async () => {
    const r = await post(t, '/v1/burn_severity', { lat: 1.11111, lng: 1.22222 });
    assert.equal(r.body.status, 'inconclusive');
    assert.equal(r.body.dnbr, null);
    fails(await post(t, '/v1/burn_severity', { ...at, tslot_pre: med - 1 }), 422, 'invalid_argument', 'tslot_post');
    fails(await post(t, '/v1/burn_severity', { ...at, tslot_pre: med - 1, tslot_post: med - 3 }), 422, 'invalid_argument', 'tslot_pre');
  });

  it('class boundaries', () => {
    assert.deepEqual([0.05, 0.1, 0.269, 0.27, 0.44, 0.66, 0.661, -0.3].map(dnbrClass), ['unburned', 'low', 'low', 'moderate_low', 'moderate_high', 'moderate_high', 'high', 'unburned']);
  });
});

describe('POST /v1/deforestation_alert', () => {
  const at = { lat: -3.98765, lng: -62.12345 };
  // 14 medium slots (420 days) apart, so the two NDVI slots fall in different yearly embedding slots.
  const ta = med - 16;
  const tb = med - 2;
  it('NDVI drop ≥ 0.15 raises the alert; embedding change from the two years', async () => {
    const cell = P.cellOf(at.lat, at.lng);
    await attest(t, op, [
      { kind: 'primary', cell, band: 'indices.ndvi', tslot: ta, value: 0.82, unit: 'unitless' },
      { kind: 'primary', cell, band: 'indices.ndvi', tslot: tb, value: 0.41, unit: 'unitless' },
    ]);
    const r = await post(t, '/v1/deforestation_alert', at);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.status, 'ok');
    assert.ok(Math.abs(r.body.ndvi_drop - 0.41) < 1e-9);
    assert.equal(r.body.alert, true);
    assert.equal(r.body.threshold, 0.15);
    const e = r.body.embedding;
    assert.equal(e.status, 'ok', JSON.stringify(e));
    assert.notEqual(e.slot_a, e.slot_b);
    const [va, vb] = e.slot_a % 2 === 0 ? [vecA, vecB] : [vecB, vecA];
    const dot = va.reduce((s, x, i) => s + x * vb[i], 0);
    const cos = dot / Math.sqrt(va.reduce((s, x) => s + x * x, 0) * vb.reduce((s, x) => s + x * x, 0));
    assert.ok(Math.abs(e.cosine - cos) < 1e-8);
    assert.ok(Math.abs(e.change - (1 - cos)) < 1e-8);
    signed(r.body);
    const strict = await post(t, '/v1/deforestation_alert', { ...at, threshold: 0.5, tslot_a: ta, tslot_b: tb });
    assert.equal(strict.body.alert, false);
    signed(strict.body);
  });

  it('threshold outside (0, 2] is refused', async () => {
    fails(await post(t, '/v1/deforestation_alert', { ...at, threshold: 0 }), 422, 'invalid_argument', 'threshold');
  });
});

describe('POST /v1/sar_forest_disturbance', () => {
  it('VV drop of 3 dB or more flags a disturbance', async () => {
    const at = { lat: 0.55555, lng: 25.44444 };
    const cell = P.cellOf(at.lat, at.lng);
    await attest(t, op, [
      { kind: 'primary', cell, band: 's1.vv_db', tslot: med - 5, value: -6.5, unit: 'dB' },
      { kind: 'primary', cell, band: 's1.vv_db', tslot: med - 1, value: -10.1, unit: 'dB' },
    ]);
    const r = await post(t, '/v1/sar_forest_disturbance', at);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.ok(Math.abs(r.body.vv_drop_db - 3.6) < 1e-9);
    assert.equal(r.body.disturbance, true);
    assert.equal(r.body.threshold_db, 3);
    signed(r.body);
    const hi = await post(t, '/v1/sar_forest_disturbance', { ...at, threshold_db: 4 });
    assert.equal(hi.body.disturbance, false);
  });
});

describe('POST /v1/rice_ch4', () => {
  // Hand computation (IPCC 2019 Eq. 5.1-5.3, Tables 5.11-5.14):
  // SF_o = (1 + 6 t/ha × CFOA 1.00)^0.59 = 7^0.59 ≈ 3.152157
  // EF = 1.19 × 0.71 (single drainage) × 0.89 (non-flooded > 180 d) × 3.152157 ≈ 2.370299 kg CH4/ha/d
  // CH4 = 2.370299 × 120 d × 100 ha ≈ 28 443.59 kg = 0.02844359 Gg
  const body = { area_ha: 100, cultivation_days: 120, water_regime: 'single_drainage', pre_season_water_regime: 'non_flooded_gt_180d', organic_amendment: { type: 'straw_short', rate_t_ha: 6 } };

  it('matches the hand-computed example; default EF_c stated; landcover read and signed', async () => {
    const at = { lat: 14.12345, lng: 100.54321 };
    const r = await post(t, '/v1/rice_ch4', { ...body, ...at });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.kind, 'calculation');
    assert.ok(Math.abs(r.body.result.sf_o - 3.152157) < 1e-6);
    assert.ok(Math.abs(r.body.result.ef_kg_ch4_ha_d - 2.370299) < 1e-6);
    assert.ok(Math.abs(r.body.result.kg_ch4 - 28443.59) < 0.01);
    assert.ok(Math.abs(r.body.result.gg_ch4 - 0.02844359) < 1e-8);
    assert.deepEqual(
      r.body.defaults_used.map((d: any) => d.parameter),
      ['ef_c'],
    );
    assert.match(r.body.defaults_used[0].source, /Table 5\.11/);
    assert.equal(r.body.landcover.is_cropland, true);
    assert.equal(r.body.landcover.label, 'Cropland');
    assert.deepEqual(r.body.receipt.cells, [P.cellOf(at.lat, at.lng)]);
    assert.deepEqual(r.body.receipt.fact_cids, [r.body.landcover.fact_cid]);
    assert.ok(r.body.caveats.some((c: string) => /not an observation/.test(c)));
    signed(r.body);
  });

  it('without a location: every default listed, receipt over no facts', async () => {
    const r = await post(t, '/v1/rice_ch4', { area_ha: 1, cultivation_days: 100 });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.defaults_used.map((d: any) => d.parameter).sort(), ['ef_c', 'organic_amendment', 'pre_season_water_regime', 'water_regime']);
    assert.ok(Math.abs(r.body.result.kg_ch4 - 119) < 1e-9, '1.19 × 100 d × 1 ha');
    assert.equal(r.body.landcover, null);
    assert.deepEqual(r.body.receipt.cells, []);
    assert.deepEqual(r.body.receipt.fact_cids, []);
    assert.ok(verifies(t, r.body.receipt));
  });

  it('validates inputs', async () => {
    fails(await post(t, '/v1/rice_ch4', { cultivation_days: 100 }), 422, 'invalid_argument', 'area_ha');
    fails(await post(t, '/v1/rice_ch4', { area_ha: 1, cultivation_days: 100, water_regime: 'wet' }), 422, 'invalid_argument', 'water_regime');
    fails(await post(t, '/v1/rice_ch4', { area_ha: 1, cultivation_days: 100, organic_amendment: { type: 'straw_short' } }), 422, 'invalid_argument', 'organic_amendment');
  });

  it('pure Eq. 5.1: several amendments add inside SF_o', () => {
    const r = riceCh4({
      area_ha: 2,
      days: 10,
      ef_c: 1,
      sf_w: 1,
      sf_p: 1,
      amendments: [
        { rate_t_ha: 1, cfoa: 1 },
        { rate_t_ha: 10, cfoa: 0.2 },
      ],
    });
    assert.ok(Math.abs(r.sf_o - 4 ** 0.59) < 1e-9);
    assert.ok(Math.abs(r.kg_ch4 - 20 * 4 ** 0.59) < 1e-9);
  });
});
