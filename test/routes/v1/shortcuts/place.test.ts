import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../../src/protocol/index.js';
import { build, type TestApp } from '../../../support/app.js';
import { fakeConnector, type FakeConnector } from '../../../support/fake-connector.js';
import { Validator } from '@seriousme/openapi-schema-validator';
import { fails, get, post, verifies } from '../reads/helpers.js';
import type { MaterializeRequest } from '../../../../src/sources/contract.js';

let t: TestApp;
let fake: FakeConnector;

/** A value derived from the cell centre, so every cell answers differently but reproducibly. */
const fromCentre = (req: MaterializeRequest) => Number(((((req.center.lat * 7 + req.center.lng * 3) % 1) + 1) % 1).toFixed(6));
const value = (v: number) => ({ status: 'value' as const, value: v, provenance: { source: 'fake', captured_at: '2026-11-20T00:00:00Z' }, fn: 'fake@1' });

before(async () => {
  fake = fakeConnector(['indices.ndvi', 'copdem30m.elevation_mean', 'landcover.esa_worldcover_2021', 'weather.temperature_2m', 'soil.clay_0_30cm', 'air.pm2_5', 'air.nitrogen_dioxide', 'air.ozone'], {
    'indices.ndvi': (req) => value(fromCentre(req)),
    'copdem30m.elevation_mean': (req) => value(100 + fromCentre(req) * 10),
    'landcover.esa_worldcover_2021': () => value(40),
    'weather.temperature_2m': (req) => value(20 + fromCentre(req)),
    'soil.clay_0_30cm': () => value(31),
    'air.ozone': () => ({ status: 'absence', reason: 'unavailable_capability', provenance: { source: 'fake' }, fn: 'fake@1' }),
  });
  t = await build({}, {}, { materializers: [fake] });
});
after(async () => t.close());

function receiptCoversFacts(body: any): void {
  assert.ok(verifies(t, body.receipt), 'envelope receipt verifies offline');
  assert.deepEqual(
    body.receipt.fact_cids,
    body.facts.map((f: any) => f.fact_cid),
    'receipt covers exactly the facts returned',
  );
  for (const f of body.facts) assert.ok(verifies(t, f.receipt), 'each fact keeps its own receipt');
}

