import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cellOf } from '../../../src/protocol/cell64.js';
import { currentTslot } from '../../../src/protocol/tslot.js';
import { modisDate, ornlModis, PRESENT_LOOKBACK_DAYS } from '../../../src/sources/ornl-modis.js';
import { fixtureDeps, requestFor } from '../fixtures/json-deps.js';
import { PATHS, startJsonUpstreams, type JsonUpstreams } from '../fixtures/json-upstreams.js';

const DAY = 86_400_000;
const SLOT = 30 * DAY;
let fx: JsonUpstreams;
before(async () => {
  fx = await startJsonUpstreams();
});
after(async () => fx.close());
beforeEach(() => fx.reset());

describe('modisDate', () => {
  it('is AYYYYDDD of the UTC day', () => {
    assert.equal(modisDate(Date.UTC(2024, 0, 1)), 'A2024001');
    assert.equal(modisDate(Date.UTC(2024, 11, 31, 23, 59)), 'A2024366');
    assert.equal(modisDate(Date.UTC(2023, 1, 9)), 'A2023040');
  });
});

describe('ornlModis', () => {
  describe('when a good composite exists', () => {
    it('converts the pixel: value × 0.02 K − 273.15 → °C (day and night datasets)', async () => {
      const c = ornlModis(fixtureDeps(fx));
      const cell = cellOf(45.8, 8.6);
      const day = await c.materialize(requestFor(cell, 'lst.day_8day'));
      const night = await c.materialize(requestFor(cell, 'lst.night_8day'));
      assert.deepEqual(day.status === 'value' && [day.value, day.unit], [18.19, 'degC'], '14567 × 0.02 − 273.15');
      assert.deepEqual(night.status === 'value' && [night.value, night.unit], [4.85, 'degC'], '13900 × 0.02 − 273.15');
      assert.equal(
        fx.count(PATHS.modis, (q) => q.get('band') === 'LST_Day_1km'),
        1,
      );
      assert.equal(
        fx.count(PATHS.modis, (q) => q.get('band') === 'QC_Day'),
        1,
      );
      assert.equal(
        fx.count(PATHS.modis, (q) => q.get('band') === 'LST_Night_1km'),
        1,
      );
      const q = fx.requests[0].query;
      assert.equal(q.get('kmAboveBelow'), '0');
      assert.equal(q.get('kmLeftRight'), '0');
      assert.ok(day.status === 'value' && day.provenance.version === 'MOD11A2.061' && day.fn === 'modis_lst_8day@1');
    });

    it('the present slot looks back 24 days and picks the latest composite', async () => {
      const c = ornlModis(fixtureDeps(fx));
      fx.data.modis = (dataset, modis) => (dataset.startsWith('QC_') ? 0 : 14000 + Number(modis.slice(5)));
      const now = Date.now();
      const out = await c.materialize(requestFor(cellOf(1, 1), 'lst.day_8day'));
      const q = fx.requests.find((r) => r.query.get('band') === 'LST_Day_1km')!.query;
      assert.equal(q.get('startDate'), modisDate(Math.min(currentTslot('medium') * SLOT, now - PRESENT_LOOKBACK_DAYS * DAY)));
      assert.equal(q.get('endDate'), modisDate(now));
      assert.ok(out.status === 'value');
      if (out.status !== 'value') return;
      const modis = (out.args as { modis_date: string }).modis_date;
      assert.equal(out.value, Math.round(((14000 + Number(modis.slice(5))) * 0.02 - 273.15) * 100) / 100);
      assert.ok(modis >= q.get('startDate')! && modis <= q.get('endDate')!, 'inside the window');
      // The newest composite start (day of year 1, 9, 17, …) on or before today.
      let t = Math.floor(now / DAY) * DAY;
      while ((Number(modisDate(t).slice(5)) - 1) % 8 !== 0) t -= DAY;
      assert.equal(modis, modisDate(t), 'it is the latest one');
      assert.equal(out.provenance.captured_at, `${new Date(t).toISOString().slice(0, 10)}T00:00:00Z`);
      assert.equal(out.tslot, currentTslot('medium'));
    });

    it('a past slot reads its own 30-day window', async () => {
      const c = ornlModis(fixtureDeps(fx));
      const tslot = currentTslot('medium') - 12;
      const out = await c.materialize(requestFor(cellOf(1, 2), 'lst.night_8day', { tslot }));
      const q = fx.requests.find((r) => r.query.get('band') === 'LST_Night_1km')!.query;
      assert.equal(q.get('startDate'), modisDate(tslot * SLOT));
      assert.equal(q.get('endDate'), modisDate((tslot + 1) * SLOT - DAY));
      assert.ok(out.status === 'value' && out.tslot === tslot);
    });
  });

  describe('when the pixel is not usable', () => {
    it('fill value 0 is a signed absence (registry reason unavailable_capability)', async () => {
      const c = ornlModis(fixtureDeps(fx));
      fx.data.modis = (dataset) => (dataset.startsWith('QC_') ? 2 : 0);
      const out = await c.materialize(requestFor(cellOf(2, 2), 'lst.day_8day', { tslot: currentTslot('medium') - 3 }));
      assert.deepEqual([out.status, out.status === 'absence' && out.reason], ['absence', 'unavailable_capability']);
    });

    it('QC gates: not produced (cloud) and LST error above 2 K are absences; other quality within 2 K is a value', async () => {
      const c = ornlModis(fixtureDeps(fx));
      const cases: Array<[number, string]> = [
        [0b10, 'absence'],
        [0b11, 'absence'],
        [0b1000_0001, 'absence'],
        [0b1100_0000, 'absence'],
        [0b0100_0001, 'value'],
        [0, 'value'],
      ];
      for (const [i, [qc, want]] of cases.entries()) {
        fx.data.modis = (dataset) => (dataset.startsWith('QC_') ? qc : 15000);
        const out = await c.materialize(requestFor(cellOf(3, 3 + i), 'lst.day_8day', { tslot: currentTslot('medium') - 4 }));
        assert.equal(out.status, want, `#${i} QC ${qc.toString(2)}`);
      }
    });

    it('no composite published in the window is an error outcome (nothing signed)', async () => {
      const c = ornlModis(fixtureDeps(fx));
      fx.data.modis = () => undefined;
      const out = await c.materialize(requestFor(cellOf(4, 4), 'lst.day_8day'));
      assert.equal(out.status, 'error');
      assert.ok(out.status === 'error' && !out.format_mismatch);
    });
  });
});
