import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { slowTslotOfYear } from '../../../src/sources/annual.js';
import { identifyValue, statisticsSum, worldpopConnector } from '../../../src/sources/worldpop.js';
import { metresPerDegree } from '../../../src/sources/footprint.js';
import { FormatMismatch } from '../../../src/sources/json-helpers.js';
import { GLOBAL_PATHS, startGlobalUpstreams, type GlobalUpstreams } from '../fixtures/global-upstreams.js';
import { absence, depsFor, failure, requestAt, value } from './harness.js';

let up: GlobalUpstreams;
before(async () => {
  up = await startGlobalUpstreams();
});
after(async () => up.close());
beforeEach(() => up.reset());

const PIXEL = 'population.worldpop_100m';
const KM = 'population.count_1km';
const run = (band: string, lat: number, lng: number, year?: number) => worldpopConnector(depsFor(up)).materialize(requestAt(band, lat, lng, year === undefined ? undefined : slowTslotOfYear(year)));

describe('ArcGIS answers', () => {
  it('identify: the value text as a number, NoData as null, anything else a format mismatch', () => {
    assert.equal(identifyValue({ objectId: 0, name: 'Pixel', value: '12.5', location: {}, properties: null, catalogItems: null, catalogItemVisibilities: [] }), 12.5);
    assert.equal(identifyValue({ objectId: 0, name: 'Pixel', value: 'NoData' }), null);
    assert.throws(() => identifyValue({ name: 'Pixel', value: '1, 2, 3' }), FormatMismatch);
    assert.throws(() => identifyValue({ name: 'Pixel' }), FormatMismatch);
    assert.throws(() => identifyValue([1]), FormatMismatch);
    assert.throws(() => identifyValue({ error: { code: 500, message: 'Error performing identify', details: [] } }), /ArcGIS error 500: Error performing identify/);
  });
  it('statistics: sum when given, else mean × count; no valid pixel is null', () => {
    assert.deepEqual(statisticsSum({ statistics: [{ min: 0, max: 9, mean: 2, standardDeviation: 1, count: 10, sum: 21.5 }] }), { sum: 21.5, pixels: 10 });
    assert.deepEqual(statisticsSum({ statistics: [{ min: 0, max: 9, mean: 2.5, standardDeviation: 1, count: 10 }] }), { sum: 25, pixels: 10 });
    assert.equal(statisticsSum({ statistics: [] }), null);
    assert.equal(statisticsSum({ statistics: [{ min: 0, max: 0, mean: 0, standardDeviation: 0, count: 0 }] }), null);
    assert.throws(() => statisticsSum({ histograms: [] }), FormatMismatch);
  });
});

