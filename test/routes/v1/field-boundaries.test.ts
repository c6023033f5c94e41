/**
 * GET/POST /v1/field_boundaries and recall_polygon's include ftw_fields, against a real PMTiles
 * v3 archive built by the test (test/sources/fixtures/ftw-pmtiles.ts) and served from 127.0.0.1.
 * The fields sit around a corner of the z15 tile grid near Chartres, so some cross tile edges
 * (merged back into one polygon), one is cut by the box, one only exists in the 2024 layer.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as P from '../../../src/protocol/index.js';
import { loadConfig } from '../../../src/config.js';
import { loadRegistry } from '../../../src/registry/registry.js';
import { ftwConnector } from '../../../src/sources/ftw.js';
import { UpstreamClient } from '../../../src/sources/http.js';
import { build, type TestApp } from '../../support/app.js';
import { fakeConnector } from '../../support/fake-connector.js';
import { buildArchive, startFtwServer, type FixtureField, type FtwServer } from '../../sources/fixtures/ftw-pmtiles.js';

const Z = 15;
const L25 = 'field-2025-01-01 00:00:00';
const L24 = 'field-2024-01-01 00:00:00';
type LngLat = [number, number];
const tileLng = (x: number) => (x / 2 ** Z) * 360 - 180;
const tileLat = (y: number) => (Math.atan(Math.sinh(Math.PI * (1 - (2 * y) / 2 ** Z))) * 180) / Math.PI;

/** Exact area of a latitude–longitude rectangle on the WGS 84 ellipsoid (authalic formula), m². */
function rectAreaM2(w: number, s: number, e: number, n: number): number {
  const a = 6378137;
  const f = 1 / 298.257223563;
  const e2 = f * (2 - f);
  const ec = Math.sqrt(e2);
  const q = (phi: number) => {
    const sp = Math.sin(phi);
    return sp / (1 - e2 * sp * sp) + Math.log((1 + ec * sp) / (1 - ec * sp)) / (2 * ec);
  };
  const rad = Math.PI / 180;
  return ((a * a * (1 - e2)) / 2) * (e - w) * rad * (q(n * rad) - q(s * rad));
}

const rect = (w: number, s: number, e: number, n: number): LngLat[] => [
  [w, s],
  [e, s],
  [e, n],
  [w, n],
  [w, s],
];

let t: TestApp;
let srv: FtwServer;
let K: LngLat; // the tile corner the fields sit around
let box: { min_lat: number; min_lng: number; max_lat: number; max_lng: number };
let origin: { lat: number; lng: number };
const expected: Record<string, { rings: LngLat[][]; areaM2: number; confidence: number | null }> = {};

function layout(k: LngLat): FixtureField[] {
  const [x, y] = k;
  const r = (w: number, s: number, e: number, n: number) => rect(x + w, y + s, x + e, y + n);
  const cHole = r(-0.0035, -0.0015, -0.0025, -0.0005).reverse() as LngLat[];
  const cOuter: LngLat[] = [
    [x - 0.005, y - 0.002],
    [x - 0.002, y - 0.002],
    [x - 0.002, y + 0.0005],
    [x - 0.0038, y + 0.0005],
    [x - 0.0038, y + 0.0015],
    [x - 0.005, y + 0.0015],
    [x - 0.005, y - 0.002],
  ];
  const fields: FixtureField[] = [
    { layer: L25, rings: [r(-0.006, 0.002, -0.004, 0.0035)], properties: { id: 'A1', confidence: 87 } },
    { layer: L25, rings: [r(-0.0015, 0.001, 0.0015, 0.002)], properties: { id: 'B2', confidence: 75 } },
    { layer: L25, rings: [cOuter, cHole], properties: { confidence: 55 } },
    { layer: L25, rings: [r(-0.001, -0.0015, 0.001, 0.0005)], properties: {} },
    { layer: L25, rings: [r(0.003, -0.001, 0.006, 0.0005)], properties: { id: 'D4', confidence: 90 } },
    { layer: L24, rings: [r(0.002, 0.002, 0.0035, 0.003)], properties: { id: 'E5', confidence: 80 } },
    { layer: L25, rings: [r(0.02, 0, 0.022, 0.001)], properties: { id: 'F6', confidence: 99 } },
  ];
  const area = (w: number, s: number, e: number, n: number) => rectAreaM2(x + w, y + s, x + e, y + n);
  expected.A1 = { rings: [r(-0.006, 0.002, -0.004, 0.0035)], areaM2: area(-0.006, 0.002, -0.004, 0.0035), confidence: 0.87 };
  expected.B2 = { rings: [r(-0.0015, 0.001, 0.0015, 0.002)], areaM2: area(-0.0015, 0.001, 0.0015, 0.002), confidence: 0.75 };
  expected.C = { rings: [cOuter, cHole], areaM2: area(-0.005, -0.002, -0.002, 0.0005) + area(-0.005, 0.0005, -0.0038, 0.0015) - area(-0.0035, -0.0015, -0.0025, -0.0005), confidence: 0.55 };
  expected.G = { rings: [r(-0.001, -0.0015, 0.001, 0.0005)], areaM2: area(-0.001, -0.0015, 0.001, 0.0005), confidence: null };
  // D is cut by the box's east edge at x + 0.004.
  expected.D4 = { rings: [r(0.003, -0.001, 0.004, 0.0005)], areaM2: area(0.003, -0.001, 0.004, 0.0005), confidence: 0.9 };
  expected.E5 = { rings: [r(0.002, 0.002, 0.0035, 0.003)], areaM2: area(0.002, 0.002, 0.0035, 0.003), confidence: 0.8 };
  return fields;
}

