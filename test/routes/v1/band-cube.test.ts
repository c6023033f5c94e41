/**
 * band_cube and cube_resolve over the Sentinel-2 fixture with the cube scenes added
 * (test/sources/fixtures/raster-cube-scenes.ts: one scene per slot 686..692 with known DNs):
 * the least cloudy scene per slot, one grid for every slice (a scene on a shifted grid read at
 * its own window, a scene in another UTM zone left out as off_grid), exact reflectance of every
 * pixel of every plane, slot order, absences listed and never written as planes, the documented
 * layout decoded in Python, the slice cap, the token round trip, eviction and a byte-identical
 * rebuild on both store drivers, the receipt's field segment under the protocol verifier, and MCP.
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
import { CUBE_ENTRY_BYTES, CUBE_HEADER_BYTES, CUBE_MEDIA_TYPE, decodeCube } from '../../../src/primitives/rasters/cube-format.js';
import { decodeGrid } from '../../../src/primitives/rasters/grid-format.js';
import { build, type TestApp } from '../../support/app.js';
import { startRasterUpstreams, type RasterUpstreams } from '../../sources/fixtures/raster-upstreams.js';
import { addCubeScenes, SHIFT } from '../../sources/fixtures/raster-cube-scenes.js';
import { s2Dn } from '../../sources/fixtures/raster-scenes.js';
import { pgSkip } from '../../store/support/pg-env.js';
import { pixelBox, RASTER_NOW } from '../../support/rasters.js';

let up: RasterUpstreams;
let t: TestApp;
const BOX = pixelBox(100, 100, 160, 150);
const CUBE = { bbox: BOX, band: 's2.B04', from: '2026-05-20', to: '2026-11-22' };

async function post(app: TestApp, url: string, payload: unknown) {
  const r = await app.app.inject({ method: 'POST', url, payload: payload as object });
  return { status: r.statusCode, body: r.json() };
}
async function get(app: TestApp, url: string) {
  const r = await app.app.inject({ method: 'GET', url });
  return { status: r.statusCode, bytes: r.rawPayload, body: r.headers['content-type']?.toString().startsWith('application/json') ? r.json() : undefined };
}
const cube = (payload: unknown, app = t) => post(app, '/v1/band_cube', payload);
const clearReaders = (app: TestApp) => app.service.materializers.list().forEach((m) => (m as { reader?: { clear(): void } }).reader?.clear());
/** The fixture-grid pixel of the cube's top-left pixel. */
const originOf = (gt: number[]) => [Math.round((gt[0] - 497437) / 10), Math.round((4985513 - gt[3]) / 10)];

/** The reflectance of slot `tslot`'s plane at fixture-grid pixel (col, row). */
function expected(tslot: number, col: number, row: number): number {
  if (tslot === 688) return Math.fround(s2Dn(6, 'red', col, row) * 0.0001 - 0.1);
  if (tslot === 689) return Math.fround(s2Dn(7, 'red', col + SHIFT.cols, row + SHIFT.rows) * 0.0001 - 0.1);
  if (tslot === 691) return Math.fround(s2Dn(2, 'red', col, row) * 0.0001);
  if (tslot === 692) return Math.fround(s2Dn(1, 'red', col, row) * 0.0001 - 0.1);
  throw new Error(`no plane for ${tslot}`);
}

before(async () => {
  up = await startRasterUpstreams(['s2']);
  addCubeScenes(up);
  t = await build({ upstreams: up.upstreams }, {}, { now: () => RASTER_NOW });
});
after(async () => {
  await t?.close();
  await up?.close();
});