describe('worldpopConnector', () => {
  it('people in the 100 m pixel of the slot year map, via identify with time = 1 January', async () => {
    const o = value(await run(PIXEL, 51.5, 7.4, 2015));
    const req = requestAt(PIXEL, 51.5, 7.4);
    assert.equal(o.value, Math.round((req.center.lat * 10 + req.center.lng + 15) * 1000) / 1000);
    assert.equal(o.fn, 'arcgis_identify@1');
    assert.equal(o.provenance.captured_at, '2015-12-31T23:59:59Z');
    const q = up.requests[0]!.query;
    assert.equal(up.requests[0]!.path, `${GLOBAL_PATHS.worldpop}/identify`);
    assert.deepEqual([q.get('geometryType'), q.get('sr'), q.get('returnGeometry'), q.get('f'), q.get('time')], ['esriGeometryPoint', '4326', 'false', 'json', String(Date.UTC(2015, 0, 1))]);
    assert.deepEqual(JSON.parse(q.get('geometry')!).spatialReference, { wkid: 4326 });
    assert.match(o.provenance.ref!, /^\/arcgis\/rest\/services\/WorldPop_Total_Population_100m\/ImageServer\/identify\?geometry=/);
  });
  it('people in the 1 km square: the envelope is ±500 m around the centre, the sum from the statistics', async () => {
    const o = value(await run(KM, 51.5, 7.4, 2020));
    assert.equal(o.value, Math.round((12.25 + 20) * 121 * 10) / 10);
    assert.deepEqual([(o.args as any).window_m, (o.args as any).valid_pixels, (o.args as any).year], [1000, 121, 2020]);
    const q = up.requests[0]!.query;
    assert.equal(q.get('geometryType'), 'esriGeometryEnvelope');
    const env = JSON.parse(q.get('geometry')!);
    const m = metresPerDegree(requestAt(KM, 51.5, 7.4).center.lat);
    assert.ok(Math.abs((env.ymax - env.ymin) * m.lat - 1000) < 1, 'north-south side 1 km');
    assert.ok(Math.abs((env.xmax - env.xmin) * m.lng - 1000) < 1, 'east-west side 1 km');
    assert.equal(o.fn, 'arcgis_window_sum@1');
  });
  it('a slot after 2020 reads the 2020 map; before 2000 is an absence without a request', async () => {
    const now = new Date().getUTCFullYear();
    const o = value(await run(PIXEL, 51.5, 7.4, now));
    assert.equal(o.tslot, slowTslotOfYear(now));
    assert.equal(up.requests[0]!.query.get('time'), String(Date.UTC(2020, 0, 1)));
    assert.equal((o.args as any).newest_map_for_later_slot, true);
    up.reset();
    absence(await run(PIXEL, 51.5, 7.4, 1995), 'outside_coverage');
    assert.equal(up.requests.length, 0);
  });
  it('NoData and an empty square are outside_coverage absences; 0 people is a value', async () => {
    absence(await run(PIXEL, 10, -30.5, 2020), 'outside_coverage');
    absence(await run(KM, 10, -30.5, 2020), 'outside_coverage');
    up.worldpop = { pixel: () => 0, stats: () => ({ min: 0, max: 0, mean: 0, standardDeviation: 0, count: 121 }) };
    assert.equal(value(await run(PIXEL, 51.5, 7.4, 2020)).value, 0);
    assert.equal(value(await run(KM, 51.5, 7.4, 2020)).value, 0);
  });
  it('an ArcGIS error object or an HTTP error is source_fetch_failed; another shape source_format_mismatch', async () => {
    up.worldpop = {
      pixel: () => {
        throw new Error('unused');
      },
      stats: () => null,
    };
    up.switches = {
      body: { text: JSON.stringify({ error: { code: 500, message: 'Error performing identify', details: [] } }), prefix: `${GLOBAL_PATHS.worldpop}/identify`, type: 'application/json' },
    };
    failure(await run(PIXEL, 51.5, 7.4, 2020), 'source_fetch_failed', /ArcGIS error 500/);
    up.switches = { fail: { status: 502, prefix: GLOBAL_PATHS.worldpop } };
    failure(await run(KM, 51.5, 7.4, 2020), 'source_fetch_failed', /HTTP 502/);
    up.switches = { body: { text: '<html>maintenance</html>', prefix: GLOBAL_PATHS.worldpop } };
    failure(await run(PIXEL, 51.5, 7.4, 2020), 'source_format_mismatch', /not JSON/);
    up.switches = { body: { text: JSON.stringify({ name: 'Pixel', value: 'abc' }), prefix: GLOBAL_PATHS.worldpop, type: 'application/json' } };
    failure(await run(PIXEL, 51.5, 7.4, 2020), 'source_format_mismatch', /neither a number nor NoData/);
  });
  it('only the configured image service is asked', async () => {
    const c = worldpopConnector(depsFor(up, { allowed: ['http://127.0.0.1:9'] }));
    const o = await c.materialize(requestAt(PIXEL, 51.5, 7.4));
    assert.match((o as any).reason, /egress refused/);
    assert.equal(up.requests.length, 0);
    await run(PIXEL, 51.5, 7.4);
    await run(KM, 51.5, 7.4);
    assert.ok(up.requests.every((r) => r.path.startsWith(GLOBAL_PATHS.worldpop)));
  });
});