const post = async (payload: unknown, app = t) => {
  const r = await app.app.inject({ method: 'POST', url: '/v1/field_boundaries', payload: payload as object });
  return { status: r.statusCode, body: r.json() };
};
const byLabel = (fields: any[]) => {
  // Fields with an upstream id are named by it; the two without (C and G) by which corner they hold.
  const out: Record<string, any> = {};
  for (const f of fields) {
    const m = /^ftw:\d{4}:([A-Z]\d)$/.exec(f.id);
    if (m) out[m[1]] = f;
    else out[f.geometry.coordinates[0].length > 6 ? 'C' : 'G'] = f;
  }
  return out;
};

/** Every expected vertex has a shown vertex within `tol` degrees (and the rings count matches). */
function sameRings(shown: LngLat[][], want: LngLat[][], tol = 6e-6): void {
  assert.equal(shown.length, want.length, 'ring count');
  for (let k = 0; k < want.length; k++) {
    assert.equal(shown[k].length, want[k].length, `ring ${k}: ${JSON.stringify(shown[k])}`);
    for (const p of want[k])
      assert.ok(
        shown[k].some((q) => Math.abs(q[0] - p[0]) <= tol && Math.abs(q[1] - p[1]) <= tol),
        `ring ${k} lacks ${p}`,
      );
  }
}

before(async () => {
  srv = await startFtwServer(new Uint8Array(0));
  const config = loadConfig({ SVC_LOG_LEVEL: 'silent' });
  const client = new UpstreamClient({ userAgent: 'test', timeoutMs: 5000, allowedBaseUrls: [srv.url], retries: 0 });
  const ftw = ftwConnector({ config, registry: loadRegistry(), client, baseUrl: () => srv.url });
  t = await build({}, {}, { materializers: [fakeConnector(['copdem30m.elevation_mean']), ftw] });
  const loc = (await t.app.inject({ method: 'POST', url: '/v1/locate', payload: { place: 'Chartres' } })).json();
  origin = { lat: loc.lat, lng: loc.lng };
  const n = 2 ** Z;
  const tx = Math.round(((origin.lng + 180) / 360) * n);
  const s = Math.sin((origin.lat * Math.PI) / 180);
  const ty = Math.round((0.5 - Math.log((1 + s) / (1 - s)) / (4 * Math.PI)) * n);
  K = [tileLng(tx), tileLat(ty)];
  box = { min_lat: K[1] - 0.003, min_lng: K[0] - 0.007, max_lat: K[1] + 0.004, max_lng: K[0] + 0.004 };
  srv.setArchive(buildArchive(layout(K)));
});
after(async () => {
  await t?.close();
  await srv?.close();
});

