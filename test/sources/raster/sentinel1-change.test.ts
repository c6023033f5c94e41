import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { median, sentinel1ChangeConnector, MAX_REFERENCE_READS } from '../../../src/sources/sentinel1-change.js';
import type { Sentinel1Connector } from '../../../src/sources/sentinel1.js';
import { startRasterUpstreams, type RasterUpstreams } from '../fixtures/raster-upstreams.js';
import { s1ChangeBaseDb, S1_CHANGE_ITEMS, S1_CHANGE_TSLOT, S1_POINTS, utmPixel } from '../fixtures/raster-scenes.js';
import { depsFor, requestAt, value } from './harness.js';

const BAND = 's1.vv_change_db';
let up: RasterUpstreams;
let c: Sentinel1Connector;
type Point = { lat: number; lng: number };
const at = (p: Point, tslot = S1_CHANGE_TSLOT) => c.materialize(requestAt(BAND, p.lat, p.lng, tslot));

before(async () => {
  up = await startRasterUpstreams(['s1']);
});
after(async () => up.close());
beforeEach(() => {
  up.reset();
  c = sentinel1ChangeConnector(depsFor(up)) as Sentinel1Connector;
});

describe('sentinel1ChangeConnector', () => {
  it('serves s1.vv_change_db under source planetary_computer_s1', () => {
    assert.deepEqual([c.key, c.bands], ['planetary_computer_s1', [BAND]]);
  });

  it('a −5 dB darkening against the same-orbit median of the preceding 90 days gives ≈ −5', async () => {
    const o = value(await at(S1_POINTS.valid));
    assert.equal(o.value, -5);
    assert.equal(o.fn, 'sar_change_db@1');
    const latest = S1_CHANGE_ITEMS.find((i) => i.latest)!;
    assert.equal(o.provenance.ref, latest.id);
    assert.equal(o.provenance.captured_at, '2026-09-20T16:50:22Z');
    assert.equal(o.tslot, S1_CHANGE_TSLOT);
    const a = o.args as Record<string, any>;
    // Same orbit (117) and within 90 days: the orbit-44 scene and the June scene are left out.
    const refs = S1_CHANGE_ITEMS.filter((i) => !i.latest && i.orbit === 117 && i.datetime > '2026-06-22').map((i) => i.id);
    assert.deepEqual(a.reference_items, refs);
    assert.equal(a.n_reference, 5);
    assert.equal(a.relative_orbit, 117);
    assert.equal(a.latest_item, latest.id);
    assert.equal(a.max_reference_reads, MAX_REFERENCE_READS);
    const req = requestAt(BAND, S1_POINTS.valid.lat, S1_POINTS.valid.lng, S1_CHANGE_TSLOT);
    const [col, row] = utmPixel(req.center.lat, req.center.lng, 20);
    const base = s1ChangeBaseDb(col, row);
    assert.ok(Math.abs(a.median_db - base) < 1e-3, `median ${a.median_db} vs baseline ${base}`);
    assert.ok(Math.abs(a.latest_db - (base - 5)) < 1e-3, `latest ${a.latest_db} vs ${base - 5}`);
    assert.equal(up.count('/pc/api/stac/v1/search'), 2, 'one search for the latest scene, one for the references');
    assert.equal(up.count('/pc/api/sas/v1/token/'), 1);
  });

  it('no valid reference scene in the 90 days: absence unavailable_capability', async () => {
    const o = await at(S1_POINTS.zeroVh);
    assert.deepEqual([o.status, (o as any).reason], ['absence', 'unavailable_capability'], JSON.stringify(o));
    assert.match((o as any).detail, /relative orbit 117/);
  });

  it('no RTC scene covers the cell: outside_coverage', async () => {
    const o = await at({ lat: 44.0, lng: 13.5 });
    assert.deepEqual([o.status, (o as any).reason], ['absence', 'outside_coverage']);
  });

  it('STAC search 5xx: retryable upstream error, nothing signed', async () => {
    up.switches = { fail: { status: 503, prefix: '/pc/api/stac/' } };
    const o = await at(S1_POINTS.valid);
    assert.equal(o.status, 'error');
    assert.match((o as any).reason, /source_fetch_failed/);
  });

  it('blob store 5xx on the reference reads: upstream error', async () => {
    up.switches = { fail: { status: 500, prefix: '/pc-blob/' } };
    const o = await at(S1_POINTS.valid);
    assert.equal(o.status, 'error');
    assert.match((o as any).reason, /HTTP 500/);
  });

  it('slow blob store: timeout', async () => {
    up.switches = { delay: { ms: 600, prefix: '/pc-blob/' } };
    const slow = sentinel1ChangeConnector(depsFor(up, { timeoutMs: 150, retries: 0 }));
    const o = await slow.materialize(requestAt(BAND, S1_POINTS.valid.lat, S1_POINTS.valid.lng, S1_CHANGE_TSLOT, 2000));
    assert.equal(o.status, 'timeout');
  });

  it('median of odd and even counts', () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 3, 2]), 2.5);
  });
});
