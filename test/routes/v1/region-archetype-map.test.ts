/**
 * region_archetype_map and its resolve route over the GeoTessera fixture's 10 m tile, which holds
 * three archetypes with known borders (test/sources/fixtures/raster-scenes.ts): k = 3 recovers
 * them with exact pixel counts; the map is NaN outside the region; the same request gives the
 * same bytes and cids, on another responder too; k's bounds; a signed inconclusive answer for a
 * region with too few pixels; the receipt's field segment; an evicted map (and field) rebuilt
 * byte for byte from the records.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../../src/protocol/index.js';
import { verifyResponse } from '../../../src/protocol/verify-response.js';
import { decodeGrid, GRID_MEDIA_TYPE } from '../../../src/primitives/rasters/grid-format.js';
import { build, type TestApp } from '../../support/app.js';
import { startRasterUpstreams, type RasterUpstreams } from '../../sources/fixtures/raster-upstreams.js';
import { TESSERA_FINE, tesseraFineMasked, tesseraFineQ, tesseraFineZone } from '../../sources/fixtures/raster-scenes.js';
import { centreOf, fineBox, TESSERA_NOW, utm33 } from '../../support/area-embeddings.js';

let up: RasterUpstreams;
let t: TestApp;

async function post(url: string, payload: unknown, app = t) {
  const r = await app.app.inject({ method: 'POST', url, payload: payload as object });
  return { status: r.statusCode, body: r.json() };
}
const map = (payload: Record<string, unknown>, app = t) => post('/v1/region_archetype_map', { year: 2025, ...payload }, app);
async function get(url: string, app = t) {
  const r = await app.app.inject({ method: 'GET', url });
  return { status: r.statusCode, bytes: r.rawPayload, body: r.headers['content-type']?.toString().startsWith('application/json') ? r.json() : undefined };
}

/** For every map pixel: the fine tile's zone at it (shared lattice), or null when its centre is outside `inside`. */
function zonesOf(m: any, inside: (lat: number, lng: number) => boolean): Array<number | null> {
  const gt = m.geotransform;
  const col0 = (gt[0] - TESSERA_FINE.origin[0]) / 10;
  const row0 = (TESSERA_FINE.origin[1] - gt[3]) / 10;
  const out: Array<number | null> = [];
  for (let y = 0; y < m.height; y++) {
    for (let x = 0; x < m.width; x++) {
      const [lng, lat] = utm33.inverse([gt[0] + (x + 0.5) * gt[1], gt[3] + (y + 0.5) * gt[5]]);
      const c = col0 + x;
      const r = row0 + y;
      out.push(inside(lat, lng) && !tesseraFineMasked(r, c) ? tesseraFineZone(r, c) : null);
    }
  }
  return out;
}

const inBox = (b: any) => (lat: number, lng: number) => lat >= b.min_lat && lat <= b.max_lat && lng >= b.min_lng && lng <= b.max_lng;

before(async () => {
  up = await startRasterUpstreams(['tessera']);
  t = await build({ upstreams: up.upstreams }, {}, { now: () => TESSERA_NOW });
});
after(async () => {
  await t?.close();
  await up?.close();
});