describe('field boundaries from a PMTiles archive', () => {
  it('returns the known polygons clipped to the box, merged across tile edges, with geodesic areas within 1 %', async () => {
    srv.requests.length = 0;
    const { status, body } = await post({ polygon_bbox: box });
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body.license, 'CC-BY-4.0');
    assert.match(body.attribution, /Fields of The World/);
    assert.equal(body.truncated, false);
    assert.equal(body.note, undefined);
    const f = byLabel(body.fields);
    assert.deepEqual(Object.keys(f).sort(), ['A1', 'B2', 'C', 'D4', 'G'], 'F6 lies outside the box, E5 is in the 2024 layer');
    for (const [label, want] of Object.entries(expected)) {
      if (label === 'E5') continue;
      const got = f[label];
      assert.equal(got.geometry.type, 'Polygon', label);
      sameRings(got.geometry.coordinates, want.rings);
      const rel = Math.abs(got.area_ha * 1e4 - want.areaM2) / want.areaM2;
      assert.ok(rel < 0.01, `${label}: area ${got.area_ha} ha vs ${(want.areaM2 / 1e4).toFixed(4)} ha (${(rel * 100).toFixed(3)} %)`);
      assert.equal(got.confidence, want.confidence, label);
      assert.equal(got.country, 'FR', label);
      assert.equal(got.layer, L25);
    }
    assert.equal(f.D4.clipped, true);
    assert.ok(
      f.D4.geometry.coordinates[0].some((p: LngLat) => p[0] === box.max_lng),
      'the cut lies exactly on the box edge',
    );
    for (const g of body.fields) for (const ring of g.geometry.coordinates) for (const [x, y] of ring) assert.ok(x >= box.min_lng && x <= box.max_lng && y >= box.min_lat && y <= box.max_lat);
    assert.equal(f.A1.clipped, false);
    assert.match(f.C.id, /^ftw:2025:g[a-z2-7]{26}$/);
    // The archive is read in a few ranges: header and root directory, then the tiles in one run.
    assert.equal(body.read.zoom, Z);
    assert.ok(body.read.tiles_covering >= 4);
    assert.equal(body.read.range_requests, srv.requests.length);
    assert.ok(srv.requests.length <= 3, `${srv.requests.length} range requests: ${srv.requests.map((r) => r.range).join(' ')}`);
    assert.ok(srv.requests.every((r) => r.range?.startsWith('bytes=')));
  });

  it('serves a repeat from its caches (no range request) with the same fields and ids', async () => {
    const first = await post({ polygon_bbox: box });
    srv.requests.length = 0;
    const again = await post({ polygon_bbox: box });
    assert.equal(srv.requests.length, 0);
    assert.equal(again.body.read.range_requests, 0);
    assert.equal(again.body.read.tiles_from_cache, again.body.read.tiles_covering);
    assert.deepEqual(again.body.fields, first.body.fields);
  });

  it('the receipt verifies offline and binds every field, the box and the derivation', async () => {
    const { body } = await post({ polygon_bbox: box });
    const key = t.service.keys.publicKeyB32;
    const v = P.verifyResponse(body, { publicKey: key });
    assert.equal(v.valid, true, v.errors.join('\n'));
    assert.equal(v.trusted, true);
    assert.ok(v.checks.some((c) => c.check === 'field_boundaries' && c.ok));
    assert.equal(body.receipt.primitive, 'svc.field_boundaries');
    assert.deepEqual(
      body.receipt.fact_cids,
      body.fields.map((f: any) => f.field_cid),
    );
    assert.equal(body.receipt.field.aoi_cid, body.area.aoi_cid);
    assert.equal(body.receipt.field.derivation_cid, body.derivation.derivation_cid);
    assert.ok(P.verifyReceipt(body.receipt, { publicKey: key }).valid);

    const moved = structuredClone(body);
    moved.fields[0].geometry.coordinates[0][1][0] += 1e-4;
    const vm = P.verifyResponse(moved, { publicKey: key });
    assert.equal(vm.valid, false);
    assert.ok(vm.failures.includes('field_mismatch'));
    const bigger = structuredClone(body);
    bigger.fields[1].area_ha *= 2;
    assert.ok(P.verifyResponse(bigger, { publicKey: key }).failures.includes('field_mismatch'));
    const dropped = structuredClone(body);
    dropped.fields.pop();
    assert.equal(P.verifyResponse(dropped, { publicKey: key }).valid, false);
    const otherBox = structuredClone(body);
    otherBox.area.bbox.max_lat += 0.01;
    assert.ok(P.verifyResponse(otherBox, { publicKey: key }).failures.includes('field_mismatch'));
  });

  it('the GET twin reads the box from the query string and answers the same fields', async () => {
    const q = new URLSearchParams(Object.entries(box).map(([k, v]) => [k, String(v)]));
    const r = await t.app.inject({ method: 'GET', url: `/v1/field_boundaries?${q}` });
    assert.equal(r.statusCode, 200, r.body);
    const viaPost = await post({ polygon_bbox: box });
    assert.deepEqual(r.json().fields, viaPost.body.fields);
    const partial = await t.app.inject({ method: 'GET', url: `/v1/field_boundaries?min_lat=${box.min_lat}&max_lat=${box.max_lat}` });
    assert.equal(partial.statusCode, 422);
    assert.equal(partial.json().details.field, 'min_lng');
  });

  it('selects by place: a point place reads the square of radius_m around it', async () => {
    const { status, body } = await post({ place: 'Chartres' });
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body.area.source, 'place');
    assert.equal(body.area.place.radius_m, 1000);
    assert.match(body.area.place.label, /Chartres/);
    assert.ok(Math.abs((body.area.bbox.min_lat + body.area.bbox.max_lat) / 2 - origin.lat) < 1e-6);
    const f = byLabel(body.fields);
    for (const k of ['A1', 'B2', 'C', 'G']) assert.ok(f[k], `${k} near the place`);
    assert.ok(body.area.area_km2 > 3.9 && body.area.area_km2 < 4.1, `${body.area.area_km2} km²`);
    const small = await post({ place: 'Chartres', radius_m: 10 });
    assert.equal(small.status, 200);
    assert.ok(small.body.area.area_km2 < 0.001);
  });

  it('refuses an area beyond the cap, naming it, by box and by place', async () => {
    const big = await post({ polygon_bbox: { min_lat: 48, min_lng: 1, max_lat: 48.2, max_lng: 1.2 } });
    assert.equal(big.status, 422);
    assert.equal(big.body.code, 'invalid_argument');
    assert.match(big.body.message, /max_area_km2 = 100 km²/);
    assert.equal(big.body.details.max_area_km2, 100);
    const country = await post({ place: 'France' });
    assert.equal(country.status, 422);
    assert.match(country.body.message, /max_area_km2/);
    const limits = (await t.app.inject({ method: 'GET', url: '/v1/limits' })).json();
    assert.equal(limits.field_boundaries.max_area_km2, 100);
    assert.ok(limits.caches.ftw_tiles && limits.caches.pmtiles_directories && limits.caches.field_boundaries_assembled, 'the caches are listed');
    const both = await post({ polygon_bbox: box, place: 'Chartres' });
    assert.equal(both.status, 422);
    const reversed = await post({ polygon_bbox: { ...box, min_lat: box.max_lat, max_lat: box.min_lat } });
    assert.equal(reversed.status, 422);
  });

  it('an area without fields is an empty list with a typed note, still signed', async () => {
    const empty = { min_lat: K[1] - 0.003, min_lng: K[0] + 0.008, max_lat: K[1] - 0.001, max_lng: K[0] + 0.012 };
    const { status, body } = await post({ polygon_bbox: empty });
    assert.equal(status, 200);
    assert.deepEqual(body.fields, []);
    assert.equal(body.note.code, 'no_fields_in_area');
    assert.deepEqual(body.receipt.fact_cids, []);
    assert.equal(P.verifyResponse(body, { publicKey: t.service.keys.publicKeyB32 }).valid, true);
    const away = await post({ polygon_bbox: { min_lat: 0, min_lng: 0, max_lat: 0.01, max_lng: 0.01 } });
    assert.equal(away.status, 200);
    assert.deepEqual(away.body.fields, []);
    assert.equal(away.body.note.code, 'outside_coverage');
  });

  it('reads another year and filters by confidence', async () => {
    const y24 = await post({ polygon_bbox: box, year: 2024 });
    assert.deepEqual(
      y24.body.fields.map((f: any) => f.id),
      ['ftw:2024:E5'],
    );
    sameRings(y24.body.fields[0].geometry.coordinates, expected.E5.rings);
    const none = await post({ polygon_bbox: box, year: 2019 });
    assert.equal(none.body.note.code, 'year_not_in_archive');
    const sure = await post({ polygon_bbox: box, min_confidence: 0.7 });
    assert.deepEqual(Object.keys(byLabel(sure.body.fields)).sort(), ['A1', 'B2', 'D4']);
    const capped = await post({ polygon_bbox: box, max_fields: 2 });
    assert.equal(capped.body.fields.length, 2);
    assert.equal(capped.body.truncated, true);
    assert.equal(capped.body.note.code, 'truncated');
    assert.equal(P.verifyResponse(capped.body, { publicKey: t.service.keys.publicKeyB32 }).valid, true);
  });

  it('recall_polygon with include ftw_fields adds the fields inside its polygon, under their own receipt', async () => {
    const [x, y] = K;
    // A polygon over the western part: A1 and C inside; B2, G and D4 (label points east of it) not.
    const polygon = {
      type: 'Polygon',
      coordinates: [
        [
          [x - 0.007, y - 0.003],
          [x - 0.0017, y - 0.003],
          [x - 0.0017, y + 0.004],
          [x - 0.007, y + 0.004],
          [x - 0.007, y - 0.003],
        ],
      ],
    };
    const r = await t.app.inject({ method: 'POST', url: '/v1/recall_polygon', payload: { polygon, bands: ['copdem30m.elevation_mean'], max_cells: 2, include: ['ftw_fields'] } });
    assert.equal(r.statusCode, 200, r.body);
    const body = r.json();
    const ff = body.ftw_fields;
    assert.equal(ff.area.source, 'recall_polygon');
    assert.deepEqual(Object.keys(byLabel(ff.fields)).sort(), ['A1', 'C']);
    assert.equal(ff.receipt.primitive, 'svc.field_boundaries');
    const v = P.verifyResponse(body, { publicKey: t.service.keys.publicKeyB32 });
    assert.equal(v.valid, true, v.errors.join('\n'));
    assert.ok(v.checks.some((c) => c.check === 'field_boundaries' && c.ok));
    const cells = await t.app.inject({
      method: 'POST',
      url: '/v1/recall_polygon',
      payload: { cells: [P.cellOf(origin.lat, origin.lng)], bands: ['copdem30m.elevation_mean'], include: ['ftw_fields'] },
    });
    assert.equal(cells.json().ftw_fields.status, 'unavailable');
  });

  it('is an MCP tool in /mcp/full, callable with the same answer', async () => {
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const client = new Client({ name: 'svc-test', version: '0.0.1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp/full`)));
    try {
      const { tools } = await client.listTools();
      assert.ok(tools.some((x) => x.name === 'svc_field_boundaries'));
      assert.ok(!tools.some((x) => x.name === 'svc_field_boundaries_get'));
      const res: any = await client.callTool({ name: 'svc_field_boundaries', arguments: { polygon_bbox: box } });
      assert.equal(res.isError, undefined);
      const sc = res.structuredContent;
      assert.deepEqual(Object.keys(byLabel(sc.fields)).sort(), ['A1', 'B2', 'C', 'D4', 'G']);
      assert.equal(P.verifyResponse(sc, { publicKey: t.service.keys.publicKeyB32 }).valid, true);
    } finally {
      await client.close();
    }
  });
});

