import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cellOf } from '../../../src/protocol/cell64.js';
import { PVGIS_BAND, pvgis } from '../../../src/sources/pvgis.js';
import { requestFor } from '../fixtures/json-deps.js';
import { POINT_PATHS, pointDeps, startPointUpstreams, type PointUpstreams } from '../fixtures/point-upstreams.js';

let fx: PointUpstreams;
before(async () => {
  fx = await startPointUpstreams();
});
after(async () => fx.close());
beforeEach(() => fx.reset());

describe('pvgis', () => {
  it('signs E_y of a 1 kWp system at the optimal angles, with the angles and database in the args', async () => {
    const c = pvgis(pointDeps(fx));
    const out = await c.materialize(requestFor(cellOf(45.07, 7.69), PVGIS_BAND));
    assert.ok(out.status === 'value', JSON.stringify(out));
    assert.deepEqual([out.value, out.unit, out.tslot, out.fn], [1043.27, 'kWh_kWp_yr', 0, 'pvgis_pvcalc@1']);
    assert.deepEqual([out.args?.slope_deg, out.args?.azimuth_deg, out.args?.radiation_db, out.args?.year_min, out.args?.year_max], [38, -1, 'PVGIS-SARAH3', 2005, 2023]);
    assert.equal(out.provenance.version, 'pvgis-5.3/PVGIS-SARAH3');
    const q = fx.requests[0].query;
    assert.equal(fx.requests[0].path, POINT_PATHS.pvgis);
    assert.deepEqual([q.get('peakpower'), q.get('loss'), q.get('optimalangles'), q.get('outputformat')], ['1', '14', '1', 'json']);
  });

  it('"Location over the sea" (HTTP 400) is a signed absence outside_coverage', async () => {
    const c = pvgis(pointDeps(fx));
    fx.data.pvgis = { error: 'Location over the sea. Please, select another location' };
    const out = await c.materialize(requestFor(cellOf(40, -30), PVGIS_BAND));
    assert.deepEqual([out.status, out.status === 'absence' && out.reason], ['absence', 'outside_coverage']);
    assert.match(out.status === 'absence' ? (out.detail ?? '') : '', /over the sea/);
  });

  it('another 400 message is a refusal (error, nothing signed); a 5xx is an error', async () => {
    const c = pvgis(pointDeps(fx));
    fx.data.pvgis = { error: "Parameter 'peakpower' must be positive" };
    const refused = await c.materialize(requestFor(cellOf(45, 7), PVGIS_BAND));
    assert.ok(refused.status === 'error' && !refused.format_mismatch && /refused the request/.test(refused.reason));
    fx.behave(POINT_PATHS.pvgis, { status: 500 });
    const down = await c.materialize(requestFor(cellOf(45, 8), PVGIS_BAND));
    assert.ok(down.status === 'error' && !down.format_mismatch && /HTTP 500/.test(down.reason));
  });

  it('HTML or JSON of the wrong shape is source_format_mismatch', async () => {
    const c = pvgis(pointDeps(fx));
    fx.behave(POINT_PATHS.pvgis, { malformed: 'bytes' });
    const html = await c.materialize(requestFor(cellOf(45, 9), PVGIS_BAND));
    assert.ok(html.status === 'error' && html.format_mismatch);
    fx.behave(POINT_PATHS.pvgis, { malformed: 'shape' });
    const shape = await c.materialize(requestFor(cellOf(45, 10), PVGIS_BAND));
    assert.ok(shape.status === 'error' && shape.format_mismatch && /outputs is not an object/.test(shape.reason));
  });
});