describe('place shortcuts at a point (lat/lng)', () => {
  it('POST /v1/ndvi reads the cell, signs it as svc.ndvi, and covers exactly the facts used', async () => {
    const r = await post(t, '/v1/ndvi', { lat: 12.34567, lng: 45.67891 });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const cell = P.cellOf(12.34567, 45.67891);
    assert.equal(r.body.shortcut, 'ndvi');
    assert.equal(r.body.mode, 'point');
    assert.equal(r.body.cell, cell);
    assert.deepEqual(r.body.bands, ['indices.ndvi']);
    assert.equal(r.body.facts.length, 1);
    assert.equal(r.body.facts[0].band, 'indices.ndvi');
    assert.equal(r.body.facts[0].cell, cell);
    assert.equal(r.body.receipt.primitive, 'svc.ndvi');
    assert.deepEqual(r.body.receipt.cells, [cell]);
    receiptCoversFacts(r.body);
    assert.equal(r.body.place.via, 'direct_latlng');
    assert.equal(r.body.place.cell64, cell);
    assert.equal(r.body.place.is_high_confidence, true);
    assert.equal(r.body.place.selected.is_high_confidence, true);
    assert.equal(r.body.polygon, undefined, 'a point has no polygon block');
    assert.equal(r.body.stats, undefined);
    assert.ok(Array.isArray(r.body.materialize_notes) && r.body.materialize_notes.length === 1);
    assert.ok(r.body.bands_already_attested_at_cell.includes('indices.ndvi'));
    assert.ok(r.body.caveats.length > 0);
  });

  it('GET and POST give the same facts (lon is an alias of lng)', async () => {
    const a = await post(t, '/v1/elevation', { lat: -3.21098, lon: 101.23456 });
    assert.equal(a.status, 200, JSON.stringify(a.body));
    const b = await get(t.app, '/v1/elevation?lat=-3.21098&lon=101.23456');
    assert.equal(b.status, 200, JSON.stringify(b.body));
    assert.deepEqual(
      b.body.facts.map((f: any) => f.fact_cid),
      a.body.facts.map((f: any) => f.fact_cid),
    );
    assert.deepEqual(b.body.receipt.cells, a.body.receipt.cells);
    receiptCoversFacts(b.body);
    assert.deepEqual(b.body.materialize_notes, [], 'the second read is warm');
  });

  it('/v1/elevation also takes a cell64', async () => {
    const cell = P.cellOf(-3.21098, 101.23456);
    const r = await post(t, '/v1/elevation', { cell64: cell });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.cell, cell);
    assert.equal(r.body.facts[0].band, 'copdem30m.elevation_mean');
    const g = await get(t.app, `/v1/elevation?cell64=${cell}`);
    assert.deepEqual(
      g.body.facts.map((f: any) => f.fact_cid),
      r.body.facts.map((f: any) => f.fact_cid),
    );
  });

  it('/v1/at reads the default set: vegetation, elevation, land cover, temperature', async () => {
    const r = await post(t, '/v1/at', { lat: 5.43219, lng: 6.54321 });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.facts.map((f: any) => f.band).sort(), ['copdem30m.elevation_mean', 'indices.ndvi', 'landcover.esa_worldcover_2021', 'weather.temperature_2m']);
    assert.equal(r.body.receipt.primitive, 'svc.at');
    receiptCoversFacts(r.body);
  });

  it('/v1/at honours band + bands (CSV on GET, array on POST) and applies tslot to non-static bands only', async () => {
    const tslot = P.currentTslot('medium');
    const g = await get(t.app, `/v1/at?lat=5.43219&lon=6.54321&bands=soil.clay_0_30cm,indices.ndvi&tslot=${tslot}`);
    assert.equal(g.status, 200, JSON.stringify(g.body));
    assert.deepEqual(g.body.bands, ['soil.clay_0_30cm', 'indices.ndvi']);
    assert.deepEqual(g.body.facts.map((f: any) => f.band).sort(), ['indices.ndvi', 'soil.clay_0_30cm']);
    const ndvi = g.body.facts.find((f: any) => f.band === 'indices.ndvi');
    const soil = g.body.facts.find((f: any) => f.band === 'soil.clay_0_30cm');
    assert.equal(ndvi.tslot, tslot);
    assert.equal(soil.tslot, 0, 'static band read at its single tslot');
    assert.ok(g.body.caveats.some((c: string) => /static bands \(soil\.clay_0_30cm\)/.test(c)));
    receiptCoversFacts(g.body);
    const p = await post(t, '/v1/at', { lat: 5.43219, lng: 6.54321, band: 'soil.clay_0_30cm', bands: ['indices.ndvi'], tslot });
    assert.equal(p.status, 200, JSON.stringify(p.body));
    assert.deepEqual(p.body.facts.map((f: any) => f.fact_cid).sort(), g.body.facts.map((f: any) => f.fact_cid).sort());
  });

  it('an absence is returned and signed, never turned into a value', async () => {
    const r = await post(t, '/v1/air', { lat: 1.23456, lng: 2.34567 });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const ozone = r.body.facts.find((f: any) => f.band === 'air.ozone');
    assert.equal(ozone.kind, 'absence');
    assert.equal(ozone.value, null);
    receiptCoversFacts(r.body);
  });
});

