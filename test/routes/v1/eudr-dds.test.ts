/**
 * POST /v1/eudr_dds over fixture rasters where the truth is known (test/support/eudr-fixture.ts):
 * each plot gets the right verdict with the numbers that decided it, the 0.5 ha unit applies to
 * the forest area estimated from the samples and the geodesic area, a plot across two Hansen tiles
 * reads both, bad plots are refused naming the plot before anything is read, the receipt binds
 * every fact read and verifies offline, the statement is kept and its report served, and the
 * background job reports progress and the finished statement. Also over MCP.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { jobState } from '../../../src/primitives/eudr/jobs.js';
import { verifyResponse } from '../../../src/protocol/verify-response.js';
import { build, type TestApp } from '../../support/app.js';
import { boxPolygon, eudrFiles, PLOTS } from '../../support/eudr-fixture.js';
import { startRasterUpstreams, type RasterUpstreams } from '../../sources/fixtures/raster-upstreams.js';

let up: RasterUpstreams;
let t: TestApp;
before(async () => {
  up = await startRasterUpstreams([]);
  for (const [p, b] of eudrFiles()) up.files.set(p, b);
  t = await build({ upstreams: up.upstreams, materializerTimeoutSecs: 10 });
});
after(async () => {
  await t?.close();
  await up?.close();
});

const plot = (plot_id: string, box: keyof typeof PLOTS, extra: Record<string, unknown> = {}) => ({
  plot_id,
  geometry_geojson: boxPolygon(PLOTS[box]),
  country_of_production: 'DEU',
  commodity_hs: '440399',
  quantity_kg: 12_000,
  ...extra,
});
const post = async (url: string, payload: unknown) => {
  const r = await t.app.inject({ method: 'POST', url, payload: payload as object });
  return { status: r.statusCode, body: r.json() };
};
const byId = (body: any) => new Map<string, any>(body.plots.map((p: any) => [p.plot_id, p]));

describe('POST /v1/eudr_dds over known-truth rasters', () => {
  let body: any;
  before(async () => {
    const r = await post('/v1/eudr_dds', {
      plots: [plot('A-cleared', 'cleared'), plot('B-untouched', 'untouched'), plot('C-field', 'field'), plot('E-straddle', 'straddle'), plot('F-outside', 'outside')],
      max_cells_per_plot: 120,
      operator: { name: 'Holzhandel Beispiel GmbH', address: 'Hafenstraße 1, Hamburg', eori: 'DE123456789012345' },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 2000));
    body = r.body;
  });

  it('a plot cleared in 2022 is deforestation_detected, with its loss cells and the deciding numbers', () => {
    const a = byId(body).get('A-cleared');
    assert.equal(a.verdict, 'deforestation_detected', a.reason);
    assert.ok(a.forest_fraction > 0.95, `forest fraction ${a.forest_fraction} (cells at the edge may read the neighbour)`);
    assert.ok(Math.abs(a.area_ha - 28.6) < 0.6, `geodesic area ${a.area_ha} ha`);
    assert.ok(a.loss_cells.length > 0 && a.loss_cells.every((l: any) => l.loss_year === 2022 && l.lng < 10.0051));
    assert.ok(a.loss_fraction > 0.35 && a.loss_fraction < 0.65, `loss fraction ${a.loss_fraction} (half the plot was cleared)`);
    assert.match(a.reason, /lost their cover after the cut-off \(loss year 2022\)/);
  });

  it('an untouched forest is deforestation_free; a field that was never forest is no_forest_at_baseline', () => {
    const b = byId(body).get('B-untouched');
    assert.equal(b.verdict, 'deforestation_free', b.reason);
    assert.equal(b.loss_cells.length, 0);
    const c = byId(body).get('C-field');
    assert.equal(c.verdict, 'no_forest_at_baseline', c.reason);
    assert.equal(c.forest_area_ha, 0);
  });

  it('a plot across two Hansen tiles reads both: the loss lies in the northern tile only', () => {
    const e = byId(body).get('E-straddle');
    assert.equal(e.verdict, 'deforestation_detected', e.reason);
    assert.ok(e.loss_cells.every((l: any) => l.lat > 50 && l.loss_year === 2021));
    assert.ok(up.count('/hansen/GFC-2024-v1.12/Hansen_GFC-2024-v1.12_lossyear_50N_010E') > 0 && up.count('/hansen/GFC-2024-v1.12/Hansen_GFC-2024-v1.12_lossyear_60N_010E') > 0);
  });

  it('a plot outside the baseline map is insufficient_data, never a guess', () => {
    const f = byId(body).get('F-outside');
    assert.equal(f.verdict, 'insufficient_data', f.reason);
    assert.equal(f.forest_fraction, null);
    assert.equal(body.annex_ii.all_plots_deforestation_free, false);
  });

  it('carries Annex II, the legality disclaimer, evidence bundles and one receipt over every fact read, verifiable offline', () => {
    assert.deepEqual(body.annex_ii.operator, { name: 'Holzhandel Beispiel GmbH', address: 'Hafenstraße 1, Hamburg', eori: 'DE123456789012345' });
    assert.deepEqual(body.annex_ii.countries_of_production, ['DEU']);
    assert.equal(body.annex_ii.geolocation.length, 5);
    assert.equal(body.annex_ii.products[0].commodity, 'wood');
    assert.match(body.legality_disclaimer, /outside Earth-observation scope/);
    const all = new Set(body.plots.flatMap((p: any) => p.fact_cids));
    assert.deepEqual(new Set(body.receipt.fact_cids), all);
    assert.ok(body.evidence.bundle_tokens.length >= 1 && body.evidence.bundle_tokens.every((x: string) => x.startsWith('svc:bundle:')));
    const v = verifyResponse(body, { publicKey: t.service.keys.publicKeyB32 });
    assert.equal(v.valid, true, JSON.stringify(v.errors).slice(0, 1000));
  });

  it('is kept: the statement JSON and its one-page HTML report are served', async () => {
    const s = await t.app.inject({ method: 'GET', url: body.stored.statement_url });
    assert.equal(s.statusCode, 200);
    assert.equal(JSON.parse(s.body).statement_id, body.statement_id);
    const h = await t.app.inject({ method: 'GET', url: body.stored.report_url });
    assert.equal(h.statusCode, 200);
    assert.match(String(h.headers['content-type']), /text\/html/);
    assert.ok(h.body.includes('A-cleared') && h.body.includes('deforestation_detected') && h.body.includes(body.receipt.signature));
    const bad = await t.app.inject({ method: 'GET', url: '/v1/eudr_dds/report/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' });
    assert.equal(bad.statusCode, 404);
  });
});

describe('the 0.5 ha minimum mapping unit', () => {
  it('a 9.5 ha plot holding a 0.25 ha forest patch is no_forest_at_baseline: forest share × geodesic area, not cells × cell area', async () => {
    const r = await post('/v1/eudr_dds', { plots: [plot('D-patch', 'patch')], max_cells_per_plot: 600 });
    assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 1000));
    const d = r.body.plots[0];
    assert.equal(d.verdict, 'no_forest_at_baseline', d.reason);
    assert.ok(d.forest_fraction > 0, 'the patch was sampled');
    assert.ok(d.forest_area_ha > 0.1 && d.forest_area_ha < 0.5, `forest area ${d.forest_area_ha} ha`);
    assert.ok(Math.abs(d.forest_area_ha - d.forest_fraction * d.area_ha) < 0.001);
    assert.match(d.reason, /under the 0\.5 ha minimum mapping unit/);
  });
});

describe('refusals name the plot and read nothing', () => {
  const refused = async (p: Record<string, unknown>, field: RegExp, message: RegExp) => {
    const before = up.requests.length;
    const r = await post('/v1/eudr_dds', { plots: [plot('ok', 'untouched'), p] });
    assert.equal(r.status, 422, JSON.stringify(r.body));
    assert.equal(r.body.code, 'invalid_argument');
    assert.match(r.body.details.field, field);
    assert.match(r.body.message, message);
    assert.equal(up.requests.length, before, 'nothing was read');
  };
  it('a cattle plot given as a point', () =>
    refused({ ...plot('cow-1', 'untouched'), commodity_hs: '010229', geometry_geojson: { type: 'Point', coordinates: [10.015, 49.993] } }, /plots\[1\]\.geometry_geojson/, /cow-1.*cattle.*polygon/));
  it('an HS code outside Annex I, and a country that is not alpha-3', async () => {
    await refused({ ...plot('x', 'untouched'), commodity_hs: '870323' }, /plots\[1\]\.commodity_hs/, /870323.*Annex I/);
    await refused({ ...plot('y', 'untouched'), country_of_production: 'XYZ' }, /plots\[1\]\.country_of_production/, /alpha-3/);
  });
  it('a self-intersecting polygon, an open ring, a clockwise ring', async () => {
    const bow = {
      type: 'Polygon',
      coordinates: [
        [
          [10.01, 49.99],
          [10.02, 49.995],
          [10.02, 49.99],
          [10.01, 49.995],
          [10.01, 49.99],
        ],
      ],
    };
    await refused({ ...plot('bow', 'untouched'), geometry_geojson: bow }, /plots\[1\]\.geometry_geojson/, /intersect/);
    const open = {
      type: 'Polygon',
      coordinates: [
        [
          [10.01, 49.99],
          [10.02, 49.99],
          [10.02, 49.995],
          [10.01, 49.995],
        ],
      ],
    };
    await refused({ ...plot('open', 'untouched'), geometry_geojson: open }, /geometry_geojson/, /clos|open/);
    const cw = {
      type: 'Polygon',
      coordinates: [
        [
          [10.01, 49.99],
          [10.01, 49.995],
          [10.02, 49.995],
          [10.02, 49.99],
          [10.01, 49.99],
        ],
      ],
    };
    await refused({ ...plot('cw', 'untouched'), geometry_geojson: cw }, /geometry_geojson/, /counter-clockwise/);
  });
});

describe('background statements', () => {
  it('a job reports plots done / total and then where the statement is', async () => {
    const r = await post('/v1/eudr_dds/jobs', { plots: [plot('J1', 'untouched'), plot('J2', 'field')], max_cells_per_plot: 40 });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.plots_total, 2);
    assert.equal(r.body.budget_s, 60);
    let j = r.body;
    for (let i = 0; i < 600 && j.status === 'running'; i++) {
      await new Promise((res) => setTimeout(res, 50));
      j = (await t.app.inject({ method: 'GET', url: r.body.poll })).json();
    }
    assert.equal(j.status, 'done', JSON.stringify(j));
    assert.equal(j.plots_done, 2);
    const s = JSON.parse((await t.app.inject({ method: 'GET', url: j.result.statement_url })).body);
    assert.deepEqual(s.plots.map((p: any) => p.verdict).sort(), ['deforestation_free', 'no_forest_at_baseline']);
    const q = await t.app.inject({ method: 'GET', url: `/v1/eudr_dds/job?job_id=${r.body.job_id}` });
    assert.equal(q.json().status, 'done');
    assert.equal((await t.app.inject({ method: 'GET', url: '/v1/eudr_dds/jobs/00000000000000000000000000' })).statusCode, 404);
    // Another process sharing the store (a worker, another PostgreSQL responder) holds no job in
    // its memory: it answers the poll from the shared record.
    const elsewhere = { ...t.service, store: Object.create(t.service.store) as typeof t.service.store };
    const seen = await jobState(elsewhere, r.body.job_id);
    assert.equal(seen.status, 'done');
    assert.equal(seen.plots_done, 2);
    assert.deepEqual(seen.result, j.result);
    await assert.rejects(jobState(elsewhere, '0'.repeat(26)), (err: any) => err.code === 'not_found');
  });
});

describe('over MCP', () => {
  it('eudr_dds is a tool of /mcp/full answering as REST does', async () => {
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const client = new Client({ name: 'eudr-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp/full`)));
    try {
      const tools = (await client.listTools()).tools.map((x) => x.name);
      assert.ok(tools.includes('svc_eudr_dds') && tools.includes('svc_eudr_dds_job'));
      const res = (await client.callTool({ name: 'svc_eudr_dds', arguments: { plots: [plot('M1', 'untouched')], max_cells_per_plot: 30 } })) as any;
      assert.notEqual(res.isError, true, JSON.stringify(res).slice(0, 500));
      assert.equal(res.structuredContent.plots[0].verdict, 'deforestation_free');
    } finally {
      await client.close();
    }
  });
});
