import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cellOf } from '../../../src/protocol/cell64.js';
import { currentTslot } from '../../../src/protocol/tslot.js';
import { unitConverter } from '../../../src/sources/json-helpers.js';
import { FORECAST_CURRENT, openMeteoForecast } from '../../../src/sources/open-meteo-forecast.js';
import { fixtureDeps, requestFor } from '../fixtures/json-deps.js';
import { PATHS, startJsonUpstreams, type JsonUpstreams } from '../fixtures/json-upstreams.js';

const BANDS = Object.keys(FORECAST_CURRENT);
let fx: JsonUpstreams;
before(async () => {
  fx = await startJsonUpstreams();
});
after(async () => fx.close());
beforeEach(() => fx.reset());

const values = (outs: Awaited<ReturnType<ReturnType<typeof openMeteoForecast>['materialize']>>[]) => outs.map((o) => (o.status === 'value' ? [o.value, o.unit] : [o.status]));

describe('openMeteoForecast', () => {
  describe('when the present is asked', () => {
    it('fetches the five current variables of a cell in one request and reads each band from it', async () => {
      const c = openMeteoForecast(fixtureDeps(fx));
      const cell = cellOf(52.52, 13.41);
      const outs = await Promise.all(BANDS.map((b) => c.materialize(requestFor(cell, b))));
      assert.equal(fx.count(PATHS.forecast), 1, 'one request for five bands');
      assert.equal(c.presentCalls, 1);
      assert.deepEqual(values(outs), [
        [21.4, 'degC'],
        [0.2, 'mm'],
        [3.5, 'm_s'],
        [64, 'percent'],
        [75, 'percent'],
      ]);
      const q = fx.requests[0].query;
      assert.deepEqual(q.get('current')!.split(',').sort(), Object.values(FORECAST_CURRENT).sort());
      assert.equal(q.get('timezone'), 'UTC');
      const time = fx.data.forecast.time();
      for (const o of outs) {
        assert.ok(o.status === 'value');
        if (o.status !== 'value') continue;
        assert.equal(o.provenance.captured_at, `${time}:00Z`);
        assert.equal(o.tslot, Math.floor(Date.parse(`${time}:00Z`) / 86_400_000));
        assert.equal(o.fn, 'open_meteo_current@1');
        assert.equal(o.provenance.source, 'open_meteo');
        assert.match(o.provenance.ref!, /^\/v1\/forecast\?latitude=/);
      }
    });

    it('converts km/h to the band unit m_s when the provider answers in km/h', async () => {
      const c = openMeteoForecast(fixtureDeps(fx));
      fx.behave(PATHS.forecast, { ignoreWindUnit: true });
      fx.data.forecast.values.wind_speed_10m = 5;
      const out = await c.materialize(requestFor(cellOf(1, 2), 'weather.wind_speed_10m'));
      assert.ok(out.status === 'value');
      assert.equal(out.status === 'value' && out.value, 5, '18 km/h → 5 m/s');
      assert.equal(out.status === 'value' && (out.args as Record<string, unknown>).upstream_unit, 'km/h');
    });

    it('a null variable is a signed absence with the registry reason (unavailable_capability)', async () => {
      const c = openMeteoForecast(fixtureDeps(fx));
      fx.data.forecast.values.cloud_cover = null;
      const out = await c.materialize(requestFor(cellOf(3, 4), 'weather.cloud_cover'));
      assert.deepEqual([out.status, out.status === 'absence' && out.reason], ['absence', 'unavailable_capability']);
    });

    it('a current block without time is source_format_mismatch', async () => {
      const c = openMeteoForecast(fixtureDeps(fx));
      fx.data.forecast.time = () => 'yesterday';
      const out = await c.materialize(requestFor(cellOf(3, 5), 'weather.temperature_2m'));
      assert.ok(out.status === 'error' && out.format_mismatch && /current.time/.test(out.reason));
    });
  });

  describe('when a past day is asked', () => {
    it('delegates to the ERA5 archive (daily aggregate), never the present value', async () => {
      const c = openMeteoForecast(fixtureDeps(fx));
      const tslot = currentTslot('fast') - 20;
      const day = new Date(tslot * 86_400_000).toISOString().slice(0, 10);
      const out = await c.materialize(requestFor(cellOf(5, 5), 'weather.temperature_2m', { tslot }));
      assert.equal(fx.count(PATHS.forecast), 0);
      assert.equal(fx.count(PATHS.archive), 1);
      assert.equal(fx.requests[0].query.get('start_date'), day);
      assert.equal(fx.requests[0].query.get('end_date'), day);
      assert.ok(out.status === 'value');
      if (out.status !== 'value') return;
      assert.equal(out.value, 10 + Number(day.slice(8, 10)) / 10);
      assert.equal(out.tslot, tslot);
      assert.equal(out.provenance.source, 'open_meteo_archive');
      assert.equal(out.provenance.version, 'era5');
      assert.equal(out.provenance.captured_at, `${day}T00:00:00Z`);
    });

    it('a tslot after today is refused with an error outcome and no request', async () => {
      const c = openMeteoForecast(fixtureDeps(fx));
      const out = await c.materialize(requestFor(cellOf(5, 6), 'weather.temperature_2m', { tslot: currentTslot('fast') + 1 }));
      assert.equal(out.status, 'error');
      assert.equal(fx.requests.length, 0);
    });
  });
});

describe('unitConverter', () => {
  it('maps provider unit labels to band units and refuses unknown pairs', () => {
    const table: Array<[string, string, number, number | null]> = [
      ['°C', 'degC', 20, 20],
      ['°F', 'degC', 212, 100],
      ['K', 'degC', 273.15, 0],
      ['mm', 'mm', 1.2, 1.2],
      ['inch', 'mm', 1, 25.4],
      ['km/h', 'm_s', 36, 10],
      ['m/s', 'm_s', 3, 3],
      ['kn', 'm_s', 3600, 1852],
      ['%', 'percent', 50, 50],
      ['μg/m³', 'ug_m3', 8, 8],
      ['µg/m³', 'ug_m3', 8, 8],
      ['ppm', 'ug_m3', 1, null],
      ['°C', 'mm', 1, null],
    ];
    for (const [i, [from, to, v, want]] of table.entries()) {
      const f = unitConverter(from, to);
      if (want === null) assert.equal(f, null, `#${i} ${from}→${to} refused`);
      else assert.ok(f && Math.abs(f(v) - want) < 1e-9, `#${i} ${from}→${to}`);
    }
  });
});
