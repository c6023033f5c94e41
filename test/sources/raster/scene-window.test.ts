import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cellCenter, cellOf } from '../../../src/protocol/cell64.js';
import { CogReader } from '../../../src/sources/cog/reader.js';
import { PIXEL_NODATA, PIXEL_OUTSIDE, PIXEL_VALID, type PixelWindow, type WindowRead } from '../../../src/sources/cog/window.js';
import { sentinel2Connector, type Sentinel2Connector } from '../../../src/sources/sentinel2.js';
import { startRasterUpstreams, type RasterUpstreams } from '../fixtures/raster-upstreams.js';
import { s2Dn, s2PointAt, S2_ITEMS, S2_POINTS, S2_TSLOT, utmPixel } from '../fixtures/raster-scenes.js';
import { depsFor } from './harness.js';

let up: RasterUpstreams;
let reader: CogReader;
const ITEM_B = S2_ITEMS[1];
const cogPath = (asset: string) => `/sentinel-cogs/sentinel-s2-l2a-cogs/33/T/WL/2026/11/${ITEM_B.id}/${asset}.tif`;
const RED = () => `${up.origin}${cogPath('B04')}`;
/** Ranged reads of the red COG after its header: one per block fetched. */
const blockRequests = () => up.requests.filter((r) => r.path === cogPath('B04') && !r.range?.startsWith('bytes=0-')).length;

/** Asserts every pixel of `w` against the fixture: valid DN inside the 512² image, outside elsewhere. */
function assertWindow(w: WindowRead, win: PixelWindow): void {
  assert.deepEqual([w.col0, w.row0, w.width, w.height, w.epsg], [win.col0, win.row0, win.width, win.height, 32633]);
  let valid = 0;
  for (let y = 0; y < win.height; y++) {
    for (let x = 0; x < win.width; x++) {
      const col = win.col0 + x;
      const row = win.row0 + y;
      const k = y * win.width + x;
      if (col < 0 || row < 0 || col >= 512 || row >= 512) {
        assert.equal(w.mask[k], PIXEL_OUTSIDE, `${col},${row} outside`);
        assert.ok(Number.isNaN(w.values[k]));
      } else {
        assert.equal(w.mask[k], PIXEL_VALID, `${col},${row} valid`);
        assert.equal(w.values[k], s2Dn(1, 'red', col, row), `${col},${row}`);
        valid++;
      }
    }
  }
  assert.equal(w.valid, valid);
}

async function windowOf(win: PixelWindow, nodata?: number[]): Promise<WindowRead> {
  const h = await reader.header(RED());
  assert.ok(h);
  up.reset();
  return reader.window(h, win, 32633, { nodata });
}

before(async () => {
  up = await startRasterUpstreams(['s2']);
});
after(async () => up.close());
beforeEach(() => {
  up.reset();
  reader = new CogReader(depsFor(up).client);
});

describe('CogReader.window', () => {
  it('a window inside one 256² block returns the fixture DNs and fetches that block only', async () => {
    const win = { col0: 10, row0: 20, width: 30, height: 40 };
    assertWindow(await windowOf(win), win);
    assert.equal(blockRequests(), 1);
  });

  it('a window across both block boundaries assembles four blocks, each fetched once', async () => {
    const win = { col0: 200, row0: 230, width: 100, height: 60 };
    assertWindow(await windowOf(win), win);
    assert.equal(blockRequests(), 4);
  });

  it('a window hanging over the top-right corner: outside pixels are masked, only the one covering block is read', async () => {
    const win = { col0: 480, row0: -10, width: 64, height: 32 };
    const w = await windowOf(win);
    assertWindow(w, win);
    assert.equal(w.valid, 32 * 22);
    assert.equal(blockRequests(), 1);
  });

  it('a window wholly outside the image reads no block', async () => {
    const win = { col0: 600, row0: 0, width: 16, height: 16 };
    const w = await windowOf(win);
    assert.equal(w.valid, 0);
    assert.ok(w.mask.every((m) => m === PIXEL_OUTSIDE));
    assert.equal(blockRequests(), 0);
  });

  it('a repeated window is served from the block cache: no request', async () => {
    const win = { col0: 250, row0: 250, width: 12, height: 12 };
    await windowOf(win);
    const hits = reader.stats.blockHits;
    assertWindow(await windowOf(win), win);
    assert.equal(blockRequests(), 0);
    assert.equal(reader.stats.blockHits, hits + 4);
  });

  it("the caller's nodata values mask matching samples, keeping the raw value", async () => {
    const dn = s2Dn(1, 'red', 5, 5);
    const w = await windowOf({ col0: 0, row0: 0, width: 10, height: 10 }, [dn]);
    for (let k = 0; k < 100; k++) {
      assert.equal(w.mask[k], w.values[k] === dn ? PIXEL_NODATA : PIXEL_VALID);
    }
    assert.equal(w.mask[5 * 10 + 5], PIXEL_NODATA);
    assert.equal(w.values[5 * 10 + 5], dn);
  });

  it('refuses an empty or oversized window before fetching', async () => {
    const h = await reader.header(RED());
    await assert.rejects(reader.window(h!, { col0: 0, row0: 0, width: 0, height: 5 }, 32633), RangeError);
    await assert.rejects(reader.window(h!, { col0: 0, row0: 0, width: 5000, height: 5 }, 32633), RangeError);
  });
});

