/**
 * tessera_field and its resolve route over the GeoTessera fixture (a local server with the
 * provider's file layout and known values; docs/rasters.md): the artifact decodes (here and in
 * Python, per the documented layout) to exactly the fixture's int8 values and scales at every
 * pixel, georeferenced within half a pixel; a box across two tiles takes each pixel from the tile
 * its centre falls in; the caps refuse before reading embeddings; typed absences; the signed
 * record and the receipt's field segment verify; an evicted artifact is rebuilt byte for byte.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as P from '../../../src/protocol/index.js';
import { verifyResponse } from '../../../src/protocol/verify-response.js';
import { decodeField, FIELD_HEADER_BYTES, FIELD_MEDIA_TYPE } from '../../../src/primitives/rasters/tessera-format.js';
import { build, type TestApp } from '../../support/app.js';
import { startRasterUpstreams, type RasterUpstreams } from '../../sources/fixtures/raster-upstreams.js';
import { TESSERA_FINE, TESSERA_TILES, tesseraFineQ, tesseraFineScale } from '../../sources/fixtures/raster-scenes.js';
import { centreOf, expectedAt, fineBox, gridBox, TESSERA_NOW, utm33 } from '../../support/area-embeddings.js';

let up: RasterUpstreams;
let t: TestApp;

type Box = { min_lat: number; min_lng: number; max_lat: number; max_lng: number };
const query = (b: Box, year: number | string = 2025) => `min_lat=${b.min_lat}&min_lng=${b.min_lng}&max_lat=${b.max_lat}&max_lng=${b.max_lng}&year=${year}`;
async function field(b: Box, year: number | string = 2025, app = t) {
  const r = await app.app.inject({ method: 'GET', url: `/v1/tessera_field?${query(b, year)}` });
  return { status: r.statusCode, body: r.json() };
}
async function post(url: string, payload: unknown, app = t) {
  const r = await app.app.inject({ method: 'POST', url, payload: payload as object });
  return { status: r.statusCode, body: r.json() };
}
async function get(url: string, app = t) {
  const r = await app.app.inject({ method: 'GET', url });
  return { status: r.statusCode, bytes: r.rawPayload, headers: r.headers, body: r.headers['content-type']?.toString().startsWith('application/json') ? r.json() : undefined };
}
/** Embedding reads (ranges not starting at byte 0 of a .npy). */
const elementReads = () => up.requests.filter((r) => r.path.endsWith('.npy') && !/^bytes=0-/.test(r.range ?? ''));
const clearReaders = (app: TestApp) =>
  app.service.materializers.list().forEach((m) => {
    const c = m as { cog?: { clear(): void }; npy?: unknown };
    if (c.npy) c.cog?.clear();
  });

before(async () => {
  up = await startRasterUpstreams(['tessera']);
  t = await build({ upstreams: up.upstreams }, {}, { now: () => TESSERA_NOW });
});
after(async () => {
  await t?.close();
  await up?.close();
});

