import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cellCenter, cellOf } from '../../../src/protocol/cell64.js';
import { openMeteoElevation } from '../../../src/sources/open-meteo-elevation.js';
import { fixtureDeps, requestFor } from '../fixtures/json-deps.js';
import { PATHS, startJsonUpstreams, type JsonUpstreams } from '../fixtures/json-upstreams.js';

const BAND = 'copdem30m.elevation_mean';
let fx: JsonUpstreams;
before(async () => {
  fx = await startJsonUpstreams();
});
after(async () => fx.close());
beforeEach(() => fx.reset());

describe('openMeteoElevation', () => {
  describe('when the DEM has a land value', () => {
    it('signs elevation[0] asked at the cell centre, in m_msl, with the single-point ref', async () => {
      const c = openMeteoElevation(fixtureDeps(fx));
      const cell = cellOf(46.5, 7.9);
      fx.data.elevation = () => 3571.4;
      const out = await c.materialize(requestFor(cell, BAND));
      assert.equal(out.status, 'value');
      if (out.status !== 'value') return;
      assert.equal(out.value, 3571.4);
      assert.equal(out.unit, 'm_msl');
      assert.equal(out.tslot, 0);
      assert.equal(out.fn, 'open_meteo_elevation@1');
      assert.equal(out.provenance.source, 'open_meteo');
      assert.equal(out.provenance.version, 'copernicus-dem-glo90');
      const q = fx.requests[0].query;
      const centre = cellCenter(cell);
      assert.ok(Math.abs(Number(q.get('latitude')) - centre.lat) < 1e-6, 'latitude is the cell centre');
      assert.ok(Math.abs(Number(q.get('longitude')) - centre.lng) < 1e-6, 'longitude is the cell centre');
      assert.equal(out.provenance.ref, `/v1/elevation?latitude=${q.get('latitude')}&longitude=${q.get('longitude')}`);
    });

    it('keeps values below sea level and small positive ones as values', async () => {
      const c = openMeteoElevation(fixtureDeps(fx));
      for (const v of [-430.5, 0.1, -0.1]) {
        fx.data.elevation = () => v;
        const out = await c.materialize(requestFor(cellOf(31.5, 35.5), BAND));
        assert.equal(out.status, 'value', `value ${v}`);
        assert.equal(out.status === 'value' && out.value, v);
      }
    });
  });

  describe('when the DEM has no land value', () => {
    it('exactly 0 m is a signed absence outside_coverage (open water)', async () => {
      const c = openMeteoElevation(fixtureDeps(fx));
      fx.data.elevation = () => 0;
      const out = await c.materialize(requestFor(cellOf(40, -30), BAND));
      assert.equal(out.status, 'absence');
      assert.equal(out.status === 'absence' && out.reason, 'outside_coverage');
      assert.equal(out.status === 'absence' && out.detail, 'open water: the DEM has no land value');
    });

    it('null is a signed absence outside_coverage', async () => {
      const c = openMeteoElevation(fixtureDeps(fx));
      fx.data.elevation = () => null;
      const out = await c.materialize(requestFor(cellOf(-80, 0), BAND));
      assert.deepEqual([out.status, out.status === 'absence' && out.reason], ['absence', 'outside_coverage']);
    });
  });

  describe('when requests arrive together (batching)', () => {
    it('sends cells inside the window as one call with comma lists and fans the answers back', async () => {
      const c = openMeteoElevation(fixtureDeps(fx));
      fx.data.elevation = (lat, lng) => Math.round((lat + lng) * 1000) / 1000;
      const cells = [0, 1, 2, 3, 4, 5].map((i) => cellOf(10 + i * 0.37, 20 - i * 0.21));
      const outs = await Promise.all(cells.map((cell) => c.materialize(requestFor(cell, BAND))));
      assert.equal(fx.count(PATHS.elevation), 1, 'one upstream request');
      assert.equal(c.batcher.batches, 1);
      const q = fx.requests[0].query;
      const lats = q.get('latitude')!.split(',').map(Number);
      const lngs = q.get('longitude')!.split(',').map(Number);
      assert.equal(lats.length, cells.length);
      cells.forEach((cell, i) => {
        const centre = cellCenter(cell);
        const j = lats.findIndex((x, k) => Math.abs(x - centre.lat) < 1e-6 && Math.abs(lngs[k] - centre.lng) < 1e-6);
        assert.ok(j >= 0, `cell ${i} is in the batch`);
        assert.equal(outs[i].status === 'value' && outs[i].value, Math.round((lats[j] + lngs[j]) * 1000) / 1000, `cell ${i} gets its own value`);
      });
    });

    it('splits more than 100 points into calls of at most 100', async () => {
      const c = openMeteoElevation(fixtureDeps(fx));
      const cells = Array.from({ length: 150 }, (_, i) => cellOf(-30 + i * 0.05, 140));
      const outs = await Promise.all(cells.map((cell) => c.materialize(requestFor(cell, BAND))));
      assert.ok(outs.every((o) => o.status === 'value'));
      assert.equal(fx.count(PATHS.elevation), 2);
      assert.deepEqual(
        fx.requests.map((r) => r.query.get('latitude')!.split(',').length).sort((a, b) => a - b),
        [50, 100],
      );
    });

    it('requests far apart in time are separate calls', async () => {
      const c = openMeteoElevation(fixtureDeps(fx));
      await c.materialize(requestFor(cellOf(1, 1), BAND));
      await c.materialize(requestFor(cellOf(2, 2), BAND));
      assert.equal(fx.count(PATHS.elevation), 2);
    });
  });

  describe('when the answer has the wrong shape', () => {
    it('a non-numeric elevation is source_format_mismatch, never a value', async () => {
      const c = openMeteoElevation(fixtureDeps(fx));
      fx.data.elevation = () => 'high' as unknown as number;
      const out = await c.materialize(requestFor(cellOf(5, 5), BAND));
      assert.equal(out.status, 'error');
      assert.ok(out.status === 'error' && out.format_mismatch);
      assert.match(out.status === 'error' ? out.reason : '', /^source_format_mismatch: /);
    });

    it('a body without `elevation` is source_format_mismatch', async () => {
      const c = openMeteoElevation(fixtureDeps(fx));
      fx.behave(PATHS.elevation, { malformed: 'shape' });
      const out = await c.materialize(requestFor(cellOf(5, 6), BAND));
      assert.ok(out.status === 'error' && out.format_mismatch && /elevation is not an array/.test(out.reason));
    });
  });
});
