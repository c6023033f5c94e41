import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cellCenter, cellOf } from '../../../src/protocol/cell64.js';
import { currentTslot } from '../../../src/protocol/tslot.js';
import { DAILY_BAND, openMeteoFlood } from '../../../src/sources/open-meteo-flood.js';
import { requestFor } from '../fixtures/json-deps.js';
import { POINT_PATHS, pointDeps, startPointUpstreams, type PointUpstreams } from '../fixtures/point-upstreams.js';

let fx: PointUpstreams;
before(async () => {
  fx = await startPointUpstreams();
});
after(async () => fx.close());
beforeEach(() => fx.reset());

const DAY = 86_400_000;
const dayOf = (tslot: number) => new Date(tslot * DAY).toISOString().slice(0, 10);

describe('openMeteoFlood', () => {
  describe('river.discharge', () => {
    it('signs the day of the tslot from daily=river_discharge, start_date = end_date, in m3/s', async () => {
      const c = openMeteoFlood(pointDeps(fx));
      const cell = cellOf(48.85, 2.35);
      const tslot = currentTslot('fast') - 40;
      fx.data.discharge = (day) => (day === dayOf(tslot) ? 312.456 : 1);
      const out = await c.materialize(requestFor(cell, DAILY_BAND, { tslot }));
      assert.ok(out.status === 'value', JSON.stringify(out));
      assert.deepEqual([out.value, out.unit, out.tslot, out.fn, out.provenance.source], [312.456, 'm3_s', tslot, 'open_meteo_flood_daily@1', 'open_meteo_flood']);
      assert.equal(out.provenance.captured_at, `${dayOf(tslot)}T00:00:00Z`);
      assert.equal(out.provenance.version, 'glofas-v4-seamless');
      assert.equal(fx.count(POINT_PATHS.flood), 1);
      const q = fx.requests[0].query;
      assert.deepEqual([q.get('daily'), q.get('start_date'), q.get('end_date')], ['river_discharge', dayOf(tslot), dayOf(tslot)]);
      const centre = cellCenter(cell);
      assert.ok(Math.abs(Number(q.get('latitude')) - centre.lat) < 1e-6 && Math.abs(Number(q.get('longitude')) - centre.lng) < 1e-6);
      assert.equal(q.get('apikey'), null, 'no key configured, none sent');
    });

    it('today is forecast day 0; a tslot after today is refused without a request', async () => {
      const c = openMeteoFlood(pointDeps(fx));
      const now = await c.materialize(requestFor(cellOf(50, 8), DAILY_BAND));
      assert.equal(now.status, 'value');
      const ahead = await c.materialize(requestFor(cellOf(50, 8), DAILY_BAND, { tslot: currentTslot('fast') + 1 }));
      assert.ok(ahead.status === 'error' && /after today/.test(ahead.reason));
      assert.equal(fx.count(POINT_PATHS.flood), 1);
    });

    it('null (no river within reach) is a signed absence outside_coverage; 0 is a value', async () => {
      const c = openMeteoFlood(pointDeps(fx));
      fx.data.discharge = () => null;
      const none = await c.materialize(requestFor(cellOf(25, 10), DAILY_BAND));
      assert.deepEqual([none.status, none.status === 'absence' && none.reason], ['absence', 'outside_coverage']);
      fx.data.discharge = () => 0;
      const dry = await c.materialize(requestFor(cellOf(25, 11), DAILY_BAND));
      assert.deepEqual([dry.status, dry.status === 'value' && dry.value], ['value', 0]);
    });

    it('fetchRange asks once for the span and returns one outcome per day', async () => {
      const c = openMeteoFlood(pointDeps(fx));
      const end = currentTslot('fast') - 1;
      const entry = pointDeps(fx).registry.bands.get(DAILY_BAND)!;
      fx.data.discharge = (day) => Number(day.slice(8, 10));
      const steps = await c.fetchRange(cellOf(45, 5), entry, end - 4, end, { deadline: Date.now() + 5000 });
      assert.equal(steps.length, 5);
      assert.deepEqual(
        steps.map((s) => (s.outcome.status === 'value' ? s.outcome.value : s.outcome.status)),
        steps.map((s) => Number(dayOf(s.tslot).slice(8, 10))),
      );
      assert.equal(fx.count(POINT_PATHS.flood), 1);
    });
  });

  describe('the 1991-2020 normals', () => {
    it('mean and max of the 10958 daily values, both bands from one request', async () => {
      const c = openMeteoFlood(pointDeps(fx));
      const cell = cellOf(47.5, 19.05);
      const [mean, max] = await Promise.all([c.materialize(requestFor(cell, 'river.discharge_mean_1991_2020')), c.materialize(requestFor(cell, 'river.discharge_max_1991_2020'))]);
      // 30 days of 900 (every 15 June), 10928 days of 40.
      assert.ok(mean.status === 'value' && max.status === 'value');
      assert.equal(mean.value, Math.round(((30 * 900 + 10928 * 40) / 10958) * 1000) / 1000);
      assert.equal(max.value, 900);
      assert.equal(max.args?.max_day, '1991-06-15');
      assert.deepEqual([mean.tslot, mean.unit, mean.fn], [0, 'm3_s', 'open_meteo_flood_normal@1']);
      assert.equal(fx.count(POINT_PATHS.flood), 1);
      const q = fx.requests[0].query;
      assert.deepEqual([q.get('start_date'), q.get('end_date')], ['1991-01-01', '2020-12-31']);
    });

    it('all null → outside_coverage; mostly null → unavailable_capability', async () => {
      const c = openMeteoFlood(pointDeps(fx));
      fx.data.discharge = () => null;
      const none = await c.materialize(requestFor(cellOf(20, 20), 'river.discharge_mean_1991_2020'));
      assert.deepEqual([none.status, none.status === 'absence' && none.reason], ['absence', 'outside_coverage']);
      fx.data.discharge = (day) => (day < '2010-01-01' ? null : 5);
      const part = await c.materialize(requestFor(cellOf(20, 21), 'river.discharge_max_1991_2020'));
      assert.deepEqual([part.status, part.status === 'absence' && part.reason], ['absence', 'unavailable_capability']);
    });
  });

  describe('failures', () => {
    it('an upstream 5xx is an error outcome (not signed, not a format mismatch)', async () => {
      const c = openMeteoFlood(pointDeps(fx));
      fx.behave(POINT_PATHS.flood, { status: 503 });
      const out = await c.materialize(requestFor(cellOf(1, 2), DAILY_BAND));
      assert.ok(out.status === 'error' && !out.format_mismatch && /HTTP 503/.test(out.reason));
    });

    it('bytes that are not JSON and JSON of the wrong shape are source_format_mismatch', async () => {
      const c = openMeteoFlood(pointDeps(fx));
      fx.behave(POINT_PATHS.flood, { malformed: 'bytes' });
      const bytes = await c.materialize(requestFor(cellOf(1, 3), DAILY_BAND));
      assert.ok(bytes.status === 'error' && bytes.format_mismatch);
      fx.behave(POINT_PATHS.flood, { malformed: 'shape' });
      const shape = await c.materialize(requestFor(cellOf(1, 4), 'river.discharge_mean_1991_2020'));
      assert.ok(shape.status === 'error' && shape.format_mismatch && /source_format_mismatch/.test(shape.reason));
    });

    it('a discharge that is not a number is a format mismatch, never a zero', async () => {
      const c = openMeteoFlood(pointDeps(fx));
      fx.data.discharge = () => 'lots' as unknown as number;
      const out = await c.materialize(requestFor(cellOf(1, 5), DAILY_BAND));
      assert.ok(out.status === 'error' && out.format_mismatch);
    });
  });
});