describe('region_archetype_map on a field with three clear archetypes', () => {
  const BOX = fineBox(60, 100, 259, 259);
  let first: any;
  let bytes: Buffer;

  it("k = 3 recovers the three zones: every pixel in its zone's archetype, counts exact, NaN outside the box", async () => {
    const r = await map({ bbox: BOX, k: 3 });
    assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 600));
    first = r.body;
    assert.equal(first.status, 'map');
    assert.deepEqual([first.k, first.media_type, first.nodata, first.epsg, first.pixel_size_m, first.region.kind], [3, GRID_MEDIA_TYPE, 'NaN', 32633, 10, 'bbox']);
    const g = await get(first.artifact_url);
    assert.equal(g.status, 200);
    bytes = g.bytes;
    assert.equal(first.artifact_cid, P.b32encode(P.blake3(bytes)));
    const grid = decodeGrid(bytes);
    assert.deepEqual([grid.width, grid.height, [...grid.geotransform]], [first.width, first.height, first.geotransform]);
    const zones = zonesOf(first, inBox(first.region.bbox));
    const zoneOfId = new Map<number, number>();
    const want = [0, 0, 0];
    zones.forEach((z, p) => {
      const v = grid.values[p];
      if (z === null) {
        assert.ok(Number.isNaN(v), `pixel ${p} outside the box is NaN`);
        return;
      }
      want[z]++;
      assert.ok(Number.isInteger(v) && v >= 0 && v < 3, `pixel ${p}: ${v}`);
      if (!zoneOfId.has(v)) zoneOfId.set(v, z);
      assert.equal(zoneOfId.get(v), z, `pixel ${p}: archetype ${v} holds two zones`);
    });
    assert.equal(new Set(zoneOfId.values()).size, 3, 'one archetype per zone');
    const sorted = [...want].sort((a, b) => b - a);
    assert.deepEqual(
      first.archetypes.map((a: any) => a.pixels),
      sorted,
      'archetype 0 is the largest',
    );
    for (const a of first.archetypes) assert.equal(a.pixels, want[zoneOfId.get(a.id)!]);
    const total = want[0] + want[1] + want[2];
    assert.deepEqual([first.valid_pixels, first.region_pixels], [total, total]);
    for (const a of first.archetypes) assert.equal(a.fraction, Math.round((a.pixels / total) * 1e6) / 1e6);
    assert.equal(first.converged, true);
    assert.ok(first.iterations >= 1 && first.iterations <= 50);
    assert.ok(first.inertia > 0 && first.inertia < total * 0.05, `${first.inertia}`);
    assert.deepEqual(first.method, {
      distance: 'euclidean_on_l2_normalised',
      init: 'greedy_kmeans++',
      prng: 'xoshiro128**',
      max_iterations: 50,
      min_pixels_per_archetype: 10,
      seed: P.toHex(P.blake3(new TextEncoder().encode(`svc/region_archetype_map@1/seed\u0000${first.aoi_cid}\u00003`)).subarray(0, 16)),
    });
  });

  it("centroids are L2-normalised float32 vectors near their zone's prototype, each with its centroid_cid", () => {
    for (const a of first.archetypes) {
      const c: number[] = a.centroid;
      assert.equal(c.length, 128);
      assert.ok(c.every((x) => Math.fround(x) === x));
      assert.ok(Math.abs(Math.hypot(...c) - 1) < 1e-6);
      assert.equal(a.centroid_cid, P.b32encode(P.blake3(new Uint8Array(Float32Array.from(c).buffer))));
      // The zone's noise-free prototype, read off a pixel of the zone with zero noise sum: compare by cosine.
      const grid = decodeGrid(bytes);
      const p = grid.values.findIndex((v) => v === a.id);
      const x = p % first.width;
      const y = Math.floor(p / first.width);
      const col = (first.geotransform[0] - TESSERA_FINE.origin[0]) / 10 + x;
      const row = (TESSERA_FINE.origin[1] - first.geotransform[3]) / 10 + y;
      const v = Array.from({ length: 128 }, (_, k) => tesseraFineQ(row, col, k));
      const cos = v.reduce((s, q, k) => s + q * c[k], 0) / Math.hypot(...v);
      assert.ok(cos > 0.99, `archetype ${a.id}: cos ${cos}`);
    }
  });

  it('the same request gives the same record and bytes; another responder computes the same map and centroids', async () => {
    const size = await t.service.store.log.size();
    const again = await map({ bbox: BOX, k: 3 });
    assert.deepEqual([again.body.token, again.body.artifact_cid, again.body.derivation_cid], [first.token, first.artifact_cid, first.derivation_cid]);
    assert.equal(await t.service.store.log.size(), size);
    const other = await build({ upstreams: up.upstreams }, {}, { now: () => TESSERA_NOW });
    try {
      const before = await other.service.store.log.size();
      const [o, o2] = (await Promise.all([map({ bbox: BOX, k: 3 }, other), map({ bbox: BOX, k: 3 }, other)])).map((x) => x.body);
      assert.equal(o2.derivation_cid, o.derivation_cid, 'identical requests at once are made once');
      assert.equal(await other.service.store.log.size(), before + 2, 'one field record and one map record');
      assert.equal(o.artifact_cid, first.artifact_cid);
      assert.deepEqual(o.archetypes, first.archetypes);
      assert.deepEqual([o.inertia, o.iterations, o.aoi_cid], [first.inertia, first.iterations, first.aoi_cid]);
      assert.ok((await get(o.artifact_url, other)).bytes.equals(bytes));
    } finally {
      await other.close();
    }
  });

  it('signs a record pinning region, field, method, centroids and map; the receipt binds it and the field record', async () => {
    const rc = first.receipt;
    assert.deepEqual(rc.field, { aoi_cid: first.aoi_cid, derivation_cid: first.derivation_cid });
    assert.deepEqual(rc.fact_cids, [first.derivation_cid, first.field.derivation_cid]);
    const v = P.verifyReceipt(rc, { publicKey: t.service.keys.publicKeyB32 });
    assert.equal(v.valid, true, JSON.stringify(v));
    assert.equal(v.field_bound, true);
    assert.equal(verifyResponse(first, { publicKey: t.service.keys.publicKeyB32 }).valid, true);
    assert.equal(first.token, `svc:archetypes:${first.aoi_cid}:3:${first.derivation_cid}`);
    assert.equal(first.aoi_cid, P.anchorId({ kind: 'bbox', ...first.region.bbox }), 'a box region is anchored as tessera_field anchors the box');
    const rec = (await post('/v1/memory_token/resolve', { token: first.record })).body.fact;
    assert.equal(P.factCid(rec), first.derivation_cid);
    const val = rec.value;
    assert.deepEqual([val.recipe, val.result, val.k, val.year, val.region.kind], ['region_archetype_map@1', 'map', 3, 2025, 'bbox']);
    assert.deepEqual(val.field, { derivation_cid: first.field.derivation_cid, artifact_cid: first.field.artifact_cid, aoi_cid: first.aoi_cid });
    assert.deepEqual(val.archetypes, first.archetypes);
    assert.deepEqual(val.artifact, { cid: first.artifact_cid, media_type: GRID_MEDIA_TYPE, bytes: first.bytes });
    // The field it read is the tessera_field of the region's box.
    const f = await t.app.inject({
      method: 'GET',
      url: `/v1/tessera_field?min_lat=${first.region.bbox.min_lat}&min_lng=${first.region.bbox.min_lng}&max_lat=${first.region.bbox.max_lat}&max_lng=${first.region.bbox.max_lng}&year=2025`,
    });
    assert.equal(f.json().derivation_cid, first.field.derivation_cid);
  });
});

