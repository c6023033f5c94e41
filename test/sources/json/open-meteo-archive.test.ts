import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cellOf } from '../../../src/protocol/cell64.js';
import { currentTslot } from '../../../src/protocol/tslot.js';
import { ARCHIVE_DAILY, openMeteoArchive } from '../../../src/sources/open-meteo-archive.js';
import { fixtureDeps, requestFor, testRegistry } from '../fixtures/json-deps.js';
import { PATHS, startJsonUpstreams, type JsonUpstreams } from '../fixtures/json-upstreams.js';

let fx: JsonUpstreams;
before(async () => {
  fx = await startJsonUpstreams();
});
after(async () => fx.close());
beforeEach(() => fx.reset());

const dayOf = (t: number) => new Date(t * 86_400_000).toISOString().slice(0, 10);

describe('openMeteoArchive', () => {
  describe('materialize (one past day)', () => {
    it('reads the ERA5 daily aggregate of the band, asks all five variables at once', async () => {
      const c = openMeteoArchive(fixtureDeps(fx));
      const tslot = currentTslot('fast') - 40;
      const cell = cellOf(48.1, 11.6);
      const outs = await Promise.all(Object.keys(ARCHIVE_DAILY).map((b) => c.materialize(requestFor(cell, b, { tslot }))));
      assert.equal(fx.count(PATHS.archive), 1, 'the five bands of one cell and day share one request');
      const q = fx.requests[0].query;
      assert.deepEqual(
        q.get('daily')!.split(',').sort(),
        Object.values(ARCHIVE_DAILY)
          .map((d) => d.variable)
          .sort(),
      );
      assert.equal(q.get('timezone'), 'UTC');
      const d = Number(dayOf(tslot).slice(8, 10));
      assert.deepEqual(
        outs.map((o) => (o.status === 'value' ? o.value : o.status)),
        [10 + d / 10, d % 3 === 0 ? 0 : 1.5, 4.2, 70, 55],
      );
      const wind = outs[2];
      assert.ok(wind.status === 'value' && (wind.args as Record<string, unknown>).variable === 'wind_speed_10m_mean');
    });

    it('a day not yet published (null) is an error outcome, never an absence or a zero', async () => {
      const c = openMeteoArchive(fixtureDeps(fx));
      fx.data.daily = () => null;
      const out = await c.materialize(requestFor(cellOf(1, 1), 'weather.precipitation', { tslot: currentTslot('fast') - 2 }));
      assert.equal(out.status, 'error');
      assert.match(out.status === 'error' ? out.reason : '', /not yet published/);
      assert.ok(out.status === 'error' && !out.format_mismatch);
    });

    it('today is not an archive day', async () => {
      const c = openMeteoArchive(fixtureDeps(fx));
      const out = await c.materialize(requestFor(cellOf(1, 1), 'weather.precipitation'));
      assert.equal(out.status, 'error');
      assert.equal(fx.requests.length, 0);
    });

    it("the provider's 400 refusal becomes an error outcome carrying its reason", async () => {
      const c = openMeteoArchive(fixtureDeps(fx));
      fx.data.daily = () => undefined; // the fixture then refuses the variable with 400, as Open-Meteo does
      const out = await c.materialize(requestFor(cellOf(1, 2), 'weather.precipitation', { tslot: currentTslot('fast') - 9 }));
      assert.ok(out.status === 'error' && /HTTP 400.*invalid String value/.test(out.reason));
      assert.equal(fx.count(PATHS.archive), 1, 'a 400 is not retried');
    });
  });

  describe('fetchRange', () => {
    it('serves a span of days with one request, one outcome per day, oldest first', async () => {
      const c = openMeteoArchive(fixtureDeps(fx));
      const band = testRegistry().bands.get('weather.temperature_2m')!;
      const end = currentTslot('fast') - 10;
      const start = end - 29;
      fx.data.daily = (day, v) => (day === dayOf(end) ? null : v === 'temperature_2m_mean' ? Number(day.slice(8, 10)) : 1);
      const steps = await c.fetchRange(cellOf(30, 30), band, start, end, { deadline: Date.now() + 5000 });
      assert.equal(fx.count(PATHS.archive), 1);
      assert.equal(fx.requests[0].query.get('start_date'), dayOf(start));
      assert.equal(fx.requests[0].query.get('end_date'), dayOf(end));
      assert.deepEqual(
        steps.map((s) => s.tslot),
        Array.from({ length: 30 }, (_, i) => start + i),
      );
      for (const s of steps.slice(0, -1)) assert.equal(s.outcome.status === 'value' && s.outcome.value, Number(dayOf(s.tslot).slice(8, 10)));
      assert.equal(steps.at(-1)!.outcome.status, 'error', 'the unpublished day is skipped, not signed');
    });

    it('stops at yesterday and reports one failure for every day when the request fails', async () => {
      const c = openMeteoArchive(fixtureDeps(fx, { retries: 0 }));
      const band = testRegistry().bands.get('weather.cloud_cover')!;
      const today = currentTslot('fast');
      fx.behave(PATHS.archive, { status: 500 });
      const steps = await c.fetchRange(cellOf(30, 31), band, today - 3, today, { deadline: Date.now() + 5000 });
      assert.deepEqual(
        steps.map((s) => s.tslot),
        [today - 3, today - 2, today - 1],
      );
      assert.ok(steps.every((s) => s.outcome.status === 'error' && /HTTP 500/.test(s.outcome.reason)));
    });
  });
});
