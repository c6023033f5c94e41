import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cellOf } from '../../../src/protocol/cell64.js';
import { currentTslot } from '../../../src/protocol/tslot.js';
import { POINT_CONNECTORS } from '../../../src/sources/point-connectors.js';
import { requestFor } from '../fixtures/json-deps.js';
import { pointDeps, startPointUpstreams, type PointUpstreams } from '../fixtures/point-upstreams.js';

let fx: PointUpstreams;
before(async () => {
  fx = await startPointUpstreams();
});
after(async () => fx.close());

describe('point connectors: egress', () => {
  it('each one is refused before any request when its host is not allow-listed', async () => {
    const deps = pointDeps(fx, { allowed: ['http://127.0.0.1:9'] });
    for (const factory of POINT_CONNECTORS) {
      const c = factory(deps);
      for (const band of c.bands) {
        const out = await c.materialize(requestFor(cellOf(12, 34), band, { tslot: currentTslot(deps.registry.bands.get(band)!.tempo) }));
        assert.ok(out.status === 'error' && /egress refused/.test(out.reason) && !out.format_mismatch, `${c.key} ${band}: ${JSON.stringify(out)}`);
      }
    }
    assert.equal(fx.requests.length, 0, 'no request reached the fixture');
  });

  it('with the fixture allowed, every band of every point connector is answered from the fixture alone', async () => {
    const deps = pointDeps(fx);
    for (const factory of POINT_CONNECTORS) {
      const c = factory(deps);
      for (const band of c.bands) {
        const out = await c.materialize(requestFor(cellOf(45.5, 7.5), band, { tslot: currentTslot(deps.registry.bands.get(band)!.tempo) }));
        assert.equal(out.status, 'value', `${c.key} ${band}: ${JSON.stringify(out)}`);
        assert.equal(deps.registry.bands.get(band)!.source, c.key, band);
      }
    }
    assert.ok(fx.requests.length > 0);
  });

  it('a slow upstream past the budget is a timeout outcome, not an error', async () => {
    fx.behave('/api/temporal/climatology/point', { delayMs: 2500 });
    const c = POINT_CONNECTORS.map((f) => f(pointDeps(fx, { timeoutSecs: 2 }))).find((m) => m.key === 'nasa_power')!;
    const out = await c.materialize(requestFor(cellOf(3, 4), 'solar.ghi_annual_mean', { budgetMs: 2200 }));
    assert.equal(out.status, 'timeout');
  });
});
