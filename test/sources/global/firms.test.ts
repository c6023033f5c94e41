import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { currentTslot } from '../../../src/protocol/tslot.js';
import { FAILURE_HOLD_MS, FIRE_RADIUS_KM, firmsConnector, REFRESH_MS } from '../../../src/sources/firms.js';
import { acquisitionMs, concatDetections, distanceKm, FireGrid, parseFirmsCsv } from '../../../src/sources/firms-index.js';
import { FormatMismatch } from '../../../src/sources/json-helpers.js';
import { FIRMS_NOAA20, FIRMS_SNPP, MODIS_HEADER, startGlobalUpstreams, VIIRS_HEADER, viirsRow, type GlobalUpstreams } from '../fixtures/global-upstreams.js';
import { absence, depsFor, failure, requestAt, value } from './harness.js';

let up: GlobalUpstreams;
before(async () => {
  up = await startGlobalUpstreams();
});
after(async () => up.close());
beforeEach(() => up.reset());
const isoS = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * A connector on a clock the test moves, starting at noon (UTC) of the real day: requests name
 * the real present day, and a test moving the clock by an hour or two stays inside it whenever it
 * runs (a start at the real time would cross midnight when run late in the evening).
 */
function clocked(start = Math.floor(Date.now() / 86_400_000) * 86_400_000 + 43_200_000) {
  const clock = { t: start };
  const c = firmsConnector(depsFor(up), { now: () => clock.t });
  return { c, clock };
}

describe('FIRMS CSV parsing', () => {
  const day = '2026-11-20';
  it('reads the VIIRS layout by column name, with HHMM times that may lack leading zeros', () => {
    const d = parseFirmsCsv([VIIRS_HEADER, viirsRow(10, 20, 5.5, day, '0130'), viirsRow(-10.5, -20.25, 0, day, '7', '1'), ''].join('\r\n'), 1, 10);
    assert.equal(d.n, 2);
    assert.deepEqual([...d.lat], [10, -10.5]);
    assert.deepEqual([...d.lng], [20, -20.25]);
    assert.deepEqual([...d.frp], [5.5, 0]);
    assert.deepEqual([...d.acquired], [Date.parse('2026-11-20T01:30:00Z'), Date.parse('2026-11-20T00:07:00Z')]);
    assert.deepEqual([...d.feed], [1, 1]);
    assert.equal(d.newest, Date.parse('2026-11-20T01:30:00Z'));
  });
  it('reads the MODIS layout (brightness, bright_t31, numeric confidence) and a header-only file', () => {
    const d = parseFirmsCsv(`${MODIS_HEADER}\n-3.2,115.1,330.1,1.1,1.0,${day},0512,Terra,MODIS,78,6.1NRT,299.1,18.3,D\n`, 0, 10);
    assert.deepEqual([d.n, d.lat[0], d.frp[0]], [1, -3.2, 18.3]);
    const empty = parseFirmsCsv(`${VIIRS_HEADER}\n`, 0, 10);
    assert.equal(empty.n, 0);
    assert.ok(Number.isNaN(empty.newest));
  });
  it('refuses what is not the documented CSV, naming the line', () => {
    const bad: Array<[string, RegExp]> = [
      ['<html><body>Service unavailable</body></html>', /no latitude column/],
      ['latitude,longitude,acq_date,acq_time,frp\n1,2,2026-11-20,0100,3', /neither bright_ti4/],
      [`${VIIRS_HEADER}\n${viirsRow(1, 2, 3, day, '0100')}\n10.5,20.1,331`, /line 3 has 3 fields/],
      [`${VIIRS_HEADER}\n${viirsRow(91, 2, 3, day, '0100')}`, /line 2: 91,2 is not a WGS 84 coordinate/],
      [`${VIIRS_HEADER}\n${viirsRow(1, 2, 3, day, '2460')}`, /acq_time 2460 is not a time of day/],
      [`${VIIRS_HEADER}\n${viirsRow(1, 2, 3, '2026-02-30', '0100')}`, /not a calendar day/],
      [`${VIIRS_HEADER}\n${viirsRow(1, 2, 3, day, '0100').replace(',3.00,', ',n/a,')}`, /frp "n\/a" is not a number/],
    ];
    for (const [text, why] of bad)
      assert.throws(
        () => parseFirmsCsv(text, 0, 10),
        (e: Error) => e instanceof FormatMismatch && why.test(e.message),
        why.source,
      );
    assert.throws(() => parseFirmsCsv([VIIRS_HEADER, viirsRow(1, 2, 3, day, '0100'), viirsRow(1, 2, 3, day, '0100')].join('\n'), 0, 1), /exceed the 1/);
  });
  it('acquisition times are UTC', () => {
    assert.equal(acquisitionMs('2026-01-02', '2359', 'x'), Date.parse('2026-01-02T23:59:00Z'));
    assert.equal(acquisitionMs('2026-01-02', '0', 'x'), Date.parse('2026-01-02T00:00:00Z'));
  });
});

