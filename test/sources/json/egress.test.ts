import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cellOf } from '../../../src/protocol/cell64.js';
import { currentTslot } from '../../../src/protocol/tslot.js';
import { JSON_CONNECTORS } from '../../../src/sources/json-connectors.js';
import { fixtureDeps, requestFor } from '../fixtures/json-deps.js';
import { startJsonUpstreams, type JsonUpstreams } from '../fixtures/json-upstreams.js';

let fx: JsonUpstreams;
before(async () => {
  fx = await startJsonUpstreams();
});
after(async () => fx.close());

describe('egress guard', () => {
  it('every JSON connector is refused before any request when its host is not allow-listed', async () => {
    // The client only trusts another port on loopback: the fixture's host:port is outside the list.
    const deps = fixtureDeps(fx, { allowed: ['http://127.0.0.1:9'] });
    for (const factory of JSON_CONNECTORS) {
      const c = factory(deps);
      const band = c.bands[0];
      const entry = deps.registry.bands.get(band)!;
      // The archive only answers past days; every other connector is asked for the present.
      const tslot = c.key === 'open_meteo_archive' ? currentTslot('fast') - 10 : currentTslot(entry.tempo);
      const out = await c.materialize(requestFor(cellOf(12, 34), band, { tslot }));
      assert.equal(out.status, 'error', `${c.key}`);
      assert.ok(out.status === 'error' && /egress refused/.test(out.reason) && !out.format_mismatch, `${c.key}: ${out.status === 'error' ? out.reason : ''}`);
    }
    assert.equal(fx.requests.length, 0, 'no request reached the fixture');
  });

  it('a connector timeout surfaces as a timeout outcome, not an error', async () => {
    fx.behave('/v1/forecast', { delayMs: 2500 });
    const deps = fixtureDeps(fx, { timeoutSecs: 2 });
    const c = JSON_CONNECTORS[1](deps);
    const out = await c.materialize(requestFor(cellOf(12, 35), 'weather.temperature_2m', { budgetMs: 2200 }));
    assert.equal(out.status, 'timeout');
  });
});