describe('band_cube over the fixture scenes', () => {
  let first: any;
  let bytes: Buffer;

  it('takes the least cloudy scene of each slot, reads every slice on one grid, and lists slots without one as absences', async () => {
    up.reset();
    const r = await cube(CUBE);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    first = r.body;
    assert.equal(first.status, 'cube');
    assert.deepEqual(first.tslots, { lo: 686, hi: 692, tempo: 'medium' });
    assert.deepEqual(
      first.slices.map((s: any) => [s.tslot, s.state, s.plane ?? null, s.scene?.id ?? s.absence.reason]),
      [
        [686, 'absent', null, 'no_data'],
        [687, 'absent', null, 'no_scene_in_slot'],
        [688, 'present', 0, 'S2B_33TWL_20260720_0_L2A'],
        [689, 'present', 1, 'S2A_33TWL_20260814_0_L2A'],
        [690, 'absent', null, 'off_grid'],
        [691, 'present', 2, 'S2A_33TWL_20261021_0_L2A'],
        [692, 'present', 3, 'S2B_33TWL_20261110_0_L2A'],
      ],
    );
    assert.deepEqual([first.slices[0].starts_at, first.slices[0].ends_at, first.slices[6].ends_at], ['2026-05-07T00:00:00Z', '2026-06-06T00:00:00Z', '2026-12-03T00:00:00Z']);
    assert.deepEqual([first.planes, first.epsg, first.pixel_size_m, first.media_type, first.nodata], [4, 32633, 10, CUBE_MEDIA_TYPE, 'NaN']);
    assert.equal(up.count('/earth-search/v1/search', 'POST'), 7, 'one STAC search per slot');
    assert.equal(up.requests.filter((q) => q.path.includes('S2B_33TWL_20260824_0_L2A')).length, 0, 'the cloudier scene of 689 is never opened');
    assert.ok(
      up.requests.filter((q) => q.path.includes('S2A_34TCQ')).every((q) => q.range === 'bytes=0-16383'),
      'the off-grid scene: its header only',
    );
  });

  it("every pixel of every plane is the fixture's reflectance of that slot's scene, on the grid band_raster gives the same box", async () => {
    const g = await get(t, first.artifact_url);
    assert.equal(g.status, 200);
    bytes = g.bytes;
    assert.equal(g.bytes.length, first.bytes);
    assert.equal(bytes.length, CUBE_HEADER_BYTES + CUBE_ENTRY_BYTES * 4 + 4 * 4 * first.width * first.height);
    assert.equal(first.artifact_cid, P.b32encode(P.blake3(bytes)));
    const c = decodeCube(bytes);
    assert.deepEqual([c.width, c.height, c.epsg, [...c.geotransform]], [first.width, first.height, 32633, first.geotransform]);
    assert.deepEqual(
      c.slices.map((s) => [s.tslot, s.scene_id, s.captured_s]),
      [
        [688, 'S2B_33TWL_20260720_0_L2A', Date.parse('2026-07-20T10:02:00Z') / 1000],
        [689, 'S2A_33TWL_20260814_0_L2A', Date.parse('2026-08-14T10:02:30Z') / 1000],
        [691, 'S2A_33TWL_20261021_0_L2A', Date.parse('2026-10-21T10:02:59Z') / 1000],
        [692, 'S2B_33TWL_20261110_0_L2A', Date.parse('2026-11-10T10:03:15Z') / 1000],
      ],
    );
    const [col0, row0] = originOf(first.geotransform);
    for (const s of c.slices) {
      for (let y = 0; y < c.height; y++) {
        for (let x = 0; x < c.width; x++) assert.equal(s.values[y * c.width + x], expected(s.tslot, col0 + x, row0 + y), `tslot ${s.tslot} pixel ${x},${y}`);
      }
    }
    // The same box as one raster: the same window, and its grid is the cube's plane of the same scene.
    const r = (await post(t, '/v1/band_raster', { bbox: BOX, band: 's2.B04' })).body;
    assert.deepEqual([r.width, r.height, r.geotransform, r.scene.id], [first.width, first.height, first.geotransform, 'S2B_33TWL_20261110_0_L2A']);
    assert.deepEqual(decodeGrid((await get(t, r.artifact_url)).bytes).values, c.slices[3].values);
  });

  it('absences say why, naming the scene that was chosen but not used', () => {
    const [noData, none, , , offGrid] = first.slices.map((s: any) => s.absence);
    assert.equal(noData.scene, 'S2A_33TWL_20260520_0_L2A');
    assert.match(noData.detail, /no data/);
    assert.equal(none.scene, undefined);
    assert.match(none.detail, /2026-06-06 to 2026-07-05/);
    assert.equal(offGrid.scene, 'S2A_34TCQ_20260918_0_L2A');
    assert.match(offGrid.detail, /EPSG:32634.*EPSG:32633/);
  });

  it("signs a record pinning every slice's scene, file, window and reflectance rule; the receipt verifies with its field segment", async () => {
    const rc = first.receipt;
    assert.deepEqual(rc.field, { aoi_cid: first.aoi_cid, derivation_cid: first.derivation_cid });
    assert.deepEqual(rc.fact_cids, [first.derivation_cid]);
    assert.equal(rc.primitive, 'svc.band_cube');
    const v = P.verifyReceipt(rc, { publicKey: t.service.keys.publicKeyB32 });
    assert.equal(v.valid, true, JSON.stringify(v));
    assert.equal(v.field_bound, true);
    assert.equal(P.verifyReceipt({ ...rc, field: { ...rc.field, aoi_cid: 'a'.repeat(26) } }).valid, false, 'the field segment is signed');
    assert.equal(verifyResponse(first, { publicKey: t.service.keys.publicKeyB32 }).valid, true);
    assert.equal(first.token, `svc:cube:${first.aoi_cid}:s2.B04:686..692:${first.derivation_cid}`);
    const f = await post(t, '/v1/memory_token/resolve', { token: first.record });
    assert.equal(f.status, 200, JSON.stringify(f.body));
    const rec = f.body.fact;
    assert.deepEqual([rec.fact_cid, rec.band, rec.signer, P.factCid(rec)], [first.derivation_cid, 'raster.derivation', t.service.keys.publicKeyB32, first.derivation_cid]);
    assert.equal(rec.derivation.fn, 'band_cube@1');
    const val = rec.value;
    assert.deepEqual([val.recipe, val.band, val.aoi_cid, val.tslots], ['band_cube@1', 's2.B04', first.aoi_cid, { lo: 686, hi: 692, tempo: 'medium' }]);
    assert.deepEqual(val.grid, { epsg: 32633, geotransform: first.geotransform, width: first.width, height: first.height });
    const [col0, row0] = originOf(first.geotransform);
    assert.deepEqual(
      val.slices.map((s: any) => [s.tslot, s.scene.id, s.window.col0 - col0, s.window.row0 - row0, s.reflectance.offset]),
      [
        [688, 'S2B_33TWL_20260720_0_L2A', 0, 0, -0.1],
        [689, 'S2A_33TWL_20260814_0_L2A', SHIFT.cols, SHIFT.rows, -0.1],
        [691, 'S2A_33TWL_20261021_0_L2A', 0, 0, 0],
        [692, 'S2B_33TWL_20261110_0_L2A', 0, 0, -0.1],
      ],
    );
    assert.ok(val.slices.every((s: any) => s.scene.href.startsWith(up.origin) && s.scene.href.endsWith('/B04.tif')));
    assert.deepEqual(val.absences, [
      { tslot: 686, reason: 'no_data', scene: 'S2A_33TWL_20260520_0_L2A' },
      { tslot: 687, reason: 'no_scene_in_slot' },
      { tslot: 690, reason: 'off_grid', scene: 'S2A_34TCQ_20260918_0_L2A' },
    ]);
    assert.deepEqual(val.artifact, { cid: first.artifact_cid, media_type: CUBE_MEDIA_TYPE, bytes: first.bytes });
    assert.deepEqual(val.source_versions, { earth_search_s2: '05.11' });
  });

  it('the same request again is the same token and record (asked twice at once, made once): nothing new in the log', async () => {
    const size = await t.service.store.log.size();
    up.reset();
    const [a, b] = await Promise.all([cube(CUBE), cube(CUBE)]);
    assert.deepEqual([a.body.token, b.body.token], [first.token, first.token]);
    assert.equal(await t.service.store.log.size(), size);
    assert.equal(up.count('/earth-search/v1/search', 'POST'), 7);
    assert.equal(up.count('/sentinel-cogs/'), 0, 'the same choices: no pixel is read again');
  });

  it('a third party decodes the documented layout (Python + numpy): header, slice table, planes', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-cube-'));
    try {
      const file = join(dir, 'cube.bin');
      writeFileSync(file, bytes);
      // Written from docs/rasters.md only.
      const script = `
import json, struct, sys
import numpy as np
b = open(sys.argv[1], 'rb').read()
assert b[:8] == b'SVCCUBE\\0' and struct.unpack('<I', b[8:12])[0] == 1
width, height, epsg = struct.unpack('<III', b[12:24])
gt = struct.unpack('<6d', b[24:72])
nodata_bits, count = struct.unpack('<II', b[72:80])
slices = []
for k in range(count):
    e = b[80 + 80 * k: 160 + 80 * k]
    tslot, _, captured = struct.unpack('<IIq', e[:16])
    slices.append([tslot, captured, e[16:80].rstrip(b'\\0').decode('ascii')])
cube = np.frombuffer(b, dtype='<f4', offset=80 + 80 * count).reshape(count, height, width)
print(json.dumps({'width': width, 'height': height, 'epsg': epsg, 'gt': list(gt), 'nodata_bits': nodata_bits, 'slices': slices,
  'samples': [[k, 3, 5, float(cube[k, 3, 5])] for k in range(count)], 'nan': int(np.isnan(cube).sum())}))
`;
      const py = spawnSync('python3', ['-c', script, file], { encoding: 'utf8' });
      assert.equal(py.status, 0, py.stderr);
      const out = JSON.parse(py.stdout);
      assert.deepEqual([out.width, out.height, out.epsg, out.gt, out.nodata_bits, out.nan], [first.width, first.height, 32633, first.geotransform, 0x7fc00000, 0]);
      assert.deepEqual(
        out.slices.map((s: any) => [s[0], s[2]]),
        [
          [688, 'S2B_33TWL_20260720_0_L2A'],
          [689, 'S2A_33TWL_20260814_0_L2A'],
          [691, 'S2A_33TWL_20261021_0_L2A'],
          [692, 'S2B_33TWL_20261110_0_L2A'],
        ],
      );
      const [col0, row0] = originOf(out.gt);
      for (const [k, r, c, v] of out.samples) assert.equal(v, expected(out.slices[k][0], col0 + c, row0 + r));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses more than 12 slots naming band_cube.max_slices before any upstream request; bad ranges and boxes are typed', async () => {
    up.reset();
    const wide = await cube({ ...CUBE, from: '2025-11-11' });
    assert.equal(wide.status, 422, JSON.stringify(wide.body));
    assert.deepEqual([wide.body.code, wide.body.details.cap, wide.body.details.max_slices, wide.body.details.slices], ['invalid_argument', 'band_cube.max_slices', 12, 13]);
    assert.match(wide.body.message, /12/);
    const big = await cube({ ...CUBE, bbox: { min_lat: 45, max_lat: 45.01, min_lng: 15, max_lng: 15.07 } });
    assert.deepEqual([big.status, big.body.details.cap], [422, 'band_cube.max_pixels_per_side']);
    assert.equal(up.requests.length, 0);
    const limits = await get(t, '/v1/limits');
    assert.deepEqual([limits.body.band_cube.max_slices, limits.body.band_cube.slot_days, limits.body.band_cube.max_pixels_per_side], [12, 30, 512]);
    for (const bad of [{ from: '2026-02-30' }, { to: '2026-11-23' }, { from: '2026-11-01', to: '2026-10-01' }, { from: undefined }, { band: 's2.B05' }]) {
      const r = await cube({ ...CUBE, ...bad });
      assert.deepEqual([r.status, r.body.code], [422, 'invalid_argument'], JSON.stringify(bad));
    }
  });

  it('no slot with a slice is a typed absence: every slot says why, nothing is signed or stored', async () => {
    const size = await t.service.store.log.size();
    const r = await cube({ ...CUBE, from: '2024-01-01', to: '2024-02-15' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.status, 'absence');
    assert.deepEqual(
      r.body.slices.map((s: any) => [s.state, s.absence.reason]),
      [
        ['absent', 'no_scene_in_slot'],
        ['absent', 'no_scene_in_slot'],
      ],
    );
    assert.ok(!('token' in r.body) && P.verifyReceipt(r.body.receipt).valid);
    assert.equal(await t.service.store.log.size(), size);
  });
});

describe('cube_resolve', () => {
  it('a token resolves to its record and stored artifact; malformed, unknown and mismatched tokens are typed', async () => {
    const m = (await cube(CUBE)).body;
    const r = await post(t, '/v1/cube/resolve', { token: m.token });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.artifact, { cid: m.artifact_cid, media_type: CUBE_MEDIA_TYPE, bytes: m.bytes, url: m.artifact_url, state: 'stored' });
    assert.deepEqual([r.body.record.fact_cid, r.body.tslots, r.body.aoi_cid], [m.derivation_cid, m.tslots, m.aoi_cid]);
    assert.deepEqual(r.body.receipt.field, { aoi_cid: m.aoi_cid, derivation_cid: m.derivation_cid });
    assert.ok(P.verifyReceipt(r.body.receipt, { publicKey: t.service.keys.publicKeyB32 }).field_bound);
    assert.equal(verifyResponse(r.body).valid, true);
    const bad = (x: unknown) => post(t, '/v1/cube/resolve', { token: x });
    assert.equal((await bad(m.token.replace('686..692', '692..686'))).status, 422);
    assert.equal((await bad(m.token.replace('686..692', '686'))).status, 422);
    assert.equal((await bad(m.token.replace(':cube:', ':raster:'))).status, 422);
    assert.deepEqual(await bad(`svc:cube:${m.aoi_cid}:s2.B04:686..692:${'a'.repeat(52)}`).then((x) => [x.status, x.body.code]), [404, 'cid_not_found']);
    assert.deepEqual(await bad(m.token.replace('686..692', '686..691')).then((x) => [x.status, x.body.code]), [409, 'token_claim_mismatch']);
    // A raster token is not a cube, and the generic token route points cube tokens here.
    assert.match((await post(t, '/v1/memory_token/resolve', { token: m.token })).body.message, /cube\/resolve/);
  });
});