describe('region_archetype_map regions and bounds', () => {
  it('a polygon region: pixels outside it are NaN, and each zone is still one archetype', async () => {
    const a = centreOf(TESSERA_FINE.origin, 10, 90, 120);
    const b = centreOf(TESSERA_FINE.origin, 10, 250, 130);
    const c = centreOf(TESSERA_FINE.origin, 10, 170, 250);
    const polygon = {
      type: 'Polygon',
      coordinates: [
        [
          [a.lng, a.lat],
          [b.lng, b.lat],
          [c.lng, c.lat],
          [a.lng, a.lat],
        ],
      ],
    };
    const r = await map({ polygon, k: 3 });
    assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 600));
    assert.equal(r.body.region.kind, 'polygon');
    const q = (x: number) => Math.floor(x * 1e7 + 0.5) / 1e7;
    const ring = polygon.coordinates[0].map(([x, y]) => [q(x), q(y)]);
    assert.equal(r.body.aoi_cid, P.anchorId({ kind: 'polygon', polygons: [[ring]] }));
    const inside = (lat: number, lng: number) => {
      let o = false;
      for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
        const [xi, yi] = ring[i];
        const [xj, yj] = ring[j];
        if (yi > lat !== yj > lat && lng < ((xj - xi) * (lat - yi)) / (yj - yi) + xi) o = !o;
      }
      return o;
    };
    const grid = decodeGrid((await get(r.body.artifact_url)).bytes);
    const zones = zonesOf(r.body, inside);
    const ids = new Map<number, number>();
    const counts = [0, 0, 0];
    zones.forEach((z, p) => {
      if (z === null) return assert.ok(Number.isNaN(grid.values[p]));
      counts[z]++;
      if (!ids.has(grid.values[p])) ids.set(grid.values[p], z);
      assert.equal(ids.get(grid.values[p]), z);
    });
    assert.deepEqual(
      r.body.archetypes.map((x: any) => x.pixels),
      [...counts].sort((x, y) => y - x),
    );
  });

  it('k defaults to 6 and must lie in 2..16', async () => {
    const box = fineBox(10, 10, 70, 70);
    const d = await map({ bbox: box });
    assert.equal(d.status, 200, JSON.stringify(d.body).slice(0, 400));
    assert.equal(d.body.k, 6);
    assert.equal(d.body.archetypes.length, 6);
    assert.equal(
      d.body.archetypes.reduce((n: number, a: any) => n + a.pixels, 0),
      d.body.valid_pixels,
    );
    for (const k of [1, 17, 2.5]) assert.equal((await map({ bbox: box, k })).status, 422, `k ${k}`);
    assert.equal((await map({ bbox: box, cells: [P.cellOf(45.05, 15.34)] })).status, 422, 'two region forms');
    assert.equal((await map({})).status, 422, 'no region');
    const limits = (await get('/v1/limits')).body.region_archetype_map;
    assert.deepEqual([limits.k, limits.min_pixels_per_archetype, limits.max_iterations], [{ min: 2, max: 16, default: 6 }, 10, 50]);
  });

  it('a region with too few pixels is a signed inconclusive answer with the count observed', async () => {
    const p = centreOf(TESSERA_FINE.origin, 10, 150, 150);
    const cells = [P.cellOf(p.lat, p.lng), P.cellOf(p.lat + 0.0001, p.lng), P.cellOf(p.lat, p.lng + 0.00013)];
    const r = await map({ cells, k: 4 });
    assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 600));
    const b = r.body;
    assert.deepEqual([b.status, b.reason, b.required_pixels, b.region.kind], ['inconclusive', 'too_few_pixels', 40, 'cells']);
    assert.ok(b.observed_pixels >= 1 && b.observed_pixels <= 12, `${b.observed_pixels}`);
    assert.equal(b.aoi_cid, P.anchorId({ kind: 'cells', cells: [...new Set(cells)].sort() }));
    assert.ok(!('token' in b) && !('artifact_cid' in b));
    assert.ok(P.verifyReceipt(b.receipt, { publicKey: t.service.keys.publicKeyB32 }).field_bound);
    const rec = (await post('/v1/memory_token/resolve', { token: b.record })).body.fact.value;
    assert.deepEqual([rec.result, rec.reason, rec.valid_pixels, rec.required_pixels], ['inconclusive', 'too_few_pixels', b.observed_pixels, 40]);
  });

  it('a region without a published tile is an absence; a place resolves first', async () => {
    const r = await map({ place: 'Chartres', k: 3 });
    assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 600));
    assert.deepEqual([r.body.status, r.body.absence.reason, r.body.region.kind], ['absence', 'outside_coverage', 'bbox']);
    assert.match(r.body.region.place.label, /Chartres/);
    assert.equal(r.body.region.place.radius_m, 1000);
  });
});