describe('FireGrid', () => {
  const grid = (rows: Array<[number, number]>) =>
    new FireGrid(concatDetections([parseFirmsCsv([VIIRS_HEADER, ...rows.map(([y, x]) => viirsRow(y, x, 1, '2026-11-20', '0100')), ''].join('\n'), 0, 100)]));
  it('finds detections within the radius across the antimeridian, nearest first', () => {
    const g = grid([
      [0, 179.95],
      [0, -179.95],
      [0, 179.5],
      [1, 0],
    ]);
    const hits = g.within(0, 179.99, 20);
    assert.deepEqual(
      hits.map((h) => h.index),
      [0, 1],
    );
    assert.ok(Math.abs(hits[1]!.km - distanceKm(0, 179.99, 0, -179.95)) < 1e-9);
    assert.ok(hits[0]!.km < hits[1]!.km);
  });
  it('near a pole every longitude is searched, each cell once', () => {
    const g = grid([
      [89.95, 10],
      [89.95, -170],
      [89.0, 0],
    ]);
    const hits = g.within(89.99, 100, 30);
    assert.deepEqual(hits.map((h) => h.index).sort(), [0, 1]);
  });
  it('a wide radius at high latitude visits every column once (no duplicates)', () => {
    const g = grid([
      [70, 0.5],
      [70, 120],
      [70, -120],
    ]);
    const hits = g.within(70, 0.5, 3000);
    assert.equal(new Set(hits.map((h) => h.index)).size, hits.length);
  });
  it('distances are great-circle kilometres', () => {
    assert.ok(Math.abs(distanceKm(0, 0, 0, 1) - 111.195) < 0.01);
    assert.ok(Math.abs(distanceKm(44.5, 9.5, 44.5 + FIRE_RADIUS_KM / 111.195, 9.5) - FIRE_RADIUS_KM) < 1e-3);
  });
});

