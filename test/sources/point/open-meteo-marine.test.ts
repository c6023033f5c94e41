import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cellOf } from '../../../src/protocol/cell64.js';
import { currentTslot } from '../../../src/protocol/tslot.js';
import { MARINE_CURRENT, openMeteoMarine } from '../../../src/sources/open-meteo-marine.js';
import { requestFor } from '../fixtures/json-deps.js';
import { POINT_PATHS, pointDeps, startPointUpstreams, type PointUpstreams } from '../fixtures/point-upstreams.js';

let fx: PointUpstreams;
before(async () => {
  fx = await startPointUpstreams();
});
after(async () => fx.close());
beforeEach(() => fx.reset());

describe('openMeteoMarine', () => {
  it('reads wave height, period, direction and sea-surface temperature from one current= request', async () => {
    const c = openMeteoMarine(pointDeps(fx));
    const cell = cellOf(43.48, -1.56);
    const outs = await Promise.all(Object.keys(MARINE_CURRENT).map((b) => c.materialize(requestFor(cell, b))));
    assert.deepEqual(
      outs.map((o) => (o.status === 'value' ? [o.value, o.unit] : o.status)),
      [
        [1.24, 'm'],
        [7.5, 's'],
        [245, 'deg'],
        [17.3, 'degC'],
      ],
    );
    assert.equal(fx.count(POINT_PATHS.marine), 1, 'the four bands of a cell share one request');
    const q = fx.requests[0].query;
    assert.deepEqual([q.get('current'), q.get('timezone')], ['wave_height,wave_period,wave_direction,sea_surface_temperature', 'UTC']);
    for (const o of outs) assert.ok(o.status === 'value' && o.tslot === currentTslot('fast') && o.fn === 'open_meteo_marine_current@1');
  });

  it('inland the API answers null: a signed absence outside_coverage for each band, never a zero', async () => {
    const c = openMeteoMarine(pointDeps(fx));
    fx.data.marine.values = { wave_height: null, wave_period: null, wave_direction: null, sea_surface_temperature: null };
    const cell = cellOf(48.2, 16.37);
    for (const b of Object.keys(MARINE_CURRENT)) {
      const out = await c.materialize(requestFor(cell, b));
      assert.deepEqual([out.status, out.status === 'absence' && out.reason], ['absence', 'outside_coverage'], b);
    }
  });

  it('a past tslot is an error and asks nothing', async () => {
    const c = openMeteoMarine(pointDeps(fx));
    const out = await c.materialize(requestFor(cellOf(43.5, -1.6), 'marine.wave_height', { tslot: currentTslot('fast') - 1 }));
    assert.equal(out.status, 'error');
    assert.equal(fx.requests.length, 0);
  });

  it('an upstream 5xx is an error; HTML or the wrong JSON shape is source_format_mismatch', async () => {
    const c = openMeteoMarine(pointDeps(fx));
    fx.behave(POINT_PATHS.marine, { status: 502 });
    const down = await c.materialize(requestFor(cellOf(43.5, -1.7), 'marine.wave_height'));
    assert.ok(down.status === 'error' && !down.format_mismatch);
    fx.behave(POINT_PATHS.marine, { malformed: 'bytes' });
    const html = await c.materialize(requestFor(cellOf(43.5, -1.8), 'marine.wave_height'));
    assert.ok(html.status === 'error' && html.format_mismatch);
    fx.behave(POINT_PATHS.marine, { malformed: 'shape' });
    const shape = await c.materialize(requestFor(cellOf(43.5, -1.9), 'marine.wave_period'));
    assert.ok(shape.status === 'error' && shape.format_mismatch && /current is not an object/.test(shape.reason));
  });
});
