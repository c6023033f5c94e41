/**
 * The solvers over HTTP and MCP with scripted upstreams: a warm cell among cooler neighbours,
 * a shore whose seabed deepens westward (land east), and a monthly NDVI series. Each answer is
 * checked against the pure solvers, and its receipt against the facts it started from.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as P from '../../../src/protocol/index.js';
import { tslotOf } from '../../../src/protocol/tslot.js';
import type { MaterializeOutcome, MaterializeRequest } from '../../../src/sources/contract.js';
import { solveHeat } from '../../../src/primitives/solvers/heat.js';
import { G } from '../../../src/primitives/solvers/wave.js';
import { centreDistance } from '../../../src/primitives/solvers/run-wave.js';
import { build, type TestApp } from '../../support/app.js';
import { fakeConnector } from '../../support/fake-connector.js';
import { post, verifies } from './reads/helpers.js';

const NOW = new Date('2026-07-20T00:00:00Z');
const value = (v: number): MaterializeOutcome => ({ status: 'value', value: v, provenance: { source: 'fake' }, fn: 'fake@1' });
const absence: MaterializeOutcome = { status: 'absence', reason: 'outside_coverage', provenance: { source: 'fake' }, fn: 'fake@1', detail: 'no data' };

// Heat: a 30 °C cell among 20 °C neighbours; a second one missing its north neighbour; a third missing its centre.
const HOT = P.cellOf(12.3, 45.6);
const PATCHY = P.cellOf(12.4, 45.6);
const PATCHY_N = P.stencil(PATCHY)[1];
const HOLE = P.cellOf(12.5, 45.6);

// Waves: the shore is at COAST; one cell west is 1 m deep, two cells 2 m, and so on; east is land.
const COAST = P.cellOf(-8.2, 115.1);
const LNG_COAST = P.cellCenter(COAST).lng;
const column = (cell: string) => Math.round((P.cellCenter(cell).lng - LNG_COAST) / P.PITCH_LNG_DEG);
const near = (cell: string) => Math.abs(P.cellCenter(cell).lat + 8.2) < 0.01 && Math.abs(P.cellCenter(cell).lng - 115.1) < 0.01;

// NDVI: the 15th of April, May and June 2026; SPARSE lacks April.
const month15 = (m: number) => tslotOf(Date.UTC(2026, m, 15) / 1000, 'medium');
const NDVI_AT: Record<number, number> = { [month15(2)]: 0.1, [month15(3)]: 0.2, [month15(4)]: 0.4, [month15(5)]: 0.5 };
const GREEN = P.cellOf(30.1, 31.2);
const SPARSE = P.cellOf(30.2, 31.2);

const fake = fakeConnector(['lst.day_8day', 'gebco.elevation_m', 'copdem30m.elevation_mean', 'indices.ndvi'], {
  'lst.day_8day': (req: MaterializeRequest) => {
    if (req.cell === HOLE || req.cell === PATCHY_N) return absence;
    return value(req.cell === HOT || req.cell === PATCHY ? 30 : 20);
  },
  // Topobathymetry has no value on land here, so land elevations come from the DEM.
  'gebco.elevation_m': (req: MaterializeRequest) => (near(req.cell) && column(req.cell) <= 0 ? value(column(req.cell)) : absence),
  'copdem30m.elevation_mean': (req: MaterializeRequest) => (near(req.cell) && column(req.cell) > 0 ? value(column(req.cell)) : absence),
  'indices.ndvi': (req: MaterializeRequest) => {
    const v = NDVI_AT[req.tslot];
    if (v === undefined || (req.cell === SPARSE && req.tslot === month15(3))) return absence;
    return value(v);
  },
});
(fake as any).history = true;

let t: TestApp;
before(async () => {
  t = await build({}, {}, { materializers: [fake], now: () => NOW });
});
after(async () => t?.close());

const sorted = (xs: string[]) => [...xs].sort();
function signedOver(body: any) {
  assert.deepEqual(sorted(body.receipt.fact_cids), sorted(body.initial_fact_cids));
  assert.ok(verifies(t, body.receipt), 'the receipt verifies');
}

describe('POST /v1/heat_solve', () => {
  it('cools a warm cell toward its neighbours exactly as the FTCS recurrence says', async () => {
    const r = await post(t, '/v1/heat_solve', { cell: HOT, diffusivity_m2_per_s: 1e-4, hours_ahead: 24 });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const b = r.body;
    assert.equal(b.status, 'ok');
    assert.deepEqual(b.grid.cells, P.stencil(HOT));
    assert.deepEqual(b.grid.before, [20, 20, 20, 20, 30, 20, 20, 20, 20]);
    const { ew_m, ns_m } = P.pitchMetres(P.cellCenter(HOT).lat);
    const expected = solveHeat(b.grid.before, 1e-4, 24 * 3600, ew_m, ns_m);
    assert.ok(Math.abs(b.temperature_c - expected.grid[4]) < 1e-9);
    assert.ok(b.temperature_c < 30 && b.temperature_c > 190 / 9);
    assert.ok(b.grid.after[1] > 20, 'the north neighbour warms');
    assert.equal(b.stability.steps, expected.plan.steps);
    assert.ok(b.stability.r <= 0.2 && b.stability.r_max === 0.2);
    assert.ok(Math.abs(b.stability.dx_m - ew_m) < 1e-6 && Math.abs(b.stability.dy_m - ns_m) < 1e-6);
    assert.deepEqual(b.imputed, []);
    assert.equal(b.initial_fact_cids.length, 9);
    assert.deepEqual(b.parameters, { band: 'lst.day_8day', diffusivity_m2_per_s: 1e-4, hours_ahead: 24 });
    signedOver(b);
  });

  it('uses the defaults, imputes a missing neighbour with the mean of the present cells', async () => {
    const r = await post(t, '/v1/heat_solve', { cell: PATCHY });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.imputed, [PATCHY_N]);
    assert.ok(Math.abs(r.body.grid.before[1] - 170 / 8) < 1e-9);
    assert.deepEqual([r.body.parameters.diffusivity_m2_per_s, r.body.parameters.hours_ahead], [1e-6, 6]);
    assert.equal(r.body.initial_fact_cids.length, 9, 'the absence is cited too');
    signedOver(r.body);
  });

  it('answers insufficient_data, with no temperature, when the centre has no value', async () => {
    const r = await post(t, '/v1/heat_solve', { cell: HOLE });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.status, 'insufficient_data');
    assert.equal(r.body.temperature_c, null);
    assert.equal(r.body.grid.after, null);
    assert.match(r.body.reason, /centre/);
    signedOver(r.body);
  });

  it('refuses a diffusivity above the cap, naming the field', async () => {
    const r = await post(t, '/v1/heat_solve', { cell: HOT, diffusivity_m2_per_s: 0.01 });
    assert.equal(r.status, 422);
    assert.equal(r.body.code, 'invalid_argument');
  });
});

describe('POST /v1/wave_solve', () => {
  it('walks west into deepening water and shoals by Green’s law, breaking in the shallowest cell', async () => {
    const r = await post(t, '/v1/wave_solve', { coastal_cell: COAST, offshore_height_m: 1, period_s: 8 });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const b = r.body;
    assert.equal(b.profile.length, 8);
    assert.deepEqual(
      b.profile.map((p: any) => p.depth_m),
      [1, 2, 3, 4, 5, 6, 7, 8],
    );
    assert.deepEqual(
      b.profile.map((p: any) => column(p.cell)),
      [-1, -2, -3, -4, -5, -6, -7, -8],
    );
    for (const p of b.profile) assert.ok(Math.abs(p.celerity_m_s - Math.sqrt(G * p.depth_m)) < 1e-9);
    assert.equal(b.profile[7].height_m, 1);
    assert.ok(Math.abs(b.profile[1].height_m - 4 ** 0.25) < 1e-9);
    assert.equal(b.profile[1].breaking, false);
    assert.equal(b.profile[0].breaking, true);
    assert.ok(Math.abs(b.nearshore_height_m - 0.78) < 1e-12);
    assert.deepEqual(b.breaks_at, { cell: b.profile[0].cell, depth_m: 1, height_m: 0.78 });
    let travel = 0;
    for (let i = 0; i < 7; i++) travel += (centreDistance(b.profile[i].cell, b.profile[i + 1].cell) * (1 / Math.sqrt(G * (i + 1)) + 1 / Math.sqrt(G * (i + 2)))) / 2;
    assert.ok(Math.abs(b.travel_time_s - travel) < 1e-9);
    assert.equal(b.scheme.time_stepping, false);
    assert.deepEqual(b.coastal, { cell: COAST, elevation_m: 0, band: 'gebco.elevation_m', fact_cid: b.coastal.fact_cid });
    for (const p of b.profile) assert.ok(b.initial_fact_cids.includes(p.fact_cid));
    signedOver(b);
  });

  it('refuses a land-locked cell with the profile read and the nearest water within 3 rings', async () => {
    const inland = P.cellOf(P.cellCenter(COAST).lat, LNG_COAST + 2 * P.PITCH_LNG_DEG);
    const r = await post(t, '/v1/wave_solve', { coastal_cell: inland, offshore_height_m: 1, period_s: 8 });
    assert.equal(r.status, 422, JSON.stringify(r.body));
    assert.equal(r.body.code, 'invalid_argument');
    assert.equal(r.body.details.field, 'coastal_cell');
    assert.equal(r.body.details.profile_read.length, 8);
    assert.ok(r.body.details.profile_read.every((x: any) => x.elevation_m >= 0 && x.band === 'copdem30m.elevation_mean'));
    assert.equal(r.body.details.suggestion.ring, 3);
    assert.equal(column(r.body.details.suggestion.cell), -1);
    assert.equal(r.body.details.suggestion.elevation_m, -1);

    const far = P.cellOf(P.cellCenter(COAST).lat, LNG_COAST + 10 * P.PITCH_LNG_DEG);
    const none = await post(t, '/v1/wave_solve', { coastal_cell: far, offshore_height_m: 1, period_s: 8, n_offshore_cells: 3 });
    assert.equal(none.status, 422);
    assert.equal(none.body.details.suggestion, 'none within 3 rings');
  });

  it('refuses a period outside 2..30 s', async () => {
    const r = await post(t, '/v1/wave_solve', { coastal_cell: COAST, offshore_height_m: 1, period_s: 1 });
    assert.equal(r.status, 422);
  });
});

describe('POST /v1/jepa_predict', () => {
  it('predicts 0.6·0.5 + 0.3·0.4 + 0.1·0.2 = 0.44 for July from April, May and June', async () => {
    const r = await post(t, '/v1/jepa_predict', { cell: GREEN, lookback_months: 3 });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const b = r.body;
    assert.equal(b.status, 'ok');
    assert.deepEqual(b.prediction, { month: '2026-07', ndvi: 0.44 });
    assert.deepEqual(
      b.series.map((p: any) => [p.month, p.tslot, p.ndvi]),
      [
        ['2026-04', month15(3), 0.2],
        ['2026-05', month15(4), 0.4],
        ['2026-06', month15(5), 0.5],
      ],
    );
    assert.deepEqual(b.coefficients, { y_t: 0.6, y_t_minus_1: 0.3, y_t_minus_2: 0.1 });
    assert.deepEqual(
      b.initial_fact_cids,
      b.series.map((p: any) => p.fact_cid),
    );
    signedOver(b);
  });

  it('reads six months by default, and says insufficient_data below three values, never zero', async () => {
    const six = await post(t, '/v1/jepa_predict', { cell: GREEN });
    assert.equal(six.body.series.length, 6);
    assert.deepEqual(six.body.parameters, { band: 'indices.ndvi', forecast_horizon_months: 1, lookback_months: 6 });
    assert.equal(six.body.n_present, 4);
    const r = await post(t, '/v1/jepa_predict', { cell: SPARSE, lookback_months: 3 });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.status, 'insufficient_data');
    assert.equal(r.body.prediction, null);
    assert.equal(r.body.n_present, 2);
    assert.match(r.body.reason, /2 of 3/);
    signedOver(r.body);
  });

  it('refuses another band or horizon, naming the field', async () => {
    const band = await post(t, '/v1/jepa_predict', { cell: GREEN, band: 'indices.ndmi' });
    assert.deepEqual([band.status, band.body.code, band.body.details.field], [422, 'invalid_argument', 'band']);
    const horizon = await post(t, '/v1/jepa_predict', { cell: GREEN, forecast_horizon_months: 3 });
    assert.deepEqual([horizon.status, horizon.body.code, horizon.body.details.field], [422, 'invalid_argument', 'forecast_horizon_months']);
  });
});

describe('the solvers over MCP', () => {
  let base: string;
  before(async () => {
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });

  it('lists the three tools in /mcp/full and answers as REST does', async () => {
    const c = new Client({ name: 'svc-test', version: '0.0.1' });
    await c.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp/full`)));
    const names = (await c.listTools()).tools.map((x) => x.name);
    for (const n of ['svc_heat_solve', 'svc_wave_solve', 'svc_jepa_predict']) assert.ok(names.includes(n), n);
    const heat: any = await c.callTool({ name: 'svc_heat_solve', arguments: { cell: HOT, diffusivity_m2_per_s: 1e-4, hours_ahead: 24 } });
    assert.equal(heat.isError, undefined, JSON.stringify(heat));
    const rest = (await post(t, '/v1/heat_solve', { cell: HOT, diffusivity_m2_per_s: 1e-4, hours_ahead: 24 })).body;
    assert.equal(heat.structuredContent.temperature_c, rest.temperature_c);
    assert.ok(verifies(t, heat.structuredContent.receipt));
    const wave: any = await c.callTool({ name: 'svc_wave_solve', arguments: { coastal_cell: COAST, offshore_height_m: 1, period_s: 8, n_offshore_cells: 4 } });
    assert.equal(wave.structuredContent.profile.length, 4);
    const ndvi: any = await c.callTool({ name: 'svc_jepa_predict', arguments: { cell: GREEN, lookback_months: 3 } });
    assert.equal(ndvi.structuredContent.prediction.ndvi, 0.44);
    const refused: any = await c.callTool({ name: 'svc_jepa_predict', arguments: { cell: GREEN, forecast_horizon_months: 2 } });
    assert.deepEqual([refused.isError, refused.structuredContent.code], [true, 'invalid_argument']);
    await c.close();
  });
});