describe('field boundaries through the registry wiring', () => {
  it('SVC_UPSTREAM_FTW_URL points the ftw connector at the archive; /v1/sources shows its licence', async () => {
    const app = await build({ upstreams: { FTW: srv.url } });
    try {
      const m = (await app.app.inject({ method: 'GET', url: '/v1/materializers' })).json();
      const ftw = m.materializers.find((x: any) => x.key === 'ftw');
      assert.ok(ftw);
      assert.equal(ftw.base_url_host, new URL(srv.url).host);
      const sources = (await app.app.inject({ method: 'GET', url: '/v1/sources' })).json().sources;
      const entry = sources.find((s: any) => s.key === 'ftw');
      assert.equal(entry.license, 'CC-BY-4.0');
      assert.match(entry.attribution, /Fields of The World/);
      const r = await post({ polygon_bbox: box }, app);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.fields.length, 5);
    } finally {
      await app.close();
    }
  });

  it('without the connector: a typed refusal, and recall_polygon says the fields are unavailable', async () => {
    const app = await build({}, {}, { materializers: [fakeConnector(['copdem30m.elevation_mean'])] });
    try {
      const r = await post({ polygon_bbox: box }, app);
      assert.equal(r.status, 501);
      assert.equal(r.body.code, 'not_yet_implemented');
      const rp = await app.app.inject({ method: 'POST', url: '/v1/recall_polygon', payload: { polygon_bbox: box, bands: ['copdem30m.elevation_mean'], max_cells: 1, include: ['ftw_fields'] } });
      assert.equal(rp.statusCode, 200, rp.body);
      assert.equal(rp.json().ftw_fields.status, 'unavailable');
    } finally {
      await app.close();
    }
  });
});
