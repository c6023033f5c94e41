import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { currentTslot } from '../../../src/protocol/tslot.js';
import { reflectanceOf, sentinel2Connector, type Sentinel2Connector } from '../../../src/sources/sentinel2.js';
import type { StacItem } from '../../../src/sources/stac-search.js';
import { startRasterUpstreams, type RasterUpstreams } from '../fixtures/raster-upstreams.js';
import { s2Dn, s2Item, S2_ITEMS, S2_POINTS, S2_TSLOT, utmPixel } from '../fixtures/raster-scenes.js';
import { depsFor, requestAt, value } from './harness.js';

let up: RasterUpstreams;
let s2: Sentinel2Connector;
const connector = (o: { timeoutMs?: number; retries?: number } = {}) => sentinel2Connector(depsFor(up, o)) as Sentinel2Connector;
type Point = { lat: number; lng: number };
const at = (band: string, p: Point, tslot = S2_TSLOT, c = s2) => c.materialize(requestAt(band, p.lat, p.lng, tslot));
const searches = () => up.count('/earth-search/v1/search', 'POST');
const r6 = (x: number) => Math.round(x * 1e6) / 1e6;

/** Expected DN of `asset` of item `idx` at the cell centre of `p` (the pixel found through proj4). */
function dn(idx: number, asset: string, p: Point, res: 10 | 20): number {
  const req = requestAt('s2.B04', p.lat, p.lng, S2_TSLOT);
  const [col, row] = utmPixel(req.center.lat, req.center.lng, res);
  return s2Dn(idx, asset, col, row);
}
const RES: Record<string, 10 | 20> = { blue: 10, green: 10, red: 10, nir: 10, rededge1: 20, swir16: 20, swir22: 20 };
/** Reflectances of item B (baseline 05.11, offset not applied: DN × 0.0001 − 0.1) at `p`. */
const reflB = (p: Point) => Object.fromEntries(Object.entries(RES).map(([a, res]) => [a, r6(dn(1, a, p, res) * 0.0001 - 0.1)]));

before(async () => {
  up = await startRasterUpstreams(['s2']);
});
after(async () => up.close());
beforeEach(() => {
  up.reset();
  s2 = connector();
});