describe('firmsConnector', () => {
  it('counts detections within 10 km from both satellites, and a real 0 elsewhere', async () => {
    const { c } = clocked();
    const near = value(await c.materialize(requestAt('fire.active_count_10km', 44.52, 9.51)));
    assert.equal(near.value, 3);
    assert.equal(near.provenance.source, 'nasa_firms');
    assert.equal(near.provenance.ref, 'SUOMI_VIIRS_C2_Global_24h.csv+J1_VIIRS_C2_Global_24h.csv');
    assert.equal(near.provenance.captured_at, isoS(up.firmsAt.sydney), 'newest acquisition in the files');
    assert.equal(near.tslot, currentTslot('fast'));
    assert.equal(near.fn, 'firms_near@1');
    assert.deepEqual([(near.args as any).radius_km, (near.args as any).detections_in_feeds], [10, 4]);
    const zero = value(await c.materialize(requestAt('fire.active_count_10km', 10, 10)));
    assert.equal(zero.value, 0, 'the files cover the globe: no detection is a real 0');
    assert.equal(up.count('/firms/'), 2, 'each file is read once and shared by every cell');
  });
  it('largest FRP within 10 km, with the detection in args; none within 10 km is an absence', async () => {
    const { c } = clocked();
    const o = value(await c.materialize(requestAt('fire.max_frp_10km', 44.52, 9.51)));
    assert.equal(o.value, 40.25);
    assert.deepEqual((o.args as any).detection, { lat: 44.53, lng: 9.52, frp_mw: 40.25, acquired_at: isoS(up.firmsAt.po), satellite: 'Suomi NPP' });
    assert.equal((o.args as any).detections, 3);
    const none = absence(await c.materialize(requestAt('fire.max_frp_10km', 10, 10)), 'unavailable_capability');
    assert.match(none.detail!, /no FIRMS detection within 10 km/);
  });
  it('nearest detection within 100 km in km; none within 100 km is an absence', async () => {
    const { c } = clocked();
    const req = requestAt('fire.nearest_km', 44.9, 9.5);
    const o = value(await c.materialize(req));
    const want = Math.min(
      ...[
        [44.5, 9.5],
        [44.53, 9.52],
        [44.56, 9.5],
      ].map(([y, x]) => distanceKm(req.center.lat, req.center.lng, y!, x!)),
    );
    assert.equal(o.value, Math.round(want * 1000) / 1000);
    assert.equal((o.args as any).detection.satellite, 'NOAA-20');
    absence(await c.materialize(requestAt('fire.nearest_km', 50, 30)), 'unavailable_capability');
  });
  it('asks again only after the refresh interval, conditionally: an unchanged file costs a 304', async () => {
    const { c, clock } = clocked();
    await c.materialize(requestAt('fire.active_count_10km', 44.52, 9.51));
    clock.t += REFRESH_MS - 1000;
    await c.materialize(requestAt('fire.active_count_10km', 44.52, 9.51));
    assert.equal(up.count('/firms/'), 2, 'within the interval: no request');
    clock.t += 2000;
    const o = value(await c.materialize(requestAt('fire.active_count_10km', 44.52, 9.51)));
    assert.equal(o.value, 3);
    assert.equal(up.count('/firms/'), 4);
    assert.ok(
      up.requests.slice(2).every((r) => r.ifNoneMatch && r.status === 304),
      'If-None-Match sent, 304 answered',
    );
    assert.deepEqual(c.stats, { downloads: 2, notModified: 2 });
    // A changed file is downloaded again and replaces the index.
    up.firms.set(FIRMS_NOAA20, `${VIIRS_HEADER}\n`);
    clock.t += REFRESH_MS + 1;
    assert.equal(value(await c.materialize(requestAt('fire.active_count_10km', 44.52, 9.51))).value, 2);
    assert.deepEqual(c.stats, { downloads: 3, notModified: 3 });
  });
  it('concurrent reads share one refresh', async () => {
    const { c } = clocked();
    up.switches = { delay: { ms: 150, prefix: '/firms/' } };
    const outs = await Promise.all(
      [
        [44.52, 9.51],
        [10, 10],
        [44.54, 9.5],
        [-33.9, 151.2],
      ].map(([y, x]) => c.materialize(requestAt('fire.active_count_10km', y!, x!))),
    );
    assert.deepEqual(
      outs.map((o) => value(o).value),
      [3, 0, 3, 1],
    );
    assert.equal(up.count('/firms/'), 2);
  });
  it('an unreachable feed is source_fetch_failed, held for a minute without asking again', async () => {
    const { c, clock } = clocked();
    up.switches = { fail: { status: 503, prefix: FIRMS_SNPP } };
    failure(await c.materialize(requestAt('fire.active_count_10km', 44.52, 9.51)), 'source_fetch_failed', /HTTP 503/);
    const asked = up.count('/firms/');
    failure(await c.materialize(requestAt('fire.max_frp_10km', 1, 1)), 'source_fetch_failed', /HTTP 503/);
    assert.equal(up.count('/firms/'), asked, 'the failure is held');
    up.switches = {};
    clock.t += FAILURE_HOLD_MS + 1;
    assert.equal(value(await c.materialize(requestAt('fire.active_count_10km', 44.52, 9.51))).value, 3);
  });
  it('a timed-out download is a timeout outcome and is not held: the next read asks again', async () => {
    const c = firmsConnector(depsFor(up, { timeoutMs: 120, retries: 0 }));
    up.switches = { delay: { ms: 400, prefix: FIRMS_SNPP } };
    const o = await c.materialize(requestAt('fire.active_count_10km', 44.52, 9.51));
    assert.equal(o.status, 'timeout', JSON.stringify(o));
    up.switches = {};
    assert.equal(value(await c.materialize(requestAt('fire.active_count_10km', 44.52, 9.51))).value, 3);
  });
  it('a held index is not served after a failed refresh (the failure is reported, nothing signed)', async () => {
    const { c, clock } = clocked();
    value(await c.materialize(requestAt('fire.active_count_10km', 44.52, 9.51)));
    clock.t += REFRESH_MS + 1;
    up.switches = { fail: { status: 500, prefix: FIRMS_NOAA20 } };
    failure(await c.materialize(requestAt('fire.active_count_10km', 44.52, 9.51)), 'source_fetch_failed');
  });
  it('an HTML page or a truncated file is source_format_mismatch', async () => {
    up.switches = { body: { text: '<!DOCTYPE html><html><body>FIRMS is down for maintenance</body></html>', prefix: FIRMS_SNPP } };
    failure(await clocked().c.materialize(requestAt('fire.active_count_10km', 44.52, 9.51)), 'source_format_mismatch', /not a FIRMS active-fire CSV/);
    up.reset();
    up.firms.set(FIRMS_SNPP, `${VIIRS_HEADER}\n${viirsRow(44.5, 9.5, 1, '2026-11-20', '0100')}\n44.6,9.`);
    failure(await clocked().c.materialize(requestAt('fire.active_count_10km', 44.52, 9.51)), 'source_format_mismatch', /line 3 has 2 fields/);
  });
  it('serves the present day only: a past tslot asks nothing upstream', async () => {
    const { c } = clocked();
    const o = await c.materialize(requestAt('fire.active_count_10km', 44.52, 9.51, currentTslot('fast') - 3));
    assert.equal(o.status, 'error');
    assert.match((o as any).reason, /present only/);
    assert.equal(up.requests.length, 0);
    assert.equal(c.history, false);
  });
  it('only the two feed files on the configured host are asked', async () => {
    const { c } = clocked();
    for (const band of ['fire.active_count_10km', 'fire.max_frp_10km', 'fire.nearest_km']) await c.materialize(requestAt(band, 44.52, 9.51));
    assert.deepEqual([...new Set(up.requests.map((r) => r.path))].sort(), [FIRMS_NOAA20, FIRMS_SNPP].sort());
  });
});