describe('place shortcut validation', () => {
  it('n_cells 0, 65, "x", 1.5, "3" → HTTP 400 invalid_argument (POST and GET)', async () => {
    for (const n of [0, 65, 'x', 1.5, '3', -1, null]) {
      fails(await post(t, '/v1/ndvi', { lat: 1.5, lng: 2.5, n_cells: n }), 400, 'invalid_argument', 'n_cells');
    }
    for (const n of ['0', '65', 'x', '1.5']) fails(await get(t.app, `/v1/ndvi?lat=1.5&lon=2.5&n_cells=${n}`), 400, 'invalid_argument', 'n_cells');
    const ok = await get(t.app, '/v1/ndvi?lat=1.5&lon=2.5&n_cells=64');
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
  });

  it('neither place nor coordinates, both, or half a pair → invalid_argument naming the field', async () => {
    fails(await post(t, '/v1/ndvi', {}), 422, 'invalid_argument', 'place');
    fails(await get(t.app, '/v1/air'), 422, 'invalid_argument', 'place');
    fails(await post(t, '/v1/ndvi', { place: 'Paris', lat: 1, lng: 2 }), 422, 'invalid_argument');
    fails(await post(t, '/v1/ndvi', { lat: 1 }), 422, 'invalid_argument', 'lng');
    fails(await post(t, '/v1/ndvi', { lng: 1 }), 422, 'invalid_argument', 'lat');
    fails(await post(t, '/v1/ndvi', { lat: 91, lng: 1 }), 422, 'invalid_argument', 'lat');
    fails(await post(t, '/v1/ndvi', { place: 'A', q: 'B' }), 422, 'invalid_argument', 'q');
  });

  it('fixed-set shortcuts refuse band choices and cell64; unknown bands are typed', async () => {
    fails(await post(t, '/v1/ndvi', { lat: 1, lng: 2, bands: 'air.ozone' }), 422, 'invalid_argument', 'bands');
    fails(await post(t, '/v1/ndvi', { cell64: P.cellOf(1, 2) }), 422, 'invalid_argument', 'cell64');
    fails(await post(t, '/v1/at', { lat: 1, lng: 2, bands: 'ndvi' }), 404, 'band_not_in_registry');
    fails(await post(t, '/v1/elevation', { cell64: 'defi.zb400.bafi.bab' }), 422, 'invalid_cell');
  });

  it('a static-only band set ignores tslot with a caveat; a tslot in the future is tslot_mismatch', async () => {
    const r = await post(t, '/v1/elevation', { lat: 1.5, lng: 2.5, tslot: 5 });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.facts[0].tslot, 0);
    fails(await post(t, '/v1/ndvi', { lat: 1.5, lng: 2.5, tslot: P.currentTslot('medium') + 5 }), 422, 'tslot_mismatch');
  });
});

describe('shortcut contract', () => {
  it('OpenAPI documents GET and POST of every place shortcut and the derived POSTs', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    for (const n of ['at', 'ndvi', 'air', 'lst', 'soil', 'water', 'forest', 'weather', 'elevation', 'buildings']) {
      assert.ok(doc.paths[`/v1/${n}`]?.get, `GET /v1/${n}`);
      assert.ok(doc.paths[`/v1/${n}`]?.post, `POST /v1/${n}`);
    }
    for (const n of ['terrain', 'spi', 'burn_severity', 'deforestation_alert', 'sar_forest_disturbance', 'rice_ch4']) assert.ok(doc.paths[`/v1/${n}`]?.post, `POST /v1/${n}`);
    const params = doc.paths['/v1/at'].get.parameters.map((x: any) => x.name);
    for (const q of ['lat', 'lon', 'place', 'band', 'bands', 'tslot', 'n_cells']) assert.ok(params.includes(q), `GET /v1/at documents ${q}`);
    const res = await new Validator().validate(doc);
    assert.equal(res.valid, true, JSON.stringify(res.errors)?.slice(0, 2000));
  });

  it('MCP tools are svc_<name> (core for at, weather, air, ndvi; elevation in /mcp/full to keep 18 core with svc_ask) and GET twins are not tools', async () => {
    const tools = (await get(t.app, '/v1/tools')).body.tools as Array<{ name: string; mcp: unknown; method: string }>;
    const by = new Map(tools.map((x) => [x.name, x]));
    for (const n of ['at', 'weather', 'air', 'ndvi']) assert.equal(by.get(`svc_${n}`)?.mcp, 'core', n);
    for (const n of ['elevation', 'lst', 'soil', 'water', 'forest', 'buildings', 'terrain', 'spi', 'burn_severity', 'deforestation_alert', 'sar_forest_disturbance', 'rice_ch4'])
      assert.equal(by.get(`svc_${n}`)?.mcp, 'full', n);
    assert.equal(by.get('svc_ndvi_get')?.mcp, false);
  });

  it('svc_ndvi over MCP dispatches the same handler', async () => {
    const r = await t.app.inject({
      method: 'POST',
      url: '/mcp/full',
      headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
      payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'svc_ndvi', arguments: { lat: 12.34567, lng: 45.67891 } } },
    });
    assert.equal(r.statusCode, 200, r.body);
    const body = r.json();
    const out = body.result.structuredContent;
    assert.equal(out.shortcut, 'ndvi');
    assert.ok(verifies(t, out.receipt));
  });
});
