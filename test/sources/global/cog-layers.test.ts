import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { slowTslotOfYear, yearOfSlowTslot, annualMapFor, describeYears } from '../../../src/sources/annual.js';
import type { Materializer } from '../../../src/sources/contract.js';
import { CogReader } from '../../../src/sources/cog/reader.js';
import { biomassTileName, esaCciBiomassConnector } from '../../../src/sources/esa-cci-biomass.js';
import { gebcoConnector } from '../../../src/sources/gebco.js';
import { koppenGeigerConnector } from '../../../src/sources/koppen-geiger.js';
import { viirsLightsConnector } from '../../../src/sources/viirs-lights.js';
import { windowPixels, wsf2019Connector } from '../../../src/sources/wsf2019.js';
import { BIOMASS_TILE, BIOMASS_TILE_2022, GEBCO_GRID, GLOBAL_PATHS, KOPPEN, LIGHTS, pixelOf, startGlobalUpstreams, WSF_PIXEL, WSF_TILE, type GlobalUpstreams } from '../fixtures/global-upstreams.js';
import type { RasterSpec } from '../fixtures/raster-tiff.js';
import { absence, depsFor, failure, requestAt, value } from './harness.js';

let up: GlobalUpstreams;
before(async () => {
  up = await startGlobalUpstreams();
});
after(async () => up.close());
beforeEach(() => up.reset());

type Factory = (d: ReturnType<typeof depsFor>) => Materializer;
const make = (f: Factory, o?: Parameters<typeof depsFor>[1]) => f(depsFor(up, o));
const run = (c: Materializer, band: string, lat: number, lng: number, tslot?: number) => c.materialize(requestAt(band, lat, lng, tslot));
/** The spec's value at the pixel holding the cell centre of (lat, lng). */
function expected(spec: RasterSpec, band: string, lat: number, lng: number): number {
  const { center } = requestAt(band, lat, lng);
  const [c, r] = pixelOf(spec, center.lat, center.lng);
  return spec.values(c, r);
}

describe('annual slots', () => {
  it('a slow tslot names the year of its midpoint, and back', () => {
    for (let y = 1990; y <= 2100; y++) assert.equal(yearOfSlowTslot(slowTslotOfYear(y)), y, String(y));
    assert.equal(slowTslotOfYear(2022), 52);
    assert.equal(yearOfSlowTslot(56), 2026);
  });
  it('a mapped year reads its map, a later one the newest, a gap none', () => {
    const years = [2010, 2015, 2016, 2017];
    assert.deepEqual(annualMapFor(slowTslotOfYear(2015), years), { year: 2015, newest: false });
    assert.deepEqual(annualMapFor(slowTslotOfYear(2030), years), { year: 2017, newest: true });
    assert.deepEqual(annualMapFor(slowTslotOfYear(2012), years), { absent: 'no map for 2012 (maps exist for 2010, 2015-2017)' });
    assert.equal(describeYears([2000, 2001, 2005]), '2000-2001, 2005');
  });
});

describe('esaCciBiomassConnector', () => {
  const band = 'carbon.agb_t_per_ha';
  it('10° tiles by their north-west corner', () => {
    assert.deepEqual([biomassTileName(45.2, 15.3), biomassTileName(-5, 25), biomassTileName(-15, -55.5), biomassTileName(0, 0)], ['N50E010', 'N00E020', 'S10W060', 'N10E000']);
  });
  it('reads the pixel of the slot year map (LZW tile), t/ha', async () => {
    const c = make(esaCciBiomassConnector);
    for (const [lat, lng] of [
      [45.2, 15.3],
      [41.01, 19.99],
      [49.3, 10.9],
    ]) {
      const o = value(await run(c, band, lat!, lng!, slowTslotOfYear(2020)));
      assert.equal(o.value, expected(BIOMASS_TILE, band, lat!, lng!));
      assert.equal(o.provenance.ref, 'N50E010_ESACCI-BIOMASS-L4-AGB-MERGED-100m-2020-fv6.0.tif');
      assert.equal(o.provenance.captured_at, '2020-12-31T23:59:59Z');
      assert.equal(o.fn, 'point_sample@1');
    }
  });
  it('a slot after 2022 reads the 2022 map, attributed to the slot asked', async () => {
    const now = slowTslotOfYear(new Date().getUTCFullYear());
    const o = value(await run(make(esaCciBiomassConnector), band, 45.2, 15.3, now));
    assert.equal(o.value, expected(BIOMASS_TILE_2022, band, 45.2, 15.3));
    assert.equal(o.tslot, now);
    assert.equal(o.provenance.captured_at, '2022-12-31T23:59:59Z');
  });
  it('nodata, a missing tile (ocean) and a year without a map are outside_coverage absences', async () => {
    const c = make(esaCciBiomassConnector);
    absence(await run(c, band, 49.9, 10.1, slowTslotOfYear(2020)), 'outside_coverage');
    const sea = absence(await run(c, band, 35.5, -40.5, slowTslotOfYear(2020)), 'outside_coverage');
    assert.match(sea.detail!, /open ocean/);
    assert.equal(up.count(`${GLOBAL_PATHS.esa_cci_biomass}/2020/N40W050_`), 1);
    up.reset();
    const gap = absence(await run(c, band, 45.2, 15.3, slowTslotOfYear(2013)), 'outside_coverage');
    assert.match(gap.detail!, /no map for 2013/);
    assert.equal(up.requests.length, 0, 'a year without a map asks nothing');
  });
});

