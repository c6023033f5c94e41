import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Materializer, MaterializeOutcome } from '../../../src/sources/contract.js';
import { chirpsConnector, chirpsDay } from '../../../src/sources/chirps.js';
import { hansenGfcConnector, hansenTileId } from '../../../src/sources/hansen-gfc.js';
import { jrcGfc2020Connector } from '../../../src/sources/jrc-gfc2020.js';
import { gswTileId, jrcGswConnector } from '../../../src/sources/jrc-gsw.js';
import { worldCoverConnector, worldCoverTileName } from '../../../src/sources/worldcover.js';
import type { CogReader } from '../../../src/sources/cog/reader.js';
import { startRasterUpstreams, type RasterUpstreams } from '../fixtures/raster-upstreams.js';
import { chirps, CHIRPS_TSLOT, geoPixel, gfc2020, gswOccurrence, gswRecurrence, hansen, worldCover } from '../fixtures/raster-scenes.js';
import type { RasterSpec } from '../fixtures/raster-tiff.js';
import { depsFor, requestAt, value } from './harness.js';

let up: RasterUpstreams;
const make = (f: (d: ReturnType<typeof depsFor>) => Materializer) => f(depsFor(up)) as Materializer & { reader: CogReader };
const run = (c: Materializer, band: string, lat: number, lng: number, tslot?: number) => c.materialize(requestAt(band, lat, lng, tslot));
/** The spec's value at the pixel holding the cell centre of (lat, lng). */
function expected(spec: RasterSpec, band: string, lat: number, lng: number): number {
  const { center } = requestAt(band, lat, lng);
  const [c, r] = geoPixel(spec, center.lat, center.lng);
  return spec.values(c, r);
}
const absence = (o: MaterializeOutcome, reason: string) => assert.deepEqual([o.status, (o as any).reason], ['absence', reason], JSON.stringify(o));

before(async () => {
  up = await startRasterUpstreams(['tiles']);
});
after(async () => up.close());
beforeEach(() => up.reset());

describe('tile names', () => {
  it('WorldCover: 3° tiles by their south-west corner', () => {
    assert.deepEqual([worldCoverTileName(46.1, 16.4), worldCoverTileName(-2.5, -59.1), worldCoverTileName(0.5, 0.5), worldCoverTileName(-0.1, -0.1)], ['N45E015', 'S03W060', 'N00E000', 'S03W003']);
  });
  it('JRC GSW and Hansen: 10° tiles by their north-west corner', () => {
    assert.deepEqual([gswTileId(45.05, 15.05), gswTileId(-3, -55), gswTileId(0.5, 100)], ['10E_50N', '60W_0N', '100E_10N']);
    assert.deepEqual([hansenTileId(45.05, 15.05), hansenTileId(-3, -55), hansenTileId(5, -5)], ['50N_010E', '00N_060W', '10N_010W']);
  });
  it('CHIRPS: a daily tslot names its UTC day', () => {
    assert.deepEqual(chirpsDay(CHIRPS_TSLOT), ['2026', '10', '01']);
  });
});

