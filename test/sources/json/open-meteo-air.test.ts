import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cellOf } from '../../../src/protocol/cell64.js';
import { currentTslot } from '../../../src/protocol/tslot.js';
import { AIR_CURRENT, openMeteoAir } from '../../../src/sources/open-meteo-air.js';
import { fixtureDeps, requestFor } from '../fixtures/json-deps.js';
import { PATHS, startJsonUpstreams, type JsonUpstreams } from '../fixtures/json-upstreams.js';

let fx: JsonUpstreams;
before(async () => {
  fx = await startJsonUpstreams();
});
after(async () => fx.close());
beforeEach(() => fx.reset());

describe('openMeteoAir', () => {
  it('reads pm2_5, nitrogen_dioxide and ozone in µg/m³ from one request per cell', async () => {
    const c = openMeteoAir(fixtureDeps(fx));
    const cell = cellOf(48.85, 2.35);
    const outs = await Promise.all(Object.keys(AIR_CURRENT).map((b) => c.materialize(requestFor(cell, b))));
    assert.equal(fx.count(PATHS.air), 1);
    assert.deepEqual(
      outs.map((o) => (o.status === 'value' ? [o.value, o.unit, o.provenance.version] : o.status)),
      [
        [8.3, 'ug_m3', 'cams-europe/global'],
        [12.1, 'ug_m3', 'cams-europe/global'],
        [61, 'ug_m3', 'cams-europe/global'],
      ],
    );
    assert.equal(fx.requests[0].query.get('current'), 'pm2_5,nitrogen_dioxide,ozone');
  });

  it('a null variable is a signed absence with the registry reason', async () => {
    const c = openMeteoAir(fixtureDeps(fx));
    fx.data.air.values.ozone = null;
    const out = await c.materialize(requestFor(cellOf(-60, 0), 'air.ozone'));
    assert.deepEqual([out.status, out.status === 'absence' && out.reason], ['absence', 'unavailable_capability']);
  });

  it('a past tslot is an error outcome (history not wired) and asks nothing upstream', async () => {
    const c = openMeteoAir(fixtureDeps(fx));
    const out = await c.materialize(requestFor(cellOf(1, 1), 'air.pm2_5', { tslot: currentTslot('fast') - 3 }));
    assert.equal(out.status, 'error');
    assert.equal(fx.requests.length, 0);
    assert.equal(c.history, false);
  });
});