describe('gebcoConnector', () => {
  const band = 'gebco.elevation_m';
  it('reads a BigTIFF COG: negative over the sea floor, positive on land', async () => {
    const c = make(gebcoConnector) as Materializer & { reader: CogReader };
    const sea = value(await run(c, band, -20.3, -140.7));
    assert.equal(sea.value, expected(GEBCO_GRID, band, -20.3, -140.7));
    assert.ok((sea.value as number) < 0);
    const land = value(await run(c, band, 46.5, 8.1));
    assert.equal(land.value, expected(GEBCO_GRID, band, 46.5, 8.1));
    assert.ok((land.value as number) > 0);
    assert.equal(land.provenance.ref, 'GEBCO_2024.tif');
    const h = await c.reader.header(up.bases.gebco!);
    assert.equal(h!.tiff.bigTiff, true, 'the fixture is a BigTIFF');
  });
  it('a block costs its own range requests, the head is read once', async () => {
    const c = make(gebcoConnector) as Materializer & { reader: CogReader };
    await run(c, band, 10.1, 10.1);
    const first = up.requests.length;
    await run(c, band, 10.1, 10.11);
    assert.equal(up.requests.length, first, 'the same block: no request');
    await run(c, band, -60.2, 120.4);
    assert.ok(up.requests.length > first && up.requests.length <= first + 3, 'another block: its offset entries and the block');
    assert.equal(up.requests.filter((r) => r.range?.startsWith('bytes=0-')).length, 1);
  });
});

describe('wsf2019Connector', () => {
  const band = 'builtup.wsf2019_fraction_1km';
  /** The fraction the spec gives over the window the connector reads. */
  function fraction(lat: number, lng: number): { f: number; w: number; h: number } {
    const { center } = requestAt(band, lat, lng);
    const { width: w, height: h } = windowPixels([WSF_PIXEL, 0, 0, 0, -WSF_PIXEL, 0], 4326, center.lat);
    const [c0, r0] = pixelOf(WSF_TILE, center.lat, center.lng);
    let built = 0;
    let valid = 0;
    for (let r = r0 - Math.floor(h / 2); r < r0 - Math.floor(h / 2) + h; r++) {
      for (let c = c0 - Math.floor(w / 2); c < c0 - Math.floor(w / 2) + w; c++) {
        if (c < 0 || r < 0 || c >= WSF_TILE.width || r >= WSF_TILE.height) continue;
        valid++;
        if (WSF_TILE.values(c, r) === 255) built++;
      }
    }
    return { f: Math.round((built / valid) * 10_000) / 10_000, w, h };
  }
  it('a 1 km window is about 101 pixels of 10 m on a side, wider in degrees of longitude', () => {
    const eq = windowPixels([WSF_PIXEL, 0, 0, 0, -WSF_PIXEL, 0], 4326, 0);
    assert.deepEqual([eq.width % 2, eq.height % 2], [1, 1]);
    assert.ok(Math.abs(eq.height - 101) <= 2 && Math.abs(eq.width - 101) <= 2, JSON.stringify(eq));
    const north = windowPixels([WSF_PIXEL, 0, 0, 0, -WSF_PIXEL, 0], 4326, 60);
    assert.ok(north.width > 1.9 * north.height, JSON.stringify(north));
  });
  it('the settlement fraction over the window, with the window in args', async () => {
    const c = make(wsf2019Connector);
    for (const [lat, lng] of [
      [45.05, 9.05],
      [45.0123, 9.0871],
      [45.09, 9.01],
    ]) {
      const o = value(await run(c, band, lat!, lng!));
      const want = fraction(lat!, lng!);
      assert.equal(o.value, want.f, `${lat},${lng}`);
      assert.deepEqual((o.args as any).window_px, [want.w, want.h]);
      assert.equal((o.args as any).window_m, 1000);
      assert.equal(o.fn, 'window_fraction@1');
    }
    // Near the edge of the image only the pixels inside count.
    const edge = value(await run(c, band, 45.0995, 9.0005));
    assert.ok((edge.args as any).valid_px < (edge.args as any).window_px[0] * (edge.args as any).window_px[1]);
    assert.equal(edge.value, fraction(45.0995, 9.0005).f);
  });
  it('reads only the blocks covering the window', async () => {
    const c = make(wsf2019Connector);
    await run(c, band, 45.05, 9.05);
    // The head, then at most the four 256-pixel blocks a 101-pixel window can touch.
    assert.ok(up.requests.length >= 2 && up.requests.length <= 5, String(up.requests.length));
  });
  it('outside the map: absence; a value other than 0 or 255: source_format_mismatch', async () => {
    absence(await run(make(wsf2019Connector), band, 46.5, 9.05), 'outside_coverage');
    const bad = make(wsf2019Connector, { env: { SVC_UPSTREAM_DLR_WSF2019_URL: `${up.origin}/wsf/WSF2019_bad.tif` } });
    failure(await run(bad, band, 45.05, 9.05), 'source_format_mismatch', /pixel value 17/);
  });
});

