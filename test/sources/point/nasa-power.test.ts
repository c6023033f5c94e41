import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cellOf } from '../../../src/protocol/cell64.js';
import { nasaPower, POWER_BANDS } from '../../../src/sources/nasa-power.js';
import { requestFor } from '../fixtures/json-deps.js';
import { POINT_PATHS, pointDeps, startPointUpstreams, type PointUpstreams } from '../fixtures/point-upstreams.js';

let fx: PointUpstreams;
before(async () => {
  fx = await startPointUpstreams();
});
after(async () => fx.close());
beforeEach(() => fx.reset());

describe('nasaPower', () => {
  it('signs the annual means and the lowest month from one climatology request', async () => {
    const c = nasaPower(pointDeps(fx));
    const cell = cellOf(52.52, 13.4);
    const outs = await Promise.all(Object.keys(POWER_BANDS).map((b) => c.materialize(requestFor(cell, b))));
    assert.deepEqual(
      outs.map((o) => (o.status === 'value' ? [o.value, o.unit, o.tslot] : o.status)),
      [
        [3.13, 'kWh_m2_day', 0],
        [4.47, 'kWh_m2_day', 0],
        [0.62, 'kWh_m2_day', 0],
      ],
    );
    assert.equal(outs[2].status === 'value' && outs[2].args?.month, 'DEC');
    assert.match(String(outs[0].status === 'value' && outs[0].args?.period), /2001 - December 2020/);
    assert.equal(fx.count(POINT_PATHS.power), 1);
    const q = fx.requests[0].query;
    assert.deepEqual([q.get('parameters'), q.get('community'), q.get('format')], ['ALLSKY_SFC_SW_DWN,CLRSKY_SFC_SW_DWN', 'RE', 'JSON']);
  });

  it('MJ/m2/day answers are converted, not signed in the wrong unit', async () => {
    const c = nasaPower(pointDeps(fx));
    fx.data.powerUnits = 'MJ/m^2/day';
    const out = await c.materialize(requestFor(cellOf(10, 10), 'solar.ghi_annual_mean'));
    assert.deepEqual(out.status === 'value' && out.value, Math.round((3.13 / 3.6) * 1000) / 1000);
    fx.data.powerUnits = 'W/m^2';
    const odd = await c.materialize(requestFor(cellOf(10, 11), 'solar.ghi_annual_mean'));
    assert.ok(odd.status === 'error' && odd.format_mismatch);
  });

  it('the fill value -999 is a signed absence unavailable_capability, never a number', async () => {
    const c = nasaPower(pointDeps(fx));
    fx.data.power.ALLSKY_SFC_SW_DWN.ANN = -999;
    fx.data.power.ALLSKY_SFC_SW_DWN.JUL = -999;
    const annual = await c.materialize(requestFor(cellOf(-70, 0), 'solar.ghi_annual_mean'));
    const lowest = await c.materialize(requestFor(cellOf(-70, 0), 'solar.ghi_lowest_month_mean'));
    const clear = await c.materialize(requestFor(cellOf(-70, 0), 'solar.clearsky_ghi_annual_mean'));
    assert.deepEqual([annual.status, annual.status === 'absence' && annual.reason], ['absence', 'unavailable_capability']);
    assert.deepEqual([lowest.status, lowest.status === 'absence' && lowest.reason], ['absence', 'unavailable_capability']);
    assert.equal(clear.status, 'value');
  });

  it('a 422 refusal is an error; HTML and the wrong shape are source_format_mismatch', async () => {
    const c = nasaPower(pointDeps(fx));
    fx.behave(POINT_PATHS.power, { status: 422 });
    const refused = await c.materialize(requestFor(cellOf(1, 1), 'solar.ghi_annual_mean'));
    assert.ok(refused.status === 'error' && !refused.format_mismatch && /HTTP 422/.test(refused.reason));
    fx.behave(POINT_PATHS.power, { malformed: 'bytes' });
    const html = await c.materialize(requestFor(cellOf(1, 2), 'solar.ghi_annual_mean'));
    assert.ok(html.status === 'error' && html.format_mismatch);
    fx.behave(POINT_PATHS.power, { malformed: 'shape' });
    const shape = await c.materialize(requestFor(cellOf(1, 3), 'solar.ghi_annual_mean'));
    assert.ok(shape.status === 'error' && shape.format_mismatch);
  });
});