describe('region_archetype_map resolve and rebuild', () => {
  let tiny: TestApp;
  before(async () => {
    tiny = await build({ upstreams: up.upstreams, artifactMaxBytes: 1 << 20 }, {}, { now: () => TESSERA_NOW });
  });
  after(async () => tiny?.close());

  it('an evicted map, and its evicted field, are rebuilt byte for byte from the records', async () => {
    const box = fineBox(110, 140, 150, 180);
    const m = (await map({ bbox: box, k: 3 }, tiny)).body;
    assert.equal(m.status, 'map', JSON.stringify(m).slice(0, 400));
    const original = (await get(m.artifact_url, tiny)).bytes;
    await tiny.service.store.artifacts.evict(m.artifact_cid);
    await tiny.service.store.artifacts.evict(m.field.artifact_cid);
    const gone = await get(m.artifact_url, tiny);
    assert.equal(gone.status, 404);
    assert.deepEqual(gone.body.details.rebuild, { method: 'POST', path: '/v1/region_archetype_map/resolve', body: { token: m.token } });
    const r = await post('/v1/region_archetype_map/resolve', { token: m.token }, tiny);
    assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 400));
    assert.equal(r.body.artifact.state, 'rebuilt');
    assert.deepEqual(r.body.field, m.field);
    assert.ok((await get(m.artifact_url, tiny)).bytes.equals(original));
    assert.equal((await get(`/v1/artifacts/${m.field.artifact_cid}`, tiny)).status, 200, 'the field was rebuilt on the way');
    assert.ok(P.verifyReceipt(r.body.receipt, { publicKey: tiny.service.keys.publicKeyB32 }).field_bound);
    assert.equal(verifyResponse(r.body).valid, true);
    const s = await post('/v1/region_archetype_map/resolve', { token: m.token }, tiny);
    assert.equal(s.body.artifact.state, 'stored');
    const wrong = await post('/v1/region_archetype_map/resolve', { token: m.token.replace(':3:', ':4:') }, tiny);
    assert.deepEqual([wrong.status, wrong.body.code], [409, 'token_claim_mismatch']);
    assert.equal((await post('/v1/region_archetype_map/resolve', { token: 'svc:archetypes:x' }, tiny)).status, 422);
  });
});