describe('sentinel2Connector', () => {
  describe('when the newest low-cloud scene is clear at the cell', () => {
    it('reads B04 at the cell centre in the item UTM CRS and applies the −1000 offset of baseline 05.11 (boa_offset_applied false)', async () => {
      const o = value(await at('s2.B04', S2_POINTS.west));
      const d = dn(1, 'red', S2_POINTS.west, 10);
      assert.equal(o.value, r6(d * 0.0001 - 0.1));
      assert.deepEqual(o.provenance, { source: 'earth_search_s2', ref: 'S2B_33TWL_20261110_0_L2A', captured_at: '2026-11-10T10:03:15Z', version: '05.11' });
      assert.equal(o.fn, 'stac_cog_pixel@1');
      assert.equal(o.tslot, S2_TSLOT);
      assert.equal(o.args?.dn, d);
      assert.equal(o.args?.offset, -0.1);
      assert.equal(o.args?.epsg, 32633);
    });

    it('sends the Earth Search query: intersects point, tslot window, eo:cloud_cover lt, newest first', async () => {
      const req = requestAt('s2.B08', S2_POINTS.west.lat, S2_POINTS.west.lng, S2_TSLOT);
      await s2.materialize(req);
      const { datetime, ...body } = JSON.parse(up.requests.find((r) => r.method === 'POST')!.body!);
      assert.deepEqual(body, {
        collections: ['sentinel-2-l2a'],
        intersects: { type: 'Point', coordinates: [req.center.lng, req.center.lat] },
        query: { 'eo:cloud_cover': { lt: 20 } },
        sortby: [{ field: 'properties.datetime', direction: 'desc' }],
        limit: 10,
      });
      // The tslot's 30 days from 2026-11-03, ending now at the latest.
      const [from, to] = datetime.split('/');
      assert.equal(from, '2026-11-03T00:00:00.000Z');
      assert.equal(Date.parse(to), Math.min(Date.parse('2026-12-02T23:59:59.999Z'), Date.parse(to)));
      assert.ok(Date.parse(to) <= Date.now());
    });

    it('reads 20 m assets (B05, B11, B12) on their own grid', async () => {
      for (const [band, asset] of [
        ['s2.B05', 'rededge1'],
        ['s2.B11', 'swir16'],
        ['s2.B12', 'swir22'],
      ]) {
        const o = value(await at(band, S2_POINTS.west));
        assert.equal(o.value, r6(dn(1, asset, S2_POINTS.west, 20) * 0.0001 - 0.1), band);
      }
    });
  });

  describe('when resolving the processing-baseline offset', () => {
    it('boa_offset_applied true: the COG is already corrected, the declared −0.1 is not applied again', async () => {
      const o = value(await at('s2.B04', S2_POINTS.west, 691));
      assert.equal(o.provenance.ref, 'S2A_33TWL_20261021_0_L2A');
      assert.equal(o.value, r6(dn(2, 'red', S2_POINTS.west, 10) * 0.0001));
      assert.equal(o.tslot, 691);
    });

    it('baseline 03.01 (before January 2022): no offset', async () => {
      const o = value(await at('s2.B08', S2_POINTS.west, 631));
      assert.equal(o.provenance.ref, 'S2B_33TWL_20211115_0_L2A');
      assert.equal(o.provenance.version, '03.01');
      assert.equal(o.value, r6(dn(3, 'nir', S2_POINTS.west, 10) * 0.0001));
    });

    it('reflectanceOf: the rule table', () => {
      const item = (props: Record<string, unknown>, band: Record<string, unknown>) =>
        ({ id: 'x', properties: { datetime: '2024-01-01T00:00:00Z', ...props }, assets: { red: { href: 'h', 'raster:bands': [band] } } }) as StacItem;
      const rows: Array<[Record<string, unknown>, Record<string, unknown>, number]> = [
        [{ 's2:processing_baseline': '05.10', 'earthsearch:boa_offset_applied': false }, { scale: 0.0001, offset: -0.1 }, -0.1],
        [{ 's2:processing_baseline': '04.00' }, { scale: 0.0001 }, -0.1], // offset missing from the metadata: −1000 × scale
        [{ 's2:processing_baseline': '05.09', 'earthsearch:boa_offset_applied': true }, { scale: 0.0001, offset: -0.1 }, 0],
        [{ 's2:processing_baseline': '02.14' }, { scale: 0.0001, offset: -0.1 }, 0],
        [{}, { scale: 0.0001, offset: -0.1 }, -0.1],
        [{ 'sentinel:processing_baseline': '04.00', 'sentinel:boa_offset_applied': true }, { scale: 0.0001 }, 0],
      ];
      rows.forEach(([p, b, want], i) => assert.equal(reflectanceOf(item(p, b), 'red').offset, want, `row ${i}`));
    });
  });

  describe('when SCL hides the surface', () => {
    it('a cloudy pixel in the low-cloud scene widens the search (cloud < 50, then < 80 one slot back) to the newest clear scene', async () => {
      const o = value(await at('s2.B04', S2_POINTS.east));
      assert.equal(o.provenance.ref, 'S2A_33TWL_20261120_0_L2A');
      assert.equal(o.value, r6(dn(0, 'red', S2_POINTS.east, 10) * 0.0001 - 0.1));
      assert.equal(searches(), 3);
      const bodies = up.requests.filter((r) => r.method === 'POST').map((r) => JSON.parse(r.body!));
      assert.deepEqual(
        bodies.map((b) => [b.query['eo:cloud_cover'].lt, b.datetime.slice(0, 10)]),
        [
          [20, '2026-11-03'],
          [50, '2026-11-03'],
          [80, '2026-10-04'],
        ],
      );
    });

    it('SCL 0/1/3/8/9/10 in every scene of every widened window: signed absence unavailable_capability, no value', async () => {
      const o = await at('s2.B04', S2_POINTS.southeast);
      assert.equal(o.status, 'absence');
      assert.equal((o as any).reason, 'unavailable_capability');
      assert.match((o as any).detail, /cloud\/shadow\/no data per SCL in all 3 scenes/);
      assert.equal(searches(), 4);
    });

    it('no scene over the cell at all (open sea): outside_coverage', async () => {
      const o = await at('indices.ndvi', S2_POINTS.ocean);
      assert.deepEqual([o.status, (o as any).reason], ['absence', 'outside_coverage']);
      assert.equal(up.count('/sentinel-cogs/'), 0);
    });
  });

  describe('when computing indices from the same scene', () => {
    it('ndvi, ndwi, mndwi, nbr, ndmi, ndbi, ndci, evi, savi, bsi, salinity_si, swir ratio follow bands.json', async () => {
      const r = reflB(S2_POINTS.west);
      const nd = (a: number, b: number) => r6((a - b) / (a + b));
      const want: Record<string, number> = {
        'indices.ndvi': nd(r.nir, r.red),
        'indices.ndwi': nd(r.green, r.nir),
        'indices.mndwi': nd(r.green, r.swir16),
        'indices.nbr': nd(r.nir, r.swir22),
        'indices.ndmi': nd(r.nir, r.swir16),
        'indices.ndbi': nd(r.swir16, r.nir),
        'indices.ndci': nd(r.rededge1, r.red),
        'indices.ndsi': nd(r.green, r.swir16),
        'indices.evi': r6((2.5 * (r.nir - r.red)) / (r.nir + 6 * r.red - 7.5 * r.blue + 1)),
        'indices.savi': r6((1.5 * (r.nir - r.red)) / (r.nir + r.red + 0.5)),
        'indices.bsi': r6((r.swir16 + r.red - (r.nir + r.blue)) / (r.swir16 + r.red + r.nir + r.blue)),
        'indices.salinity_si': r6(Math.sqrt(r.blue * r.red)),
        'indices.swir_b12_b11_ratio': r6(r.swir22 / r.swir16),
      };
      for (const [band, v] of Object.entries(want)) {
        const o = value(await at(band, S2_POINTS.west));
        assert.ok(Math.abs((o.value as number) - v) <= 2e-6, `${band}: ${o.value} vs ${v}`);
        assert.equal(o.provenance.ref, 'S2B_33TWL_20261110_0_L2A', band);
        assert.equal(o.fn, requestAt(band, 0, 0).band.function, band);
      }
      assert.equal(searches(), 1, 'one scene search serves every index of the cell');
    });

    it('turbidity_red: Dogliotti over a water pixel (SCL 6), an absence over land', async () => {
      const red = r6(dn(1, 'red', S2_POINTS.water, 10) * 0.0001 - 0.1);
      assert.ok(red > 0 && red < 0.1641, `fixture red ${red} is in the formula's range`);
      const o = value(await at('indices.turbidity_red', S2_POINTS.water));
      assert.equal(o.value, r6((228.1 * red) / (1 - red / 0.1641)));
      assert.equal(o.args?.scl, 6);
      const land = await at('indices.turbidity_red', S2_POINTS.west);
      assert.deepEqual([land.status, (land as any).reason], ['absence', 'unavailable_capability']);
      assert.match((land as any).detail, /SCL 6/);
    });

    it('dnbr: NBR of the clear scene nearest one year earlier minus NBR of the post scene', async () => {
      const p = S2_POINTS.west;
      const nbr = (idx: number) => {
        const nir = r6(dn(idx, 'nir', p, 10) * 0.0001 - 0.1);
        const swir = r6(dn(idx, 'swir22', p, 20) * 0.0001 - 0.1);
        return (nir - swir) / (nir + swir);
      };
      const o = value(await at('indices.dnbr', p));
      assert.equal(o.args?.pre_scene, 'S2A_33TWL_20251111_0_L2A');
      assert.ok(Math.abs((o.value as number) - (nbr(4) - nbr(1))) <= 2e-6, `${o.value}`);
    });
  });

  describe('when several bands of one cell are asked at once', () => {
    it('coalesces them: one STAC search, one header and one block read per asset', async () => {
      const bands = ['s2.B02', 's2.B03', 's2.B04', 's2.B05', 's2.B08', 's2.B11', 's2.B12', 'indices.ndvi', 'indices.evi', 'indices.bsi', 'indices.ndci'];
      const outs = await Promise.all(bands.map((b) => at(b, S2_POINTS.west)));
      outs.forEach((o, i) => assert.equal(o.status, 'value', `${bands[i]}: ${JSON.stringify(o)}`));
      assert.equal(searches(), 1);
      const files = new Map<string, number>();
      for (const r of up.requests.filter((x) => x.method === 'GET')) files.set(r.path, (files.get(r.path) ?? 0) + 1);
      assert.equal(files.size, 8, 'seven reflectance assets and SCL');
      for (const [path, n] of files) assert.equal(n, 2, `${path}: head + block`);
    });
  });

  describe('when the upstream misbehaves', () => {
    it('an asset href outside the egress allow-list is refused before any request is made there', async () => {
      const o = await at('s2.B04', S2_POINTS.west, 674);
      assert.equal(o.status, 'error');
      assert.match((o as any).reason, /egress refused/);
      assert.equal(up.outside.requests.length, 0);
      assert.ok(S2_ITEMS.some((d) => d.evil && (s2Item(d, up.outside.origin).assets as any).scl.href.startsWith(up.outside.origin)));
    });

    it('a search that does not answer in time: timeout (retryable), nothing signed', async () => {
      up.switches = { delay: { ms: 600, prefix: '/earth-search/' } };
      const o = await connector({ timeoutMs: 150, retries: 0 }).materialize(requestAt('s2.B04', S2_POINTS.west.lat, S2_POINTS.west.lng, S2_TSLOT, 2000));
      assert.equal(o.status, 'timeout');
    });

    it('5xx from STAC: upstream error, not an absence', async () => {
      up.switches = { fail: { status: 503, prefix: '/earth-search/' } };
      const o = await at('s2.B04', S2_POINTS.west);
      assert.equal(o.status, 'error');
      assert.match((o as any).reason, /^source_fetch_failed: .*HTTP 503/);
    });

    it('a search answer that is not JSON: source_format_mismatch', async () => {
      up.switches = { corrupt: { prefix: '/earth-search/', mode: 'all' } };
      const o = await at('s2.B04', S2_POINTS.west);
      assert.deepEqual([o.status, (o as any).format_mismatch], ['error', true]);
      assert.match((o as any).reason, /^source_format_mismatch: /);
    });

    it('garbled COG blocks: source_format_mismatch, never a value', async () => {
      up.switches = { corrupt: { prefix: '/sentinel-cogs/', mode: 'blocks' } };
      const o = await at('s2.B04', S2_POINTS.west);
      assert.deepEqual([o.status, (o as any).format_mismatch], ['error', true]);
      assert.match((o as any).reason, /^source_format_mismatch: /);
    });

    it('a tslot that has not begun: skipped (not observed yet), never an absence', async () => {
      const o = await at('s2.B04', S2_POINTS.west, currentTslot('medium') + 1);
      assert.equal(o.status, 'error');
      assert.match((o as any).reason, /not yet observed/);
      assert.equal(up.requests.length, 0);
    });

    it('a failed scene choice is not cached: the next request searches again', async () => {
      up.switches = { fail: { status: 502, prefix: '/earth-search/', times: 4 } };
      const c = connector({ retries: 0 });
      assert.equal((await at('s2.B04', S2_POINTS.west, S2_TSLOT, c)).status, 'error');
      up.switches = {};
      assert.equal((await at('s2.B04', S2_POINTS.west, S2_TSLOT, c)).status, 'value');
    });
  });
});