for (const driver of ['sqlite', 'postgres'] as const) {
  describe(`eviction and rebuild (${driver})`, { skip: driver === 'postgres' ? pgSkip : false }, () => {
    let tiny: TestApp;
    before(async () => {
      tiny = await build({ upstreams: up.upstreams, artifactMaxBytes: 65_536 }, {}, { now: () => RASTER_NOW, driver });
    });
    after(async () => tiny?.close());

    it('a newer artifact evicts the cube; GET names the cube route; resolve rebuilds it byte for byte with no scene search', async () => {
      const one = (await cube({ ...CUBE, bbox: pixelBox(10, 300, 49, 339) }, tiny)).body;
      assert.equal(one.status, 'cube', JSON.stringify(one));
      const original = (await get(tiny, one.artifact_url)).bytes;
      assert.ok(original.length > 24_000 && original.length < 32_768, `${original.length}`);
      // A 100 × 100 raster (40 080 bytes) passes the 64 KiB bound with the cube held: the cube goes.
      const two = (await post(tiny, '/v1/band_raster', { bbox: pixelBox(300, 300, 399, 399), band: 's2.B04' })).body;
      assert.equal(two.status, 'raster');
      const gone = await get(tiny, one.artifact_url);
      assert.deepEqual([gone.status, gone.body.code, gone.body.details.state], [404, 'artifact_not_found', 'evicted']);
      assert.deepEqual(gone.body.details.rebuild, { method: 'POST', path: '/v1/cube/resolve', body: { token: one.token } });
      clearReaders(tiny);
      up.reset();
      const r = await post(tiny, gone.body.details.rebuild.path, gone.body.details.rebuild.body);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.artifact.state, 'rebuilt');
      assert.equal(up.count('/earth-search/v1/search'), 0, 'a rebuild reads the pinned files: no scene search');
      const again = await get(tiny, one.artifact_url);
      assert.equal(again.status, 200);
      assert.ok(again.bytes.equals(original), 'rebuilt bytes are identical');
      assert.equal((await post(tiny, '/v1/cube/resolve', { token: one.token })).body.artifact.state, 'stored');
    });

    it('a rebuild whose upstream bytes changed is refused: nothing is stored', async () => {
      const one = (await cube({ ...CUBE, bbox: pixelBox(200, 20, 229, 49), from: '2026-10-10' }, tiny)).body;
      assert.equal(one.status, 'cube', JSON.stringify(one));
      await tiny.service.store.artifacts.evict(one.artifact_cid);
      up.switches = { corrupt: { prefix: '/sentinel-cogs/', mode: 'blocks' } };
      clearReaders(tiny);
      try {
        const r = await post(tiny, '/v1/cube/resolve', { token: one.token });
        assert.deepEqual([r.status, r.body.code], [502, 'source_format_mismatch'], JSON.stringify(r.body));
      } finally {
        up.reset();
      }
      assert.equal((await get(tiny, one.artifact_url)).status, 404);
    });
  });
}