describe('tessera_field on the 10 m tile', () => {
  const BOX = fineBox(1, 1, 100, 60);
  let first: any;
  let bytes: Buffer;

  it("returns exactly the fixture's int8 values and scales at every pixel, in the tile's own grid", async () => {
    up.reset();
    const r = await field(BOX);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    first = r.body;
    assert.equal(first.status, 'field');
    assert.deepEqual([first.epsg, first.pixel_size_m, first.media_type, first.channels, first.scales_per_pixel], [32633, 10, FIELD_MEDIA_TYPE, 128, 1]);
    assert.deepEqual(first.tiles, [{ tile: TESSERA_FINE.name, pixels: first.width * first.height, lattice: 'shared' }]);
    const g = await get(first.artifact_url);
    assert.equal(g.status, 200);
    assert.equal(g.headers['content-type'], FIELD_MEDIA_TYPE);
    bytes = g.bytes;
    assert.equal(bytes.length, FIELD_HEADER_BYTES + first.width * first.height * (128 + 4));
    assert.equal(first.artifact_cid, P.b32encode(P.blake3(bytes)));
    const f = decodeField(bytes);
    assert.deepEqual([f.width, f.height, f.epsg, [...f.geotransform]], [first.width, first.height, 32633, first.geotransform]);
    const col0 = (f.geotransform[0] - TESSERA_FINE.origin[0]) / 10;
    const row0 = (TESSERA_FINE.origin[1] - f.geotransform[3]) / 10;
    assert.ok(Number.isInteger(col0) && Number.isInteger(row0) && col0 <= 1 && row0 <= 1 && col0 + f.width >= 101 && row0 + f.height >= 61, JSON.stringify({ col0, row0, w: f.width, h: f.height }));
    let masked = 0;
    for (let y = 0; y < f.height; y++) {
      for (let x = 0; x < f.width; x++) {
        const p = y * f.width + x;
        const [c, rr] = [col0 + x, row0 + y];
        if (tesseraFineScale(rr, c) === 0) {
          masked++;
          assert.ok(Number.isNaN(f.s[p]), `masked pixel ${x},${y} has no embedding`);
          assert.ok(f.q.subarray(p * 128, p * 128 + 128).every((v) => v === 0));
          continue;
        }
        assert.equal(f.s[p], tesseraFineScale(rr, c), `scale ${x},${y}`);
        for (let k = 0; k < 128; k++) if (f.q[p * 128 + k] !== tesseraFineQ(rr, c, k)) assert.fail(`q ${x},${y},${k}`);
      }
    }
    let want = 0;
    for (let y = 0; y < f.height; y++) for (let x = 0; x < f.width; x++) if (tesseraFineScale(row0 + y, col0 + x) === 0) want++;
    assert.ok(masked > 0 && masked === want, 'part of the masked block lies in the box');
    assert.equal(first.valid_pixels, f.width * f.height - masked);
    // Only the covering rows were read: the embedding bytes fetched stay near the window's, far below the file.
    const file = up.files.get(`/tessera/v1/global_0.1_degree_representation/2025/${TESSERA_FINE.name}/${TESSERA_FINE.name}.npy`)!;
    const read = elementReads()
      .filter((x) => x.path.endsWith(`${TESSERA_FINE.name}.npy`))
      .reduce((n, x) => {
        const [a, b] = x.range!.slice(6).split('-').map(Number);
        return n + b - a + 1;
      }, 0);
    assert.ok(read < file.length / 4, `${read} of ${file.length} bytes`);
  });

  it('is georeferenced: pixel centres map back to the fixture pixel within half a pixel; the box lies inside the grid', () => {
    const gt = first.geotransform;
    for (const [x, y] of [
      [0, 0],
      [first.width - 1, 0],
      [0, first.height - 1],
      [37, 21],
      [first.width - 1, first.height - 1],
    ]) {
      const cx = gt[0] + (x + 0.5) * gt[1];
      const cy = gt[3] + (y + 0.5) * gt[5];
      const [lng, lat] = utm33.inverse([cx, cy]);
      const [fx, fy] = utm33.forward([lng, lat]);
      const col = Math.floor((fx - TESSERA_FINE.origin[0]) / 10);
      const row = Math.floor((TESSERA_FINE.origin[1] - fy) / 10);
      const truth = centreOf(TESSERA_FINE.origin, 10, col, row);
      const [tx, ty] = utm33.forward([truth.lng, truth.lat]);
      assert.ok(Math.abs(tx - cx) < 5 && Math.abs(ty - cy) < 5, `pixel ${x},${y}`);
      if (tesseraFineScale(row, col) > 0) assert.equal(decodeField(bytes).q[(y * first.width + x) * 128 + 5], tesseraFineQ(row, col, 5));
    }
    for (const [lat, lng] of [
      [BOX.min_lat, BOX.min_lng],
      [BOX.max_lat, BOX.max_lng],
      [BOX.min_lat, BOX.max_lng],
      [BOX.max_lat, BOX.min_lng],
    ]) {
      const [x, y] = utm33.forward([lng, lat]);
      const c = (x - gt[0]) / gt[1];
      const r = (y - gt[3]) / gt[5];
      assert.ok(c >= 0 && c < first.width && r >= 0 && r < first.height, `corner ${lat},${lng}`);
    }
  });

  it('a third party decodes the documented layout (Python + numpy): the vector is int8 × scale as float32', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-field-'));
    try {
      const file = join(dir, 'field.bin');
      writeFileSync(file, bytes);
      // Written from docs/rasters.md only.
      const script = `
import json, struct, sys
import numpy as np
b = open(sys.argv[1], 'rb').read()
assert b[:8] == b'SVCEMB8\\0'
version, w, h, epsg = struct.unpack('<IIII', b[8:24])
gt = struct.unpack('<6d', b[24:72])
c, s, nodata = struct.unpack('<III', b[72:84])
q = np.frombuffer(b, dtype='i1', count=w * h * c, offset=96).reshape(h, w, c)
scales = np.frombuffer(b, dtype='<f4', count=w * h * s, offset=96 + w * h * c).reshape(h, w, s)
v = q.astype(np.float32) * scales
print(json.dumps({'version': version, 'w': w, 'h': h, 'epsg': epsg, 'gt': list(gt), 'c': c, 's': s, 'nodata': nodata,
  'nan_pixels': int(np.isnan(v).all(axis=2).sum()), 'v': [float(x) for x in v[10, 20, :4]], 'q': [int(x) for x in q[10, 20, :4]]}))
`;
      const py = spawnSync('python3', ['-c', script, file], { encoding: 'utf8' });
      assert.equal(py.status, 0, py.stderr);
      const out = JSON.parse(py.stdout);
      assert.deepEqual([out.version, out.w, out.h, out.epsg, out.gt, out.c, out.s, out.nodata], [1, first.width, first.height, 32633, first.geotransform, 128, 1, 0x7fc00000]);
      assert.equal(out.nan_pixels, first.width * first.height - first.valid_pixels);
      const col = (first.geotransform[0] - TESSERA_FINE.origin[0]) / 10 + 20;
      const row = (TESSERA_FINE.origin[1] - first.geotransform[3]) / 10 + 10;
      assert.deepEqual(
        out.q,
        [0, 1, 2, 3].map((k) => tesseraFineQ(row, col, k)),
      );
      assert.deepEqual(
        out.v,
        [0, 1, 2, 3].map((k) => Math.fround(tesseraFineQ(row, col, k) * tesseraFineScale(row, col))),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('agrees with the point read: the pixel holding a cell centre is the vector recall materializes there', async () => {
    const p = centreOf(TESSERA_FINE.origin, 10, 50, 30);
    const cell = P.cellOf(p.lat, p.lng);
    const r = await post('/v1/recall', { cell, bands: ['geotessera'], tslot: 55 });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const vec = r.body.facts.find((x: any) => x.band === 'geotessera')?.value;
    assert.ok(Array.isArray(vec), JSON.stringify(r.body).slice(0, 400));
    const c = P.cellCenter(cell);
    const [x, y] = utm33.forward([c.lng, c.lat]);
    const gt = first.geotransform;
    const px = Math.floor((x - gt[0]) / gt[1]);
    const py = Math.floor((y - gt[3]) / gt[5]);
    const f = decodeField(bytes);
    const got = Array.from({ length: 128 }, (_, k) => Math.fround(f.q[(py * f.width + px) * 128 + k] * f.s[py * f.width + px]));
    assert.deepEqual(got, vec);
  });

  it('signs a derivation record pinning the tiles, year, grid and artifact; the receipt verifies with its field segment', async () => {
    const rc = first.receipt;
    assert.deepEqual(rc.field, { aoi_cid: first.aoi_cid, derivation_cid: first.derivation_cid });
    assert.deepEqual(rc.fact_cids, [first.derivation_cid]);
    const v = P.verifyReceipt(rc, { publicKey: t.service.keys.publicKeyB32 });
    assert.equal(v.valid, true, JSON.stringify(v));
    assert.equal(v.field_bound, true);
    assert.equal(P.verifyReceipt({ ...rc, field: { ...rc.field, aoi_cid: 'a'.repeat(26) } }).valid, false);
    assert.equal(verifyResponse(first, { publicKey: t.service.keys.publicKeyB32 }).valid, true);
    assert.equal(first.token, `svc:tessera:${first.aoi_cid}:2025:${first.derivation_cid}`);
    assert.equal(first.aoi_cid, P.anchorId({ kind: 'bbox', min_lat: first.bbox.min_lat, min_lng: first.bbox.min_lng, max_lat: first.bbox.max_lat, max_lng: first.bbox.max_lng }));
    const f = await post('/v1/memory_token/resolve', { token: first.record });
    assert.equal(f.status, 200, JSON.stringify(f.body));
    const rec = f.body.fact;
    assert.equal(P.factCid(rec), first.derivation_cid);
    assert.deepEqual([rec.band, rec.kind, rec.signer, rec.derivation.fn], ['raster.derivation', 'primary', t.service.keys.publicKeyB32, 'tessera_field@1']);
    const val = rec.value;
    assert.deepEqual([val.recipe, val.year, val.channels, val.scales_per_pixel, val.valid_pixels], ['tessera_field@1', 2025, 128, 1, first.valid_pixels]);
    assert.deepEqual(val.grid, { epsg: 32633, geotransform: first.geotransform, width: first.width, height: first.height, tile: TESSERA_FINE.name });
    assert.equal(val.tiles.length, 1);
    const tile = val.tiles[0];
    assert.equal(tile.embeddings, `${up.origin}/tessera/v1/global_0.1_degree_representation/2025/${TESSERA_FINE.name}/${TESSERA_FINE.name}.npy`);
    assert.equal(tile.landmask, `${up.origin}/tessera/v1/global_0.1_degree_tiff_all/${TESSERA_FINE.name}.tiff`);
    assert.deepEqual([tile.shape, tile.scales_per_pixel, tile.epsg, tile.geotransform], [[320, 320], 1, 32633, [525000, 10, 0, 4990000, 0, -10]]);
    assert.deepEqual(val.artifact, { cid: first.artifact_cid, media_type: FIELD_MEDIA_TYPE, bytes: first.bytes });
    assert.deepEqual(val.source_versions, { geotessera: 'v1/2025' });
  });

  it('the same box and year again is the same token and record, read from nothing upstream', async () => {
    const size = await t.service.store.log.size();
    up.reset();
    const [a, b] = await Promise.all([field(BOX), field(BOX)]);
    assert.equal(a.body.token, first.token);
    assert.equal(b.body.token, first.token);
    assert.equal(await t.service.store.log.size(), size);
    assert.equal(up.requests.length, 0);
  });
});

describe('tessera_field across two tiles', () => {
  // From the flat tile (2-D scales) into the channel tile (per-channel scales, grid half a pixel off).
  const BOX = { min_lat: 45.02, max_lat: 45.06, min_lng: 15.07, max_lng: 15.12 };

  it('takes each pixel from the tile its centre falls in, on the grid of the tile holding the box centre', async () => {
    const r = await field(BOX);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const b = r.body;
    assert.equal(b.scales_per_pixel, 128, 'a per-channel tile makes every pixel carry 128 scales');
    const byTile = Object.fromEntries(b.tiles.map((x: any) => [x.tile, x]));
    assert.equal(byTile[TESSERA_TILES.flat.name].lattice, 'shared');
    assert.equal(byTile[TESSERA_TILES.channel.name].lattice, 'nearest');
    const f = decodeField((await get(b.artifact_url)).bytes);
    assert.deepEqual([...f.geotransform].slice(1), [200, 0, f.geotransform[3], 0, -200]);
    const counts: Record<string, number> = {};
    let valid = 0;
    for (let y = 0; y < f.height; y++) {
      for (let x = 0; x < f.width; x++) {
        const p = y * f.width + x;
        const want = expectedAt(f.geotransform[0] + (x + 0.5) * 200, f.geotransform[3] - (y + 0.5) * 200);
        if (!want) {
          assert.ok(Number.isNaN(f.s[p * 128]), `pixel ${x},${y} has no embedding`);
          continue;
        }
        valid++;
        counts[want.tile] = (counts[want.tile] ?? 0) + 1;
        assert.deepEqual(Array.from(f.q.subarray(p * 128, p * 128 + 128)), want.q, `q ${x},${y}`);
        const s = Array.from(f.s.subarray(p * 128, p * 128 + 128));
        assert.deepEqual(s, want.s.length === 1 ? new Array(128).fill(want.s[0]) : want.s, `s ${x},${y}`);
      }
    }
    assert.equal(b.valid_pixels, valid);
    assert.ok(counts[TESSERA_TILES.flat.name] > 50 && counts[TESSERA_TILES.channel.name] > 50, JSON.stringify(counts));
  });

  it('pixels whose tile is not published for the year have no embedding, and the record names the tile', async () => {
    const r = await field({ min_lat: 45.08, max_lat: 45.12, min_lng: 15.02, max_lng: 15.06 });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.missing_tiles, ['grid_15.05_45.15']);
    const f = decodeField((await get(r.body.artifact_url)).bytes);
    const north = f.geotransform[3] - 0.5 * 200;
    assert.ok(Number.isNaN(f.s[0]), `the top-left pixel (centre ${north}) is in the unpublished tile`);
  });
});

describe('tessera_field refusals and absences', () => {
  it('refuses a box of more than 9 tiles before any upstream request, and a window past 256 pixels before reading embeddings', async () => {
    up.reset();
    const wide = await field({ min_lat: 45.0, max_lat: 45.05, min_lng: 15.0, max_lng: 15.95 });
    assert.equal(wide.status, 422, JSON.stringify(wide.body));
    assert.deepEqual([wide.body.code, wide.body.details.cap, wide.body.details.max_tiles], ['invalid_argument', 'tessera_field.max_tiles', 9]);
    assert.equal(up.requests.length, 0);
    const big = await field(fineBox(0, 0, 300, 100));
    assert.equal(big.status, 422, JSON.stringify(big.body));
    assert.deepEqual([big.body.details.cap, big.body.details.max_pixels_per_side, big.body.details.pixel_size_m], ['tessera_field.max_pixels_per_side', 256, 10]);
    assert.ok(big.body.details.width > 256);
    assert.equal(elementReads().length, 0, 'no embedding byte was read');
    const limits = await get('/v1/limits');
    assert.deepEqual([limits.body.tessera_field.max_pixels_per_side, limits.body.tessera_field.max_tiles, limits.body.tessera_field.first_year], [256, 9, 2017]);
    assert.equal((await field(fineBox(0, 0, 10, 10), 2016)).status, 422);
    assert.equal((await field(fineBox(0, 0, 10, 10), 2027)).status, 422, 'a year after the current one');
    assert.equal((await field({ ...fineBox(0, 0, 10, 10), max_lat: 45.0 })).status, 422);
    assert.equal((await t.app.inject({ method: 'GET', url: '/v1/tessera_field?min_lat=45&year=2025' })).statusCode, 422);
  });

  it('no published tile, another year, or no embedded pixel is a typed absence: nothing is signed', async () => {
    const size = await t.service.store.log.size();
    const none = await field({ min_lat: 45.02, max_lat: 45.03, min_lng: 15.22, max_lng: 15.23 });
    assert.equal(none.status, 200, JSON.stringify(none.body));
    assert.deepEqual([none.body.status, none.body.absence.reason, none.body.absence.tiles], ['absence', 'outside_coverage', ['grid_15.25_45.05']]);
    assert.ok(P.verifyReceipt(none.body.receipt).valid);
    const older = await field(fineBox(10, 10, 20, 20), 2024);
    assert.deepEqual([older.body.status, older.body.absence.reason], ['absence', 'outside_coverage']);
    // The flat tile's top two rows are not embedded (scale 0).
    const o = TESSERA_TILES.flat.origin;
    const masked = gridBox(o, 200, 10, 0, 14, 1);
    const empty = await field({ ...masked, min_lat: masked.min_lat + 0.0001, max_lat: masked.max_lat - 0.0001 });
    assert.deepEqual([empty.body.status, empty.body.absence?.reason], ['absence', 'no_data'], JSON.stringify(empty.body));
    assert.equal(await t.service.store.log.size(), size);
  });
});

describe('tessera_field resolve, eviction and rebuild', () => {
  let tiny: TestApp;
  before(async () => {
    tiny = await build({ upstreams: up.upstreams, artifactMaxBytes: 65_536 }, {}, { now: () => TESSERA_NOW });
  });
  after(async () => tiny?.close());

  it('resolves a token to its record and stored artifact; refuses malformed, unknown and mismatched tokens', async () => {
    const m = (await field(fineBox(200, 200, 230, 230))).body;
    const r = await post('/v1/tessera_field/resolve', { token: m.token });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.artifact, { cid: m.artifact_cid, media_type: FIELD_MEDIA_TYPE, bytes: m.bytes, url: m.artifact_url, state: 'stored' });
    assert.equal(r.body.record.fact_cid, m.derivation_cid);
    assert.ok(P.verifyReceipt(r.body.receipt, { publicKey: t.service.keys.publicKeyB32 }).field_bound);
    assert.equal(verifyResponse(r.body).valid, true);
    assert.equal((await post('/v1/tessera_field/resolve', { token: 'svc:tessera:x:2025:y' })).status, 422);
    const unknown = await post('/v1/tessera_field/resolve', { token: `svc:tessera:${m.aoi_cid}:2025:${'a'.repeat(52)}` });
    assert.deepEqual([unknown.status, unknown.body.code], [404, 'cid_not_found']);
    const wrong = await post('/v1/tessera_field/resolve', { token: m.token.replace(':2025:', ':2024:') });
    assert.deepEqual([wrong.status, wrong.body.code], [409, 'token_claim_mismatch']);
    assert.match((await post('/v1/memory_token/resolve', { token: m.token })).body.message, /tessera_field\/resolve/);
  });

  it('an evicted field is rebuilt byte for byte from its record: the pinned files only, no header guessing', async () => {
    const one = (await field(fineBox(10, 10, 24, 24), 2025, tiny)).body;
    assert.equal(one.status, 'field', JSON.stringify(one));
    const original = (await get(one.artifact_url, tiny)).bytes;
    const two = (await field(fineBox(300, 300, 318, 318), 2025, tiny)).body;
    assert.equal(two.status, 'field');
    const gone = await get(one.artifact_url, tiny);
    assert.equal(gone.status, 404, 'the second field evicted the first');
    assert.equal(gone.body.code, 'artifact_not_found');
    assert.deepEqual(gone.body.details.rebuild, { method: 'POST', path: '/v1/tessera_field/resolve', body: { token: one.token } });
    clearReaders(tiny);
    up.reset();
    const r = await post(gone.body.details.rebuild.path, gone.body.details.rebuild.body, tiny);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.artifact.state, 'rebuilt');
    const again = await get(one.artifact_url, tiny);
    assert.equal(again.status, 200);
    assert.ok(again.bytes.equals(original), 'rebuilt bytes are identical');
    assert.ok(
      up.requests.every((x) => x.path.includes(TESSERA_FINE.name)),
      'only the pinned tile was read',
    );
    assert.equal((await post('/v1/tessera_field/resolve', { token: one.token }, tiny)).body.artifact.state, 'stored');
    // The same request again on the small store finds the record and rebuilds what was evicted meanwhile.
    await tiny.service.store.artifacts.evict(one.artifact_cid);
    const repeat = await field(fineBox(10, 10, 24, 24), 2025, tiny);
    assert.equal(repeat.body.token, one.token);
    assert.equal((await get(one.artifact_url, tiny)).status, 200);
  });

  it('a rebuild whose upstream bytes changed is refused and nothing is stored', async () => {
    const one = (await field(fineBox(40, 250, 52, 262), 2025, tiny)).body;
    await tiny.service.store.artifacts.evict(one.artifact_cid);
    up.switches = { corrupt: { prefix: `/tessera/v1/global_0.1_degree_representation/2025/${TESSERA_FINE.name}/${TESSERA_FINE.name}.npy`, mode: 'blocks' } };
    clearReaders(tiny);
    try {
      const r = await post('/v1/tessera_field/resolve', { token: one.token }, tiny);
      assert.equal(r.status, 502, JSON.stringify(r.body));
      assert.equal(r.body.code, 'source_format_mismatch');
      assert.equal(r.body.details.reason, 'upstream_changed');
    } finally {
      up.reset();
    }
    assert.equal((await get(one.artifact_url, tiny)).status, 404);
  });
});
