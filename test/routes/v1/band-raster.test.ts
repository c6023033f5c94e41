/**
 * band_raster, raster_resolve and GET /v1/artifacts/<cid> over the Sentinel-2 fixture (a local
 * STAC + COG server in Earth Search's layout with known pixel formulas; docs/rasters.md):
 * exact reflectance of every pixel, georeferencing to within half a pixel, only the covering COG
 * blocks read, a third-party decode of the grid file in Python, the artifact route's caching and
 * ranges, eviction under a tiny SVC_ARTIFACT_MAX_BYTES and a byte-identical rebuild, the receipt
 * and its field segment under the protocol verifier, typed absences and the size cap, and MCP.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as P from '../../../src/protocol/index.js';
import { verifyResponse } from '../../../src/protocol/verify-response.js';
import { decodeGrid, GRID_HEADER_BYTES, GRID_MEDIA_TYPE } from '../../../src/primitives/rasters/grid-format.js';
import { build, type TestApp } from '../../support/app.js';
import { startRasterUpstreams, type RasterUpstreams } from '../../sources/fixtures/raster-upstreams.js';
import { S2_BBOX, S2_GRID, s2Dn, s2PointAt } from '../../sources/fixtures/raster-scenes.js';
import { writeGeoTiff } from '../../sources/fixtures/raster-tiff.js';
import { blockRanges, expectedReflectance, fixturePixel, pixelBox, RASTER_NOW, s2AssetPath, servedBytes, servedRanges, utm33 } from '../../support/rasters.js';

let up: RasterUpstreams;
let t: TestApp;
const RED_B = s2AssetPath(1, 'B04');
const BOX = pixelBox(100, 100, 160, 150);

async function post(app: TestApp, url: string, payload: unknown) {
  const r = await app.app.inject({ method: 'POST', url, payload: payload as object });
  return { status: r.statusCode, body: r.json() };
}
/** Drops the COG readers' header and block caches (a cold read). */
const clearReaders = (app: TestApp) => app.service.materializers.list().forEach((m) => (m as { reader?: { clear(): void } }).reader?.clear());
const raster = (payload: unknown, app = t) => post(app, '/v1/band_raster', payload);
async function get(url: string, headers: Record<string, string> = {}, app = t) {
  const r = await app.app.inject({ method: 'GET', url, headers });
  return { status: r.statusCode, headers: r.headers, bytes: r.rawPayload, body: r.headers['content-type']?.toString().startsWith('application/json') ? r.json() : undefined };
}

before(async () => {
  up = await startRasterUpstreams(['s2']);
  // The fixture's COGs compress to a few KB, less than the reader's first (header) request: item
  // B's red asset is served instead as an uncompressed COG of the same pixels (256 × 256 tiles of
  // 128 KiB), so what a window costs in bytes shows.
  up.files.set(
    RED_B,
    writeGeoTiff(
      {
        width: 512,
        height: 512,
        type: 'u16',
        epsg: 32633,
        origin: S2_GRID.origin,
        pixel: [10, 10],
        nodata: 0,
        values: (c, r) => s2Dn(1, 'red', c, r),
      },
      { block: 256, compression: 1 },
    ),
  );
  t = await build({ upstreams: up.upstreams }, {}, { now: () => RASTER_NOW });
});
after(async () => {
  await t?.close();
  await up?.close();
});