describe('CogReader.readWindowAt', () => {
  it("centres the window on the pixel holding the point (index size/2) in the file's UTM grid", async () => {
    const p = s2PointAt(129, 140);
    const r = await reader.readWindowAt(RED(), p.lat, p.lng, 256, 256);
    assert.equal(r.kind, 'window');
    if (r.kind !== 'window') return;
    assert.deepEqual(r.center, { col: 129, row: 140 });
    assertWindow(r.read, { col0: 1, row0: 12, width: 256, height: 256 });
    assert.equal(r.read.values[128 * 256 + 128], s2Dn(1, 'red', 129, 140));
  });

  it('a point off the image is outside, with no block read', async () => {
    const r = await reader.readWindowAt(RED(), S2_POINTS.ocean.lat, S2_POINTS.ocean.lng, 256, 256);
    assert.deepEqual(r, { kind: 'outside', epsg: 32633 });
    assert.equal(blockRequests(), 0);
  });
});

describe('sentinel2Connector.sceneRgb', () => {
  let s2: Sentinel2Connector;
  const cellAt = (p: { lat: number; lng: number }) => cellOf(p.lat, p.lng);
  const opts = () => ({ deadline: Date.now() + 5000, tslot: S2_TSLOT });
  beforeEach(() => {
    s2 = sentinel2Connector(depsFor(up)) as Sentinel2Connector;
  });

  it("uses the point reads' scene (one search for both) and converts DN to reflectance with its rule", async () => {
    const cell = cellAt(S2_POINTS.west);
    const center = cellCenter(cell);
    const point = await s2.materialize({ cell, band: depsFor(up).registry.bands.get('s2.B04')!, tslot: S2_TSLOT, center, signal: new AbortController().signal, deadline: Date.now() + 5000 });
    assert.equal(point.status, 'value');
    const r = await s2.sceneRgb(cell, center, opts());
    assert.equal(r.kind, 'rgb', JSON.stringify(r));
    if (r.kind !== 'rgb') return;
    assert.equal(s2.searches, 1);
    assert.deepEqual(r.scene, { id: ITEM_B.id, datetime: '2026-11-10T10:03:15Z', cloud_cover: 8.5, epsg: 32633 });
    const [col, row] = utmPixel(center.lat, center.lng, 10);
    assert.deepEqual([r.rgb.col0, r.rgb.row0, r.rgb.width, r.rgb.height], [col - 128, row - 128, 256, 256]);
    const k = 128 * 256 + 128;
    assert.equal(r.rgb.red[k], (point as { value: number }).value);
    for (const [asset, raster] of [
      ['red', r.rgb.red],
      ['green', r.rgb.green],
      ['blue', r.rgb.blue],
    ] as const) {
      for (const [x, y] of [
        [0, 0],
        [255, 0],
        [128, 128],
        [17, 203],
        [255, 255],
      ]) {
        const want = s2Dn(1, asset, r.rgb.col0 + x, r.rgb.row0 + y) * 0.0001 - 0.1;
        assert.ok(Math.abs(raster[y * 256 + x] - want) < 1e-12, `${asset} ${x},${y}`);
      }
    }
    assert.equal(r.rgb.valid, 256 * 256);
    assert.match(r.rgb.hrefs.red, /B04\.tif$/);
    assert.equal(r.rgb.rules.blue.offset, -0.1);
  });

  it('rgbScene names the scene without reading a window', async () => {
    const cell = cellAt(S2_POINTS.west);
    const r = await s2.rgbScene(cell, cellCenter(cell), opts());
    assert.deepEqual(r, { kind: 'scene', scene: { id: ITEM_B.id, datetime: '2026-11-10T10:03:15Z', cloud_cover: 8.5, epsg: 32633 } });
    assert.equal(up.requests.filter((q) => /B0[234]\.tif$/.test(q.path) && !q.range?.startsWith('bytes=0-')).length, 0);
  });

  it('a window over the image edge is masked there, with reflectance 0', async () => {
    const p = s2PointAt(20, 300);
    const cell = cellOf(p.lat, p.lng);
    const r = await s2.sceneRgb(cell, cellCenter(cell), opts());
    assert.equal(r.kind, 'rgb');
    if (r.kind !== 'rgb') return;
    assert.ok(r.rgb.col0 < 0);
    const edge = -r.rgb.col0;
    assert.equal(r.rgb.mask[0], 1);
    assert.equal(r.rgb.red[edge - 1], 0);
    assert.equal(r.rgb.mask[edge], 0);
    assert.equal(r.rgb.valid, (256 - edge) * 256);
  });

  it("no scene over the cell: outside_coverage, with the point path's detail", async () => {
    const cell = cellAt(S2_POINTS.ocean);
    const r = await s2.sceneRgb(cell, cellCenter(cell), opts());
    assert.equal(r.kind, 'none');
    assert.equal((r as { reason: string }).reason, 'outside_coverage');
    assert.match((r as { detail: string }).detail, /no Sentinel-2 L2A scene covers the cell/);
  });

  it('SCL masked in every scene: no_clear_scene', async () => {
    const cell = cellAt(S2_POINTS.southeast);
    const r = await s2.sceneRgb(cell, cellCenter(cell), opts());
    assert.equal(r.kind, 'none');
    assert.equal((r as { reason: string }).reason, 'no_clear_scene');
    assert.match((r as { detail: string }).detail, /cloud\/shadow\/no data per SCL in all 3 scenes/);
  });

  it('an upstream failure is a failure outcome, never an absence', async () => {
    up.switches = { fail: { status: 500 } };
    const cell = cellAt(S2_POINTS.west);
    const r = await s2.sceneRgb(cell, cellCenter(cell), opts());
    assert.equal(r.kind, 'failed');
    assert.match((r as { outcome: { reason: string } }).outcome.reason, /^source_fetch_failed/);
  });
});
