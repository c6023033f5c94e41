import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cellOf } from '../../../src/protocol/cell64.js';
import { currentTslot } from '../../../src/protocol/tslot.js';
import { METNO_BAND, metno } from '../../../src/sources/metno.js';
import { USER_AGENT } from '../../../src/sources/index.js';
import { requestFor } from '../fixtures/json-deps.js';
import { POINT_PATHS, pointDeps, startPointUpstreams, type PointUpstreams } from '../fixtures/point-upstreams.js';

let fx: PointUpstreams;
before(async () => {
  fx = await startPointUpstreams();
});
after(async () => fx.close());
beforeEach(() => fx.reset());

describe('metno', () => {
  it('reads the current hour step, with 4-decimal coordinates and the identifying User-Agent', async () => {
    const c = metno(pointDeps(fx));
    const out = await c.materialize(requestFor(cellOf(59.9139, 10.7522), METNO_BAND));
    assert.ok(out.status === 'value', JSON.stringify(out));
    assert.deepEqual([out.value, out.unit, out.tslot, out.fn], [12.3, 'degC', currentTslot('fast'), 'metno_locationforecast@1']);
    assert.match(out.provenance.captured_at ?? '', /T\d\d:00:00Z$/);
    const r = fx.requests[0];
    assert.equal(r.path, POINT_PATHS.metno);
    assert.ok(/^-?\d+(\.\d{1,4})?$/.test(r.query.get('lat')!) && /^-?\d+(\.\d{1,4})?$/.test(r.query.get('lon')!), `${r.query}`);
    assert.equal(r.userAgent, USER_AGENT);
  });

  it('a step without air_temperature is a signed absence unavailable_capability', async () => {
    const c = metno(pointDeps(fx));
    fx.data.metno.temperature = () => undefined;
    const out = await c.materialize(requestFor(cellOf(60, 11), METNO_BAND));
    assert.deepEqual([out.status, out.status === 'absence' && out.reason], ['absence', 'unavailable_capability']);
  });

  it('a forecast starting hours ahead has no step for the present: an error, nothing signed', async () => {
    const c = metno(pointDeps(fx));
    fx.data.metno.firstStepHours = 3;
    const out = await c.materialize(requestFor(cellOf(60, 12), METNO_BAND));
    assert.ok(out.status === 'error' && /no step for the present/.test(out.reason));
  });

  it('a past tslot is an error without a request; 5xx is an error; HTML and the wrong shape are format mismatches', async () => {
    const c = metno(pointDeps(fx));
    const past = await c.materialize(requestFor(cellOf(60, 13), METNO_BAND, { tslot: currentTslot('fast') - 2 }));
    assert.equal(past.status, 'error');
    assert.equal(fx.requests.length, 0);
    fx.behave(POINT_PATHS.metno, { status: 503 });
    const down = await c.materialize(requestFor(cellOf(60, 14), METNO_BAND));
    assert.ok(down.status === 'error' && !down.format_mismatch);
    fx.behave(POINT_PATHS.metno, { malformed: 'bytes' });
    const html = await c.materialize(requestFor(cellOf(60, 15), METNO_BAND));
    assert.ok(html.status === 'error' && html.format_mismatch);
    fx.behave(POINT_PATHS.metno, { malformed: 'shape' });
    const shape = await c.materialize(requestFor(cellOf(60, 16), METNO_BAND));
    assert.ok(shape.status === 'error' && shape.format_mismatch);
  });
});