describe('viirsLightsConnector (operator-hosted)', () => {
  const band = 'lights.viirs_annual_radiance';
  it('not wired until the operator sets its URL; nothing is fetched', () => {
    const c = make(viirsLightsConnector, { env: { SVC_UPSTREAM_VIIRS_LIGHTS_URL: '' } });
    assert.deepEqual(c.bands, []);
    assert.equal(up.requests.length, 0);
  });
  it('reads float32 radiance as the shortest decimal of the float32; 0 is a value, nodata an absence', async () => {
    const c = make(viirsLightsConnector);
    assert.deepEqual(c.bands, [band]);
    for (const [lat, lng] of [
      [40.5, 10.5],
      [40.2, 10.9],
    ]) {
      const o = value(await run(c, band, lat!, lng!));
      assert.equal(Math.fround(o.value as number), Math.fround(expected(LIGHTS, band, lat!, lng!)));
      assert.ok(String(o.value).length < 12, String(o.value));
      assert.equal(o.provenance.ref, 'VNL_v2_npp_2023_global_vcmslcfg_c202402081600.average_masked.dat.tif');
    }
    const [c0] = pixelOf(LIGHTS, 40.5, 10 + 17.5 / 240);
    assert.equal(c0 % 17, 0);
    assert.equal(value(await run(c, band, 40.5, 10 + 17.5 / 240)).value, 0);
    absence(await run(c, band, 40.99, 10.5), 'outside_coverage');
  });
});

describe('koppenGeigerConnector (operator-hosted)', () => {
  const band = 'climate.koppen_geiger_1991_2020';
  it('a class 1..30; 0 (sea) is an absence; a value that is no class is source_format_mismatch', async () => {
    const c = make(koppenGeigerConnector);
    const saw = { value: false, sea: false, bad: false };
    for (let i = 0; i < 40 && !(saw.value && saw.sea && saw.bad); i++) {
      const lat = 30.5;
      const lng = 30 + (i + 0.5) / 120;
      const want = expected(KOPPEN, band, lat, lng);
      const o = await run(c, band, lat, lng);
      if (want >= 1 && want <= 30) {
        assert.equal(value(o).value, want);
        saw.value = true;
      } else if (want === 0) {
        absence(o, 'outside_coverage');
        saw.sea = true;
      } else {
        failure(o, 'source_format_mismatch', /not a class/);
        saw.bad = true;
      }
    }
    assert.deepEqual(saw, { value: true, sea: true, bad: true });
  });
});

describe('every COG layer', () => {
  const cases: Array<[string, Factory, string, number, number, number | undefined, string]> = [
    ['biomass', esaCciBiomassConnector, 'carbon.agb_t_per_ha', 45.2, 15.3, slowTslotOfYear(2020), '/cci/'],
    ['gebco', gebcoConnector, 'gebco.elevation_m', 46.5, 8.1, undefined, '/gebco/'],
    ['wsf', wsf2019Connector, 'builtup.wsf2019_fraction_1km', 45.05, 9.05, undefined, '/wsf/'],
    ['lights', viirsLightsConnector, 'lights.viirs_annual_radiance', 40.5, 10.5, undefined, '/lights/'],
    ['koppen', koppenGeigerConnector, 'climate.koppen_geiger_1991_2020', 30.5, 30.01, undefined, '/koppen/'],
  ];
  for (const [name, factory, band, lat, lng, tslot, prefix] of cases) {
    describe(name, () => {
      it('5xx: source_fetch_failed, nothing signed', async () => {
        up.switches = { fail: { status: 503, prefix } };
        failure(await run(make(factory), band, lat, lng, tslot), 'source_fetch_failed', /HTTP 503/);
      });
      it('bytes that are not a TIFF: source_format_mismatch', async () => {
        up.switches = { body: { text: '<html><body>502 Bad Gateway</body></html>', prefix } };
        failure(await run(make(factory), band, lat, lng, tslot), 'source_format_mismatch', /not a TIFF/);
      });
      it('only the configured host is asked: another allow-list refuses before any request', async () => {
        const o = await run(make(factory, { allowed: ['http://127.0.0.1:9'] }), band, lat, lng, tslot);
        assert.equal(o.status, 'error');
        assert.match((o as any).reason, /egress refused/);
        assert.equal(up.requests.length, 0);
      });
      it('a value names the source key, the file and a version', async () => {
        const o = value(await run(make(factory), band, lat, lng, tslot));
        assert.equal(o.provenance.source, make(factory).key);
        assert.ok(o.provenance.ref && o.provenance.version);
        assert.ok(up.requests.every((r) => r.path.startsWith(prefix)));
      });
    });
  }
});