describe('band_raster over the fixture scenes', () => {
  let first: any;
  let bytes: Buffer;

  it("returns the fixture's reflectance for every pixel of the window, DN × 0.0001 − 0.1 as float32, from the least cloudy scene", async () => {
    up.reset();
    const r = await raster({ bbox: BOX, band: 's2.B04' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    first = r.body;
    assert.equal(first.status, 'raster');
    // Items A (65.2 % cloud) and B (8.5 %) lie within 15 days of 2026-11-22: B is chosen.
    assert.equal(first.scene.id, 'S2B_33TWL_20261110_0_L2A');
    assert.deepEqual([first.epsg, first.pixel_size_m, first.media_type, first.nodata], [32633, 10, GRID_MEDIA_TYPE, 'NaN']);
    const g = await get(first.artifact_url);
    assert.equal(g.status, 200);
    bytes = g.bytes;
    assert.equal(bytes.length, GRID_HEADER_BYTES + 4 * first.width * first.height);
    assert.equal(first.bytes, bytes.length);
    assert.equal(first.artifact_cid, P.b32encode(P.blake3(bytes)), 'artifact_cid is b32 of BLAKE3 of the bytes');
    const grid = decodeGrid(bytes);
    assert.deepEqual([grid.width, grid.height, grid.epsg, [...grid.geotransform]], [first.width, first.height, 32633, first.geotransform]);
    // The window holds the box's pixels (100..160, 100..150) and at most one more on a side.
    const col0 = Math.round((grid.geotransform[0] - 497437) / 10);
    const row0 = Math.round((4985513 - grid.geotransform[3]) / 10);
    assert.ok(col0 <= 100 && row0 <= 100 && col0 + grid.width >= 161 && row0 + grid.height >= 151, JSON.stringify({ col0, row0, w: grid.width, h: grid.height }));
    assert.ok(grid.width <= 63 && grid.height <= 53);
    for (let y = 0; y < grid.height; y++) {
      for (let x = 0; x < grid.width; x++) {
        const want = expectedReflectance(1, 'red', col0 + x, row0 + y, -0.1);
        assert.equal(grid.values[y * grid.width + x], want, `pixel ${x},${y}`);
      }
    }
  });

  it("is georeferenced: every sampled pixel centre maps back to the fixture pixel's lat/lng within half a pixel", () => {
    const gt = first.geotransform;
    for (const [x, y] of [
      [0, 0],
      [first.width - 1, 0],
      [0, first.height - 1],
      [17, 23],
      [first.width - 1, first.height - 1],
    ]) {
      const cx = gt[0] + (x + 0.5) * gt[1];
      const cy = gt[3] + (y + 0.5) * gt[5];
      const [lng, lat] = utm33.inverse([cx, cy]);
      const [col, row] = fixturePixel(lat, lng);
      const truth = s2PointAt(col, row);
      const [tx, ty] = utm33.forward([truth.lng, truth.lat]);
      assert.ok(Math.abs(tx - cx) < 5 && Math.abs(ty - cy) < 5, `pixel ${x},${y}: ${cx},${cy} vs ${tx},${ty}`);
      // The value there is that fixture pixel's.
      assert.equal(decodeGrid(bytes).values[y * first.width + x], expectedReflectance(1, 'red', col, row, -0.1));
    }
    // The box's corners fall inside the grid.
    for (const [lat, lng] of [
      [BOX.min_lat, BOX.min_lng],
      [BOX.max_lat, BOX.max_lng],
      [BOX.min_lat, BOX.max_lng],
      [BOX.max_lat, BOX.min_lng],
    ]) {
      const [x, y] = utm33.forward([lng, lat]);
      const c = (x - gt[0]) / gt[1];
      const r = (y - gt[3]) / gt[5];
      assert.ok(c >= 0 && c < first.width && r >= 0 && r < first.height, `corner ${lat},${lng} at ${c},${r}`);
    }
  });

  it('reads only the COG blocks that cover the window (plus the header), never the whole file', async () => {
    const file = up.files.get(RED_B)!;
    const col0 = Math.round((first.geotransform[0] - 497437) / 10);
    const row0 = Math.round((4985513 - first.geotransform[3]) / 10);
    const blocks = await blockRanges(up, RED_B, { col0, row0, width: first.width, height: first.height });
    assert.equal(blocks.length, 1, 'the window lies in one 256 × 256 block');
    const ranges = servedRanges(up, RED_B);
    assert.deepEqual(
      ranges.filter(([a]) => a !== 0),
      blocks,
      'block requests are exactly the covering blocks',
    );
    const served = servedBytes(up, RED_B);
    assert.ok(served < file.length, `${served} bytes read of a ${file.length}-byte file`);
    // A window across the four full-resolution blocks reads those four and nothing else (from cold caches).
    clearReaders(t);
    up.reset();
    const wide = await raster({ bbox: pixelBox(230, 230, 280, 280), band: 's2.B04' });
    assert.equal(wide.status, 200, JSON.stringify(wide.body));
    const c0 = Math.round((wide.body.geotransform[0] - 497437) / 10);
    const r0 = Math.round((4985513 - wide.body.geotransform[3]) / 10);
    const four = await blockRanges(up, RED_B, { col0: c0, row0: r0, width: wide.body.width, height: wide.body.height });
    assert.equal(four.length, 4);
    assert.deepEqual(
      servedRanges(up, RED_B)
        .filter(([a]) => a !== 0)
        .sort((a, b) => a[0] - b[0]),
      [...four].sort((a, b) => a[0] - b[0]),
    );
    assert.equal(up.count('/earth-search/v1/search', 'POST'), 1, 'one STAC search');
  });

  it('a third party decodes the documented layout (Python + numpy) and gets the same values and georeferencing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-grid-'));
    try {
      const file = join(dir, 'grid.bin');
      writeFileSync(file, bytes);
      // Written from docs/rasters.md only: 80-byte little-endian header, then float32 rows from the north.
      const script = `
import json, struct, sys
import numpy as np
b = open(sys.argv[1], 'rb').read()
magic, version, width, height, epsg = b[0:8], *struct.unpack('<IIII', b[8:24])
gt = struct.unpack('<6d', b[24:72])
nodata_bits, reserved = struct.unpack('<II', b[72:80])
a = np.frombuffer(b, dtype='<f4', offset=80).reshape(height, width)
print(json.dumps({'magic': magic.decode('latin1'), 'version': version, 'width': width, 'height': height, 'epsg': epsg, 'gt': list(gt),
  'nodata_bits': nodata_bits, 'reserved': reserved, 'nan': int(np.isnan(a).sum()),
  'samples': [[int(r), int(c), float(a[r, c])] for r, c in [(0, 0), (0, width - 1), (height - 1, 0), (7, 11), (height - 1, width - 1)]],
  'sum': float(a.astype('<f8').sum())}))
`;
      const py = spawnSync('python3', ['-c', script, file], { encoding: 'utf8' });
      assert.equal(py.status, 0, py.stderr);
      const out = JSON.parse(py.stdout);
      assert.deepEqual([out.magic, out.version, out.width, out.height, out.epsg, out.gt], ['SVCGRID\u0000', 1, first.width, first.height, 32633, first.geotransform]);
      assert.deepEqual([out.nodata_bits, out.reserved, out.nan], [0x7fc00000, 0, 0]);
      const col0 = Math.round((out.gt[0] - 497437) / 10);
      const row0 = Math.round((4985513 - out.gt[3]) / 10);
      for (const [r, c, v] of out.samples) assert.equal(v, expectedReflectance(1, 'red', col0 + c, row0 + r, -0.1), `python ${r},${c}`);
      let sum = 0;
      for (const v of decodeGrid(bytes).values) sum += v;
      assert.ok(Math.abs(out.sum - sum) < 1e-6, `${out.sum} vs ${sum}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('signs a derivation record pinning scene, asset, window and artifact; the receipt verifies with its field segment', async () => {
    const rc = first.receipt;
    assert.deepEqual(rc.field, { aoi_cid: first.aoi_cid, derivation_cid: first.derivation_cid });
    assert.deepEqual(rc.fact_cids, [first.derivation_cid]);
    const v = P.verifyReceipt(rc, { publicKey: t.service.keys.publicKeyB32 });
    assert.equal(v.valid, true, JSON.stringify(v));
    assert.equal(v.field_bound, true);
    assert.equal(P.verifyReceipt({ ...rc, field: { ...rc.field, derivation_cid: 'a'.repeat(52) } }).valid, false, 'the field segment is signed');
    assert.equal(P.verifyReceipt({ ...rc, field: undefined }).valid, false);
    const whole = verifyResponse(first, { publicKey: t.service.keys.publicKeyB32 });
    assert.equal(whole.valid, true, JSON.stringify(whole.errors));
    // The token: svc:raster:<aoi_cid>:<band>:<tslot>:<derivation_cid>, tslot of 2026-11-10 in the 30-day tempo.
    assert.equal(first.token, `svc:raster:${first.aoi_cid}:s2.B04:${first.tslot}:${first.derivation_cid}`);
    assert.equal(first.tslot, 692);
    assert.equal(first.aoi_cid, P.anchorId({ kind: 'bbox', min_lat: first.bbox.min_lat, min_lng: first.bbox.min_lng, max_lat: first.bbox.max_lat, max_lng: first.bbox.max_lng }));
    // The record, through the generic fact token route.
    const f = await post(t, '/v1/memory_token/resolve', { token: first.record });
    assert.equal(f.status, 200, JSON.stringify(f.body));
    const rec = f.body.fact;
    assert.equal(rec.fact_cid, first.derivation_cid);
    assert.deepEqual([rec.band, rec.kind, rec.tslot, rec.signer], ['raster.derivation', 'primary', 0, t.service.keys.publicKeyB32]);
    assert.equal(P.factCid(rec), first.derivation_cid);
    const val = rec.value;
    assert.deepEqual(
      [val.recipe, val.band, val.scene.id, val.scene.asset, val.scene.captured_at, val.scene.cloud_cover],
      ['band_raster@1', 's2.B04', 'S2B_33TWL_20261110_0_L2A', 'red', '2026-11-10T10:03:15Z', 8.5],
    );
    assert.equal(val.scene.href, `${up.origin}${RED_B}`);
    assert.deepEqual([val.reflectance.scale, val.reflectance.offset], [0.0001, -0.1]);
    assert.deepEqual(val.grid.geotransform, first.geotransform);
    assert.deepEqual([val.grid.epsg, val.grid.width, val.grid.height], [32633, first.width, first.height]);
    assert.deepEqual(val.artifact, { cid: first.artifact_cid, media_type: GRID_MEDIA_TYPE, bytes: first.bytes });
    assert.deepEqual(val.source_versions, { earth_search_s2: '05.11' });
  });

  it('lists cell anchors: cells of the service grid in the box with the pixels each overlaps, without writing a fact', async () => {
    const c = first.cells;
    assert.ok(c.cells_in_box > c.listed.length && c.truncated);
    assert.ok(c.listed.length > 100 && c.listed.length <= 256);
    for (const a of c.listed.slice(0, 40)) {
      const centre = P.cellCenter(a.cell);
      assert.ok(centre.lat >= BOX.min_lat - 1e-6 && centre.lat <= BOX.max_lat + 1e-6 && centre.lng >= BOX.min_lng - 1e-6 && centre.lng <= BOX.max_lng + 1e-6);
      const [x, y] = utm33.forward([centre.lng, centre.lat]);
      const col = Math.floor((x - first.geotransform[0]) / 10);
      const row = Math.floor((first.geotransform[3] - y) / 10);
      const w = a.window;
      assert.ok(col >= w.col0 && col < w.col0 + w.width && row >= w.row0 && row < w.row0 + w.height, `${a.cell} centre pixel ${col},${row} in ${JSON.stringify(w)}`);
      assert.ok(w.width <= 2 && w.height <= 2);
    }
    for (const a of c.listed.slice(0, 5)) assert.deepEqual(await t.service.store.bandsAt(a.cell), [], 'no fact was materialized at an anchor cell');
  });

  it('the same box and band again is the same token and record: nothing new in the log', async () => {
    const size = await t.service.store.log.size();
    const [a, b] = await Promise.all([raster({ bbox: BOX, band: 's2.B04' }), raster({ bbox: BOX, band: 's2.B04' })]);
    assert.equal(a.body.token, first.token);
    assert.equal(b.body.token, first.token);
    assert.equal(await t.service.store.log.size(), size);
  });

  it('observed_on pins the scene near that day (item C of 2026-10-21, offset already applied upstream); B11 is read at its native 20 m', async () => {
    const c = await raster({ bbox: BOX, band: 's2.B04', observed_on: '2026-10-21' });
    assert.equal(c.status, 200, JSON.stringify(c.body));
    assert.equal(c.body.scene.id, 'S2A_33TWL_20261021_0_L2A');
    assert.notEqual(c.body.token, first.token);
    const grid = decodeGrid((await get(c.body.artifact_url)).bytes);
    const col0 = Math.round((grid.geotransform[0] - 497437) / 10);
    const row0 = Math.round((4985513 - grid.geotransform[3]) / 10);
    assert.equal(grid.values[5 * grid.width + 9], expectedReflectance(2, 'red', col0 + 9, row0 + 5, 0));
    const s = await raster({ bbox: BOX, band: 's2.B11' });
    assert.equal(s.status, 200, JSON.stringify(s.body));
    assert.equal(s.body.pixel_size_m, 20);
    const g20 = decodeGrid((await get(s.body.artifact_url)).bytes);
    const c20 = Math.round((g20.geotransform[0] - 497437) / 20);
    const r20 = Math.round((4985513 - g20.geotransform[3]) / 20);
    assert.ok(g20.width <= 32 && g20.width >= 30, `${g20.width}`);
    assert.equal(g20.values[3 * g20.width + 4], Math.fround(s2Dn(1, 'swir16', c20 + 4, r20 + 3) * 0.0001 - 0.1));
  });

  it('no scene is a typed absence, never zeros: nothing near the date, a box no footprint covers, the ocean', async () => {
    const old = await raster({ bbox: BOX, band: 's2.B04', observed_on: '2024-01-01' });
    assert.equal(old.status, 200, JSON.stringify(old.body));
    assert.deepEqual([old.body.status, old.body.absence.reason], ['absence', 'no_scene_near_date']);
    assert.ok(!('token' in old.body) && !('artifact_cid' in old.body));
    assert.ok(P.verifyReceipt(old.body.receipt).valid);
    const [w, s, e] = S2_BBOX;
    const edge = await raster({ bbox: { min_lat: s + 0.01, max_lat: s + 0.02, min_lng: e - 0.008, max_lng: e + 0.002 }, band: 's2.B04' });
    assert.deepEqual([edge.body.status, edge.body.absence?.reason], ['absence', 'outside_coverage'], JSON.stringify(edge.body));
    const sea = await raster({ bbox: { min_lat: 44, max_lat: 44.01, min_lng: 13.5, max_lng: 13.51 }, band: 's2.B02' });
    assert.deepEqual([sea.body.status, sea.body.absence?.reason], ['absence', 'no_scene_near_date']);
    assert.ok(w < e);
  });

  it('refuses a box past 512 pixels per side, naming the cap, before any upstream request; and malformed input', async () => {
    up.reset();
    const big = await raster({ bbox: { min_lat: 45, max_lat: 45.01, min_lng: 15, max_lng: 15.07 }, band: 's2.B04' });
    assert.equal(big.status, 422, JSON.stringify(big.body));
    assert.equal(big.body.code, 'invalid_argument');
    assert.equal(big.body.details.cap, 'band_raster.max_pixels_per_side');
    assert.equal(big.body.details.max_pixels_per_side, 512);
    assert.match(big.body.message, /512/);
    assert.equal(up.requests.length, 0);
    // At 20 m the same 5.5 km is within the cap.
    assert.equal((await raster({ bbox: { min_lat: 45, max_lat: 45.01, min_lng: 15, max_lng: 15.07 }, band: 's2.B12' })).body.code, undefined);
    const limits = await get('/v1/limits');
    assert.equal(limits.body.band_raster.max_pixels_per_side, 512);
    assert.equal(limits.body.artifacts.max_bytes, t.service.config.artifactMaxBytes);
    assert.equal((await raster({ bbox: BOX, band: 's2.B05' })).status, 422);
    assert.equal((await raster({ bbox: { ...BOX, max_lat: BOX.min_lat }, band: 's2.B04' })).status, 422);
    assert.equal((await raster({ bbox: BOX, band: 's2.B04', observed_on: '2026-02-30' })).status, 422);
    assert.equal((await raster({ bbox: BOX, band: 's2.B04', observed_on: '2027-01-01' })).status, 422);
    assert.equal((await raster({ bbox: { min_lat: 45 }, band: 's2.B04' })).status, 422);
  });
});

describe('GET /v1/artifacts/<cid>', () => {
  let r: any;
  let whole: Buffer;
  before(async () => {
    r = (await raster({ bbox: BOX, band: 's2.B04' })).body;
    whole = (await get(r.artifact_url)).bytes;
  });

  it('serves the bytes immutable, with the media type and ETag "<cid>"; If-None-Match answers 304', async () => {
    const g = await get(r.artifact_url);
    assert.equal(g.status, 200);
    assert.equal(g.headers['content-type'], GRID_MEDIA_TYPE);
    assert.equal(g.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.equal(g.headers.etag, `"${r.artifact_cid}"`);
    assert.equal(g.headers['accept-ranges'], 'bytes');
    assert.equal(Number(g.headers['content-length']), r.bytes);
    const nm = await get(r.artifact_url, { 'if-none-match': `"${r.artifact_cid}"` });
    assert.equal(nm.status, 304);
    assert.equal(nm.bytes.length, 0);
    assert.equal(nm.headers.etag, `"${r.artifact_cid}"`);
    assert.equal((await get(r.artifact_url, { 'if-none-match': `"other", W/"${r.artifact_cid}"` })).status, 304);
    assert.equal((await get(r.artifact_url, { 'if-none-match': '"other"' })).status, 200);
    const head = await t.app.inject({ method: 'HEAD', url: r.artifact_url });
    assert.equal(head.statusCode, 200);
    assert.equal(head.headers.etag, `"${r.artifact_cid}"`);
  });

  it('answers ranges with 206 and Content-Range, and 416 past the end', async () => {
    const h = await get(r.artifact_url, { range: 'bytes=0-79' });
    assert.equal(h.status, 206);
    assert.equal(h.headers['content-range'], `bytes 0-79/${r.bytes}`);
    assert.deepEqual(h.bytes, whole.subarray(0, 80));
    const tail = await get(r.artifact_url, { range: 'bytes=-8' });
    assert.deepEqual([tail.status, tail.headers['content-range']], [206, `bytes ${r.bytes - 8}-${r.bytes - 1}/${r.bytes}`]);
    assert.deepEqual(tail.bytes, whole.subarray(r.bytes - 8));
    const open = await get(r.artifact_url, { range: `bytes=${r.bytes - 3}-` });
    assert.deepEqual([open.status, open.bytes.length], [206, 3]);
    const over = await get(r.artifact_url, { range: `bytes=100-${r.bytes + 1000}` });
    assert.deepEqual([over.status, over.headers['content-range']], [206, `bytes 100-${r.bytes - 1}/${r.bytes}`]);
    const past = await get(r.artifact_url, { range: `bytes=${r.bytes}-` });
    assert.equal(past.status, 416);
    assert.equal(past.headers['content-range'], `bytes */${r.bytes}`);
    assert.equal(past.body.code, 'invalid_argument');
    assert.equal((await get(r.artifact_url, { range: 'bytes=0-1,5-9' })).status, 200, 'several ranges: the whole');
    assert.equal((await get(r.artifact_url, { range: 'bytes=0-9', 'if-range': '"stale"' })).status, 200, 'If-Range with another validator: the whole');
    assert.equal((await get(r.artifact_url, { range: 'bytes=0-9', 'if-range': `"${r.artifact_cid}"` })).status, 206);
  });

  it('an unknown cid is a typed 404 saying how to rebuild; a malformed one is 422', async () => {
    const u = await get(`/v1/artifacts/${'a'.repeat(52)}`);
    assert.equal(u.status, 404);
    assert.equal(u.body.code, 'artifact_not_found');
    assert.equal(u.body.schema, 'svc.error.v1');
    assert.equal(u.body.details.state, 'unknown');
    assert.equal(u.body.details.rebuild.path, '/v1/raster/resolve');
    assert.equal((await get('/v1/artifacts/NOT-A-CID')).status, 422);
  });
});

describe('raster_resolve, eviction and rebuild', () => {
  let tiny: TestApp;
  before(async () => {
    tiny = await build({ upstreams: up.upstreams, artifactMaxBytes: 65_536 }, {}, { now: () => RASTER_NOW });
  });
  after(async () => tiny?.close());

  it('resolves a token to its signed record and stored artifact, with a verifying receipt', async () => {
    const m = (await raster({ bbox: BOX, band: 's2.B04' })).body;
    const r = await post(t, '/v1/raster/resolve', { token: m.token });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.artifact, { cid: m.artifact_cid, media_type: GRID_MEDIA_TYPE, bytes: m.bytes, url: m.artifact_url, state: 'stored' });
    assert.equal(r.body.record.fact_cid, m.derivation_cid);
    assert.deepEqual(r.body.receipt.field, { aoi_cid: m.aoi_cid, derivation_cid: m.derivation_cid });
    assert.equal(P.verifyReceipt(r.body.receipt, { publicKey: t.service.keys.publicKeyB32 }).valid, true);
    assert.equal(P.verifyReceipt(r.body.record.receipt).valid, true);
    assert.equal(verifyResponse(r.body).valid, true);
    const bad = (x: unknown) => post(t, '/v1/raster/resolve', { token: x });
    assert.equal((await bad('svc:raster:x:y:1:z')).status, 422);
    assert.equal((await bad(m.token.replace(':692:', ':0692:'))).status, 422);
    const unknown = await bad(`svc:raster:${m.aoi_cid}:s2.B04:692:${'a'.repeat(52)}`);
    assert.deepEqual([unknown.status, unknown.body.code], [404, 'cid_not_found']);
    const wrong = await bad(m.token.replace(':s2.B04:', ':s2.B08:'));
    assert.deepEqual([wrong.status, wrong.body.code], [409, 'token_claim_mismatch']);
    // A memory token route points raster tokens here.
    assert.match((await post(t, '/v1/memory_token/resolve', { token: m.token })).body.message, /raster\/resolve/);
  });

  it('under a tiny SVC_ARTIFACT_MAX_BYTES a newer raster evicts the older; GET says how to rebuild; resolve rebuilds it byte for byte', async () => {
    const one = (await raster({ bbox: pixelBox(10, 10, 109, 109), band: 's2.B04' }, tiny)).body;
    assert.equal(one.status, 'raster', JSON.stringify(one));
    const original = (await get(one.artifact_url, {}, tiny)).bytes;
    assert.ok(original.length > 32_768 && original.length < 65_536, `${original.length}`);
    const two = (await raster({ bbox: pixelBox(300, 300, 399, 399), band: 's2.B04' }, tiny)).body;
    assert.equal(two.status, 'raster');
    const gone = await get(one.artifact_url, {}, tiny);
    assert.equal(gone.status, 404);
    assert.equal(gone.body.code, 'artifact_not_found');
    assert.equal(gone.body.details.state, 'evicted');
    assert.deepEqual(gone.body.details.rebuild, { method: 'POST', path: '/v1/raster/resolve', body: { token: one.token } });
    up.reset();
    const r = await post(tiny, gone.body.details.rebuild.path, gone.body.details.rebuild.body);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.artifact.state, 'rebuilt');
    assert.equal(up.count('/earth-search/v1/search'), 0, 'a rebuild reads the pinned asset: no scene search');
    const again = await get(one.artifact_url, {}, tiny);
    assert.equal(again.status, 200);
    assert.ok(again.bytes.equals(original), 'rebuilt bytes are identical');
    assert.equal((await get(two.artifact_url, {}, tiny)).status, 404, 'the rebuild evicted the other one');
    assert.equal((await post(tiny, '/v1/raster/resolve', { token: one.token })).body.artifact.state, 'stored');
  });

  it('a rebuild whose upstream bytes changed is refused: nothing is stored', async () => {
    const one = (await raster({ bbox: pixelBox(20, 300, 119, 399), band: 's2.B08' }, tiny)).body;
    await tiny.service.store.artifacts.evict(one.artifact_cid);
    up.switches = { corrupt: { prefix: '/sentinel-cogs/', mode: 'blocks' } };
    clearReaders(tiny);
    try {
      const r = await post(tiny, '/v1/raster/resolve', { token: one.token });
      assert.equal(r.status, 502, JSON.stringify(r.body));
      assert.equal(r.body.code, 'source_format_mismatch');
    } finally {
      up.reset();
    }
    assert.equal((await get(one.artifact_url, {}, tiny)).status, 404);
  });
});

describe('MCP', () => {
  let base: string;
  before(async () => {
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });

  it('band_raster and raster_resolve are tools of /mcp/full (not of /mcp) and answer as REST does', async () => {
    const c = new Client({ name: 'svc-test', version: '0.0.1' });
    await c.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp/full`)));
    const names = (await c.listTools()).tools.map((x) => x.name);
    assert.ok(names.includes('svc_band_raster') && names.includes('svc_raster_resolve'));
    const res: any = await c.callTool({ name: 'svc_band_raster', arguments: { bbox: BOX, band: 's2.B04' } });
    assert.equal(res.isError, undefined, JSON.stringify(res));
    const rest = (await raster({ bbox: BOX, band: 's2.B04' })).body;
    assert.equal(res.structuredContent.token, rest.token);
    assert.equal(res.structuredContent.artifact_cid, rest.artifact_cid);
    assert.ok(P.verifyReceipt(res.structuredContent.receipt).field_bound);
    const rr: any = await c.callTool({ name: 'svc_raster_resolve', arguments: { token: rest.token } });
    assert.equal(rr.structuredContent.artifact.cid, rest.artifact_cid);
    const big: any = await c.callTool({ name: 'svc_band_raster', arguments: { bbox: { min_lat: 45, max_lat: 45.01, min_lng: 15, max_lng: 15.07 }, band: 's2.B04' } });
    assert.deepEqual([big.isError, big.structuredContent.code], [true, 'invalid_argument']);
    await c.close();
    const core = new Client({ name: 'svc-test', version: '0.0.1' });
    await core.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
    assert.ok(!(await core.listTools()).tools.some((x) => x.name === 'svc_band_raster'));
    await core.close();
  });
});
