/**
 * EUDR visual evidence (docs/eudr.md, "Visual evidence") over a scripted connector: an NDVI drop
 * against 2020 (and a radar VV drop) is `visual_deforestation_suspected`, a steady NDVI is
 * `no_visual_deforestation`, no NDVI in 2020 is `indeterminate_no_baseline`; the timeline runs
 * from 2020 to the current year, each reading is a signed fact the statement's receipt binds.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cellCenter } from '../../../src/protocol/cell64.js';
import { TEMPO_UNIT_S } from '../../../src/protocol/tslot.js';
import type { MaterializeOutcome, MaterializeRequest } from '../../../src/sources/contract.js';
import { build, type TestApp } from '../../support/app.js';
import { fakeConnector } from '../../support/fake-connector.js';

const value = (v: number): MaterializeOutcome => ({ status: 'value', value: v, provenance: { source: 'fake', captured_at: '2026-01-01T00:00:00Z' }, fn: 'fake@1' });
const lngOf = (req: MaterializeRequest) => cellCenter(req.cell).lng;
const yearOf = (req: MaterializeRequest) => new Date(req.tslot * TEMPO_UNIT_S.medium * 1000).getUTCFullYear();

let t: TestApp;
before(async () => {
  const c = fakeConnector(['forest.jrc_gfc2020', 'forest.lossyear', 'indices.ndvi', 's1.vv_change_db'], {
    'forest.jrc_gfc2020': () => value(1),
    'forest.lossyear': (req) => value(lngOf(req) < 30.01 ? 22 : 0),
    // West plot: cleared (NDVI 0.82 in 2020, 0.31 after); middle: steady 0.8; east: nothing in 2020.
    'indices.ndvi': (req) => {
      const lng = lngOf(req);
      const y = yearOf(req);
      if (lng < 30.01) return value(y === 2020 ? 0.82 : 0.31);
      if (lng < 30.02) return value(0.8);
      return y === 2020 ? { status: 'absence', reason: 'outside_coverage', provenance: { source: 'fake', captured_at: '2020-07-15T00:00:00Z' }, fn: 'fake@1' } : value(0.7);
    },
    's1.vv_change_db': (req) => value(lngOf(req) < 30.01 ? -4.5 : 0.2),
  });
  (c as { history: boolean }).history = true;
  t = await build({}, {}, { materializers: [c] });
});
after(async () => t?.close());

const square = (w: number) => ({
  type: 'Polygon',
  coordinates: [
    [
      [w, -2],
      [w + 0.002, -2],
      [w + 0.002, -1.998],
      [w, -1.998],
      [w, -2],
    ],
  ],
});
const plot = (id: string, w: number) => ({ plot_id: id, geometry_geojson: square(w), country_of_production: 'COD', commodity_hs: '180100', quantity_kg: 100, request_visual_evidence: true });

describe('visual evidence', () => {
  let body: any;
  before(async () => {
    const r = await t.app.inject({ method: 'POST', url: '/v1/eudr_dds', payload: { plots: [plot('west', 30.002), plot('middle', 30.012), plot('east', 30.022)], max_cells_per_plot: 12 } });
    assert.equal(r.statusCode, 200, r.body.slice(0, 1500));
    body = r.json();
  });
  const plotOf = (id: string) => body.plots.find((p: any) => p.plot_id === id);

  it('an NDVI drop against 2020 and a VV drop: visual_deforestation_suspected, with the timeline from 2020 to this year', () => {
    const v = plotOf('west').visual_evidence;
    assert.equal(v.verdict, 'visual_deforestation_suspected', v.reason);
    const years = v.ndvi_timeline.map((y: any) => y.year);
    assert.equal(years[0], 2020);
    assert.equal(years.at(-1), new Date().getUTCFullYear());
    assert.equal(v.ndvi_timeline[0].ndvi, 0.82);
    assert.equal(v.ndvi_drop, 0.51);
    assert.equal(v.vv_change_db, -4.5);
    assert.ok(v.cells.length > 0 && v.cells.length <= 3);
    assert.match(v.scene_urls[v.cells[0]], /^\/v1\/cells\/.+\/scene\.png$/);
    assert.equal(plotOf('west').verdict, 'deforestation_detected');
  });

  it('a steady NDVI is no_visual_deforestation; no NDVI in 2020 is indeterminate_no_baseline', () => {
    assert.equal(plotOf('middle').visual_evidence.verdict, 'no_visual_deforestation', plotOf('middle').visual_evidence.reason);
    assert.equal(plotOf('east').visual_evidence.verdict, 'indeterminate_no_baseline', plotOf('east').visual_evidence.reason);
    assert.deepEqual(
      body.annex_ii.risk_assessment.map((r: any) => r.visual_verdict),
      ['visual_deforestation_suspected', 'no_visual_deforestation', 'indeterminate_no_baseline'],
    );
  });

  it('the evidence facts are bound by the receipt', () => {
    const all = new Set(body.plots.flatMap((p: any) => p.fact_cids));
    assert.deepEqual(new Set(body.receipt.fact_cids), all);
    // Baseline, loss, one NDVI per year and cell, the VV change: more facts than the two baseline bands alone.
    assert.ok(plotOf('west').fact_cids.length > 2 * plotOf('west').cells_sampled);
  });
});
