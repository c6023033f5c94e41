import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sasTokenUrl, sentinel1Connector, signHref, type Sentinel1Connector } from '../../../src/sources/sentinel1.js';
import { startRasterUpstreams, type RasterUpstreams } from '../fixtures/raster-upstreams.js';
import { s1Linear, S1_ITEMS, S1_POINTS, S2_TSLOT, SAS_SIG, utmPixel } from '../fixtures/raster-scenes.js';
import { depsFor, requestAt, value } from './harness.js';

let up: RasterUpstreams;
let s1: Sentinel1Connector;
type Point = { lat: number; lng: number };
const at = (band: string, p: Point, tslot = S2_TSLOT) => s1.materialize(requestAt(band, p.lat, p.lng, tslot));
const db = (x: number) => Math.round(10 * Math.log10(x) * 1e4) / 1e4;
function linear(idx: number, pol: 'vv' | 'vh', p: Point): number {
  const req = requestAt('s1.vv_db', p.lat, p.lng, S2_TSLOT);
  const [col, row] = utmPixel(req.center.lat, req.center.lng, 20);
  return s1Linear(idx, pol, col, row);
}

before(async () => {
  up = await startRasterUpstreams(['s1']);
});
after(async () => up.close());
beforeEach(() => {
  up.reset();
  s1 = sentinel1Connector(depsFor(up)) as Sentinel1Connector;
});

describe('sentinel1Connector', () => {
  describe('when the newest RTC scene has the pixel', () => {
    it('returns 10·log10(linear gamma0) of VV and VH from one search and one SAS token', async () => {
      const [vv, vh] = await Promise.all([at('s1.vv_db', S1_POINTS.valid), at('s1.vh_db', S1_POINTS.valid)]);
      assert.equal(value(vv).value, db(linear(0, 'vv', S1_POINTS.valid)));
      assert.equal(value(vh).value, db(linear(0, 'vh', S1_POINTS.valid)));
      assert.equal(value(vv).provenance.ref, S1_ITEMS[0].id);
      assert.equal(value(vv).provenance.captured_at, '2026-11-15T16:50:24Z');
      assert.equal(value(vv).fn, 'sar_db@1');
      assert.equal(up.count('/pc/api/stac/v1/search'), 1);
      assert.equal(up.count('/pc/api/sas/v1/token/'), 1);
      assert.equal(s1.tokenFetches, 1);
    });

    it('appends the SAS token to every asset href (the blob store refuses requests without it)', async () => {
      await at('s1.vv_db', S1_POINTS.valid);
      const blobs = up.requests.filter((r) => r.path.startsWith('/pc-blob/'));
      assert.ok(blobs.length >= 2);
      for (const r of blobs) assert.match(r.query, new RegExp(`[?&]sig=${SAS_SIG}(&|$)`));
    });

    it('reuses the token and the COG header across cells until the token expires', async () => {
      await at('s1.vv_db', S1_POINTS.valid);
      const heads = up.requests.filter((r) => r.range === 'bytes=0-16383').length;
      await at('s1.vv_db', S1_POINTS.zeroVh);
      assert.equal(up.count('/pc/api/sas/v1/token/'), 1);
      assert.equal(up.requests.filter((r) => r.range === 'bytes=0-16383').length, heads, 'no second header read: cached by the bare href');
    });
  });

  describe('when the pixel has no backscatter', () => {
    it('nodata at the edge of the swath moves on to the next scene', async () => {
      const o = value(await at('s1.vv_db', S1_POINTS.swathEdge));
      assert.equal(o.provenance.ref, S1_ITEMS[1].id);
      assert.equal(o.value, db(linear(1, 'vv', S1_POINTS.swathEdge)));
    });

    it('linear 0 (≤ 0) is a signed absence, never −Infinity', async () => {
      const o = await at('s1.vh_db', S1_POINTS.zeroVh);
      assert.deepEqual([o.status, (o as any).reason], ['absence', 'unavailable_capability']);
      assert.match((o as any).detail, /≤ 0/);
    });

    it('no RTC scene covers the cell in the lookback: outside_coverage', async () => {
      const o = await at('s1.vv_db', { lat: 44.0, lng: 13.5 });
      assert.deepEqual([o.status, (o as any).reason], ['absence', 'outside_coverage']);
    });
  });

  describe('when the upstream misbehaves', () => {
    it('token endpoint 5xx: upstream error', async () => {
      up.switches = { fail: { status: 500, prefix: '/pc/api/sas/' } };
      const o = await at('s1.vv_db', S1_POINTS.valid);
      assert.equal(o.status, 'error');
      assert.match((o as any).reason, /HTTP 500/);
    });

    it('token answer without a token: source_format_mismatch', async () => {
      up.switches = { corrupt: { prefix: '/pc/api/sas/', mode: 'all' } };
      const o = await at('s1.vv_db', S1_POINTS.valid);
      assert.deepEqual([o.status, (o as any).format_mismatch], ['error', true]);
    });

    it('a 403 from the blob store (stale token) is an error, and the next read fetches a new token', async () => {
      up.switches = { fail: { status: 403, prefix: '/pc-blob/', times: 1 } };
      const o = await at('s1.vv_db', S1_POINTS.valid);
      assert.equal(o.status, 'error');
      assert.match((o as any).reason, /HTTP 403/);
      assert.equal(value(await at('s1.vv_db', S1_POINTS.zeroVh)).status, 'value');
      assert.equal(s1.tokenFetches, 2);
    });

    it('slow blob store: timeout', async () => {
      up.switches = { delay: { ms: 600, prefix: '/pc-blob/' } };
      const c = sentinel1Connector(depsFor(up, { timeoutMs: 150, retries: 0 }));
      const o = await c.materialize(requestAt('s1.vv_db', S1_POINTS.valid.lat, S1_POINTS.valid.lng, S2_TSLOT, 2000));
      assert.equal(o.status, 'timeout');
    });
  });

  it('sasTokenUrl and signHref follow the Planetary Computer layout', () => {
    assert.equal(sasTokenUrl('https://planetarycomputer.microsoft.com/api/stac/v1'), 'https://planetarycomputer.microsoft.com/api/sas/v1/token/sentinel-1-rtc');
    assert.equal(sasTokenUrl('http://127.0.0.1:9/pc'), 'http://127.0.0.1:9/pc/api/sas/v1/token/sentinel-1-rtc');
    assert.equal(signHref('https://a/b.tif', 'st=1&sig=x'), 'https://a/b.tif?st=1&sig=x');
    assert.equal(signHref('https://a/b.tif?v=2', 'sig=x'), 'https://a/b.tif?v=2&sig=x');
  });
});