describe('MCP', () => {
  it('band_cube and cube_resolve are tools of /mcp/full (not of /mcp) and answer as REST does', async () => {
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const c = new Client({ name: 'svc-test', version: '0.0.1' });
    await c.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp/full`)));
    const names = (await c.listTools()).tools.map((x) => x.name);
    assert.ok(
      ['svc_band_cube', 'svc_cube_resolve', 'svc_raster_bundle', 'svc_raster_bundle_resolve'].every((n) => names.includes(n)),
      names.join(','),
    );
    const res: any = await c.callTool({ name: 'svc_band_cube', arguments: CUBE });
    assert.equal(res.isError, undefined, JSON.stringify(res));
    const rest = (await cube(CUBE)).body;
    assert.deepEqual([res.structuredContent.token, res.structuredContent.artifact_cid], [rest.token, rest.artifact_cid]);
    assert.ok(P.verifyReceipt(res.structuredContent.receipt).field_bound);
    const rr: any = await c.callTool({ name: 'svc_cube_resolve', arguments: { token: rest.token } });
    assert.equal(rr.structuredContent.artifact.cid, rest.artifact_cid);
    const wide: any = await c.callTool({ name: 'svc_band_cube', arguments: { ...CUBE, from: '2025-01-01' } });
    assert.deepEqual([wide.isError, wide.structuredContent.code, wide.structuredContent.details.cap], [true, 'invalid_argument', 'band_cube.max_slices']);
    await c.close();
    const core = new Client({ name: 'svc-test', version: '0.0.1' });
    await core.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
    assert.ok(!(await core.listTools()).tools.some((x) => x.name === 'svc_band_cube'));
    await core.close();
  });
});