describe('worldCoverConnector', () => {
  it('reads the class at the cell centre from the N45E015 tile', async () => {
    const c = make(worldCoverConnector);
    for (const [lat, lng] of [
      [46.123, 16.456],
      [45.504, 17.991],
      [47.5, 15.2],
    ]) {
      const o = value(await run(c, 'landcover.esa_worldcover_2021', lat, lng));
      assert.equal(o.value, expected(worldCover, 'landcover.esa_worldcover_2021', lat, lng), `${lat},${lng}`);
      assert.equal(o.provenance.ref, 'ESA_WorldCover_10m_2021_v200_N45E015_Map.tif');
    }
  });
  it('class 0 (nodata) and a missing tile (ocean, 404) are outside_coverage absences', async () => {
    const c = make(worldCoverConnector);
    absence(await run(c, 'landcover.esa_worldcover_2021', 47.99, 16.0), 'outside_coverage');
    absence(await run(c, 'landcover.esa_worldcover_2021', 40.5, 16.5), 'outside_coverage');
    assert.equal(up.count('/worldcover/v200/2021/map/ESA_WorldCover_10m_2021_v200_N39E015_Map.tif'), 1);
  });
  it('caches the header: a second point in the same COG costs only its block (or nothing)', async () => {
    const c = make(worldCoverConnector);
    await run(c, 'landcover.esa_worldcover_2021', 47.9, 15.1);
    assert.equal(up.requests.length, 2);
    await run(c, 'landcover.esa_worldcover_2021', 47.85, 15.15);
    assert.equal(up.requests.length, 2, 'same block: zero requests');
    await run(c, 'landcover.esa_worldcover_2021', 45.2, 17.8);
    assert.equal(up.requests.length, 3, 'other block: one request');
    assert.equal(up.requests[2].range === 'bytes=0-16383', false);
  });
});

describe('jrcGswConnector', () => {
  it('occurrence and recurrence in percent; 255 is an outside_coverage absence', async () => {
    const c = make(jrcGswConnector);
    assert.equal(value(await run(c, 'water.gsw_occurrence', 45.05, 15.05)).value, expected(gswOccurrence, 'water.gsw_occurrence', 45.05, 15.05));
    assert.equal(value(await run(c, 'water.gsw_recurrence', 41.33, 18.77)).value, expected(gswRecurrence, 'water.gsw_recurrence', 41.33, 18.77));
    absence(await run(c, 'water.gsw_occurrence', 45.05, 10.25), 'outside_coverage');
  });
  it('a missing 10° tile is an outside_coverage absence', async () => {
    absence(await run(make(jrcGswConnector), 'water.gsw_occurrence', -20.5, 30.5), 'outside_coverage');
  });
});

describe('hansenGfcConnector', () => {
  it('reads treecover2000, lossyear and gain from LZW strip GeoTIFFs, and 0 is a real value', async () => {
    const c = make(hansenGfcConnector);
    for (const [band, layer] of [
      ['forest.treecover2000', 'treecover2000'],
      ['forest.lossyear', 'lossyear'],
      ['forest.gain', 'gain'],
    ]) {
      for (const [lat, lng] of [
        [45.05, 15.05],
        [44.23, 11.87],
        [49.95, 10.05],
      ]) {
        const o = value(await run(c, band, lat, lng));
        assert.equal(o.value, expected(hansen[layer], band, lat, lng), `${band} at ${lat},${lng}`);
      }
    }
    // (col 1, row 50): treecover (1 + 100) % 101 = 0 — a real zero, not an absence.
    const zero = value(await run(c, 'forest.treecover2000', 44.95, 10.15));
    assert.equal(zero.value, 0);
  });
  it('a missing tile is an outside_coverage absence; beyond 80°N no request is made', async () => {
    const c = make(hansenGfcConnector);
    absence(await run(c, 'forest.lossyear', -5.5, -170.5), 'outside_coverage');
    up.reset();
    absence(await run(c, 'forest.lossyear', 85, 10), 'outside_coverage');
    assert.equal(up.requests.length, 0);
  });
});

describe('jrcGfc2020Connector', () => {
  it('1/0 from the single global COG; nodata south of 60°S is outside_coverage', async () => {
    const c = make(jrcGfc2020Connector);
    for (const [lat, lng] of [
      [45.05, 15.05],
      [-3.3, -60.2],
      [10.7, 100.9],
    ]) {
      assert.equal(value(await run(c, 'forest.jrc_gfc2020', lat, lng)).value, expected(gfc2020, 'forest.jrc_gfc2020', lat, lng));
    }
    absence(await run(c, 'forest.jrc_gfc2020', -75, 10), 'outside_coverage');
    assert.equal(up.count('/gfc2020/'), 5, 'one header, then one block per distinct tile (four)');
  });
});

