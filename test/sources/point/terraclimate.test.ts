import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cellOf } from '../../../src/protocol/cell64.js';
import { parseNcssCsv, TERRACLIMATE_BANDS, terraclimate } from '../../../src/sources/terraclimate.js';
import { requestFor } from '../fixtures/json-deps.js';
import { POINT_PATHS, pointDeps, startPointUpstreams, type PointUpstreams } from '../fixtures/point-upstreams.js';

let fx: PointUpstreams;
before(async () => {
  fx = await startPointUpstreams();
});
after(async () => fx.close());
beforeEach(() => fx.reset());

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const r2 = (x: number) => Math.round(x * 100) / 100;

describe('terraclimate', () => {
  it('sums the 12 precipitation normals and averages the temperature normals, as written (no second scaling)', async () => {
    const c = terraclimate(pointDeps(fx));
    const cell = cellOf(50.11, 8.68);
    const outs = await Promise.all(Object.keys(TERRACLIMATE_BANDS).map((b) => c.materialize(requestFor(cell, b))));
    const d = fx.data.terraclimate as Record<string, number[]>;
    assert.deepEqual(
      outs.map((o) => (o.status === 'value' ? [o.value, o.unit, o.tslot] : o.status)),
      [
        [r2(sum(d.ppt)), 'mm_yr', 0],
        [r2(sum(d.tmax) / 12), 'degC', 0],
        [r2(sum(d.tmin) / 12), 'degC', 0],
      ],
    );
    assert.equal(outs[0].status === 'value' && (outs[0].args?.monthly as number[]).length, 12);
    for (const v of ['ppt', 'tmax', 'tmin']) {
      assert.equal(fx.count(POINT_PATHS.terraclimate(v)), 1, v);
      const q = fx.requests.find((r) => r.path === POINT_PATHS.terraclimate(v))!.query;
      assert.deepEqual([q.get('var'), q.get('temporal'), q.get('accept')], [v, 'all', 'csv'], 'temporal=all: without it NCSS answers one time step');
    }
  });

  it('twelve NaN months (sea) are outside_coverage; some NaN months are unavailable_capability', async () => {
    const c = terraclimate(pointDeps(fx));
    fx.data.terraclimate.ppt = Array(12).fill('NaN');
    const sea = await c.materialize(requestFor(cellOf(40, -40), 'climate.normal_precip_annual'));
    assert.deepEqual([sea.status, sea.status === 'absence' && sea.reason], ['absence', 'outside_coverage']);
    fx.data.terraclimate.tmax = [4.1, 'NaN', 9.8, 14.2, 18.5, 21.6, 23.9, 23.4, 19.3, 14.1, 8.4, 4.9];
    const part = await c.materialize(requestFor(cellOf(40, -41), 'climate.normal_tmax_annual'));
    assert.deepEqual([part.status, part.status === 'absence' && part.reason], ['absence', 'unavailable_capability']);
  });

  it('packed or twice-scaled numbers and unexpected units are source_format_mismatch, never a value', async () => {
    const c = terraclimate(pointDeps(fx));
    fx.data.terraclimate.tmax = fx.data.terraclimate.tmax.map((v) => (v as number) * 100);
    const packed = await c.materialize(requestFor(cellOf(10, 10), 'climate.normal_tmax_annual'));
    assert.ok(packed.status === 'error' && packed.format_mismatch && /outside/.test(packed.reason));
    fx.data.terraclimateUnits.tmin = 'K';
    const kelvin = await c.materialize(requestFor(cellOf(10, 11), 'climate.normal_tmin_annual'));
    assert.ok(kelvin.status === 'error' && kelvin.format_mismatch);
  });

  it('an upstream error is an error outcome; HTML or another CSV is source_format_mismatch', async () => {
    const c = terraclimate(pointDeps(fx));
    fx.behave(POINT_PATHS.terraclimate('ppt'), { status: 500 });
    const down = await c.materialize(requestFor(cellOf(1, 1), 'climate.normal_precip_annual'));
    assert.ok(down.status === 'error' && !down.format_mismatch && /HTTP 500/.test(down.reason));
    fx.behave(POINT_PATHS.terraclimate('ppt'), { malformed: 'bytes' });
    const html = await c.materialize(requestFor(cellOf(1, 2), 'climate.normal_precip_annual'));
    assert.ok(html.status === 'error' && html.format_mismatch);
    fx.behave(POINT_PATHS.terraclimate('ppt'), { malformed: 'shape' });
    const other = await c.materialize(requestFor(cellOf(1, 3), 'climate.normal_precip_annual'));
    assert.ok(other.status === 'error' && other.format_mismatch);
  });

  it('parseNcssCsv reads the older header without a station column and refuses a row count other than 12', () => {
    const rows = Array.from({ length: 12 }, (_, i) => `2005-${String(i + 1).padStart(2, '0')}-16T00:00:00Z,45.021,7.688,${i}.5`);
    const m = parseNcssCsv(`time,latitude[unit="degrees_north"],longitude[unit="degrees_east"],tmin[unit="degC"]\n${rows.join('\n')}\n`, 'tmin', 'http://x/y');
    assert.deepEqual([m.unit, m.values[3], m.times.length], ['degC', 3.5, 12]);
    assert.throws(() => parseNcssCsv(`time,tmin[unit="degC"]\n2005-01-16T00:00:00Z,1.0\n`, 'tmin', 'http://x/y'), /expected 12 monthly rows/);
  });
});
