/** Answer parts (spec 4.5): numbers and units for people, algorithm outputs from facts, templates. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadRegistry } from '../../../src/registry/registry.js';
import { algorithmForQuestion } from '../../../src/primitives/ask/evaluate.js';
import { formatNumber, formatValue, observedOn } from '../../../src/primitives/ask/format.js';
import { factClause, missingClause } from '../../../src/primitives/ask/templates.js';
import type { ServedFact } from '../../../src/primitives/facts/facts-view.js';

const reg = loadRegistry();
let n = 0;
/** A served-fact shape (the receipt is not read by these functions). */
function fact(band: string, value: unknown, extra: Record<string, unknown> = {}): ServedFact {
  n++;
  return {
    kind: 'primary',
    cell: 'defi.zb608.zb120.zdc13',
    band,
    tslot: 0,
    value,
    unit: reg.bands.get(band)!.unit,
    provenance: 'open_meteo',
    fact_cid: `cid${n}`,
    receipt: {} as never,
    ...extra,
  } as ServedFact;
}

describe('format', () => {
  it('rounds for reading and spells units', () => {
    assert.equal(formatNumber(0.61834, 'unitless'), '0.62');
    assert.equal(formatNumber(1234.56, 'm_msl'), '1235');
    assert.equal(formatValue(12.345, 'degC'), '12.3 degrees Celsius');
    assert.equal(formatValue(6.42, 'pH'), 'pH 6.4');
    assert.equal(formatValue(18.04, 'ug_m3'), '18 micrograms per cubic metre');
  });
  it('dates a reading by its capture time, else by its tslot', () => {
    const band = reg.bands.get('indices.ndvi')!;
    assert.equal(observedOn(fact('indices.ndvi', 0.5, { derivation: { captured_at: '2026-11-20T10:11:12Z' } }), band), 'observed 2026-11-20');
    assert.equal(observedOn(fact('indices.ndvi', 0.5, { tslot: 680 }), band), 'for the slot 2025-11-08 to 2025-12-07');
    assert.equal(observedOn(fact('copdem30m.elevation_mean', 12), reg.bands.get('copdem30m.elevation_mean')), 'static layer');
  });
});

describe('algorithmForQuestion', () => {
  const alg = (k: string) => reg.algorithms.get(k)!;
  it('applies the WHO guideline ratios to the pollutants present', () => {
    const a = algorithmForQuestion(alg('who_aqg_exceedance@1'), [fact('air.pm2_5', 30), fact('air.ozone', 50)], true);
    assert.deepEqual(a.output?.value, { pm2_5: 2, ozone: 0.5 });
    assert.match(a.output!.verdict, /pm2_5 exceeds/);
    assert.equal(a.output!.fact_cids.length, 2);
  });
  it('computes flood extent and dew point from their formulas', () => {
    const f = algorithmForQuestion(alg('flood_extent_sar_threshold@1'), [fact('s1.vv_db', -18), fact('water.gsw_occurrence', 10)], true);
    assert.equal(f.output?.value, true);
    const permanent = algorithmForQuestion(alg('flood_extent_sar_threshold@1'), [fact('s1.vv_db', -18), fact('water.gsw_occurrence', 80)], true);
    assert.equal(permanent.output?.value, false);
    const d = algorithmForQuestion(alg('dew_point_magnus@1'), [fact('weather.temperature_2m', 20), fact('weather.relative_humidity_2m', 50)], true);
    assert.equal(d.output?.value, 9.3);
  });
  it('names missing inputs instead of computing without them', () => {
    const a = algorithmForQuestion(alg('flood_extent_sar_threshold@1'), [fact('s1.vv_db', -18)], true);
    assert.equal(a.output, undefined);
    assert.deepEqual(a.missing_bands, ['water.gsw_occurrence']);
  });
  it('never reads an absence as a value', () => {
    const a = algorithmForQuestion(alg('ndvi@1'), [fact('indices.ndvi', null, { kind: 'absence', absence_reason: 'outside_coverage' })], true);
    assert.deepEqual(a.missing_bands, ['indices.ndvi']);
  });
  it('says what an area or neighbourhood algorithm needs and which call computes it', () => {
    const a = algorithmForQuestion(alg('terrain_slope_3x3@1'), [fact('copdem30m.elevation_mean', 100)], true);
    assert.equal(a.computed_by, '/v1/terrain');
    assert.match(a.needs!, /neighbourhood/);
  });
});

describe('templates', () => {
  it('a fact clause carries value, unit in words, meaning, date and source', () => {
    const c = factClause(reg, fact('indices.ndvi', 0.72, { derivation: { captured_at: '2026-11-20T00:00:00Z' }, provenance: 'earth_search_s2' }));
    assert.match(c, /^NDVI 0\.72 \(dense, healthy vegetation\), observed 2026-11-20, source /);
  });
  it('a class is named by its label, an absence by its reason', () => {
    assert.match(factClause(reg, fact('landcover.esa_worldcover_2021', 50)), /Built-up \(class 50\)/);
    assert.match(factClause(reg, fact('indices.ndvi', null, { kind: 'absence', absence_reason: 'outside_coverage' })), /no data here \(signed absence: outside coverage\)/);
  });
  it('says plainly why bands are missing', () => {
    const s = missingClause(
      reg,
      ['indices.ndvi', 'air.ozone'],
      [{ band: 'indices.ndvi', cell: 'c', status: 'skipped', ok: false, fact_cid: null, latency_ms: 1, reason: 'x', reason_class: 'timeout', retryable: true, absence: false }],
    );
    assert.match(s!, /NDVI: the upstream did not answer in time; retryable/);
    assert.match(s!, /Ozone: not stored for this cell/);
  });
});