describe('chirpsConnector', () => {
  it('reads the day COG (float32 mm) named by the tslot', async () => {
    const c = make(chirpsConnector);
    const o = value(await run(c, 'precip.chirps_daily_mm', 44.98, 15.02, CHIRPS_TSLOT));
    assert.equal(o.value, expected(chirps, 'precip.chirps_daily_mm', 44.98, 15.02));
    assert.equal(o.tslot, CHIRPS_TSLOT);
    assert.equal(o.provenance.captured_at, '2026-10-01T00:00:00Z');
    assert.equal(c.history, true);
  });
  it('−9999 is an outside_coverage absence', async () => {
    absence(await run(make(chirpsConnector), 'precip.chirps_daily_mm', 40.02, 0.27, CHIRPS_TSLOT), 'outside_coverage');
  });
  it('beyond 50° of latitude: absence without a request', async () => {
    absence(await run(make(chirpsConnector), 'precip.chirps_daily_mm', 55, 15, CHIRPS_TSLOT), 'outside_coverage');
    assert.equal(up.requests.length, 0);
  });
  it('a day not yet published (404) is skipped, not signed', async () => {
    const o = await run(make(chirpsConnector), 'precip.chirps_daily_mm', 44.98, 15.02, CHIRPS_TSLOT + 1);
    assert.equal(o.status, 'error');
    assert.match((o as any).reason, /not yet published/);
  });
});

describe('every tile connector', () => {
  const cases: Array<[string, (d: ReturnType<typeof depsFor>) => Materializer, string, number, number, number | undefined, string]> = [
    ['worldcover', worldCoverConnector, 'landcover.esa_worldcover_2021', 46.1, 16.4, undefined, '/worldcover/'],
    ['gsw', jrcGswConnector, 'water.gsw_occurrence', 45.05, 15.05, undefined, '/gsw/'],
    ['hansen', hansenGfcConnector, 'forest.gain', 45.05, 15.05, undefined, '/hansen/'],
    ['gfc2020', jrcGfc2020Connector, 'forest.jrc_gfc2020', 45.05, 15.05, undefined, '/gfc2020/'],
    ['chirps', chirpsConnector, 'precip.chirps_daily_mm', 44.98, 15.02, CHIRPS_TSLOT, '/chirps/'],
  ];
  for (const [name, factory, band, lat, lng, tslot, prefix] of cases) {
    describe(name, () => {
      it('5xx: upstream error (retryable), nothing signed', async () => {
        up.switches = { fail: { status: 503, prefix } };
        const o = await run(make(factory), band, lat, lng, tslot);
        assert.equal(o.status, 'error');
        assert.match((o as any).reason, /^source_fetch_failed: .*HTTP 503/);
      });
      it('slow upstream: timeout', async () => {
        up.switches = { delay: { ms: 500, prefix } };
        const c = factory(depsFor(up, { timeoutMs: 120, retries: 0 }));
        assert.equal((await c.materialize(requestAt(band, lat, lng, tslot, 1500))).status, 'timeout');
      });
      it('bytes that are not a TIFF: source_format_mismatch', async () => {
        up.switches = { corrupt: { prefix, mode: 'all' } };
        const o = await run(make(factory), band, lat, lng, tslot);
        assert.deepEqual([o.status, (o as any).format_mismatch], ['error', true]);
        assert.match((o as any).reason, /^source_format_mismatch: .*not a TIFF/);
      });
      it('a truncated block: source_format_mismatch', async () => {
        up.switches = { truncate: { prefix } };
        const o = await run(make(factory), band, lat, lng, tslot);
        assert.deepEqual([o.status, (o as any).format_mismatch], ['error', true]);
      });
      it('provenance names the source key and the file; fn is the band function', async () => {
        const o = value(await run(make(factory), band, lat, lng, tslot));
        assert.equal(o.provenance.source, make(factory).key);
        assert.ok(o.provenance.ref && o.provenance.version);
        assert.equal(o.fn, 'point_sample@1');
      });
    });
  }
});
