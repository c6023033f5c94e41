import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cellCenter, cellOf } from '../../../src/protocol/cell64.js';
import { SOIL_PROPERTIES, soilgrids } from '../../../src/sources/soilgrids.js';
import { fixtureDeps, requestFor } from '../fixtures/json-deps.js';
import { PATHS, startJsonUpstreams, type JsonUpstreams } from '../fixtures/json-upstreams.js';

let fx: JsonUpstreams;
before(async () => {
  fx = await startJsonUpstreams();
});
after(async () => fx.close());
beforeEach(() => fx.reset());

describe('soilgrids', () => {
  describe('when every depth has a prediction', () => {
    it('signs the 5/10/15 cm depth-weighted mean divided by d_factor, in the band unit', async () => {
      const c = soilgrids(fixtureDeps(fx));
      const cell = cellOf(51.98, 5.66);
      const bands = Object.keys(SOIL_PROPERTIES);
      const outs = await Promise.all(bands.map((b) => c.materialize(requestFor(cell, b))));
      // Fixture means (mapped units) and d_factor: (5·a + 10·b + 15·c) / 30 / d_factor.
      const want: Record<string, [number, string]> = {
        'soil.soc_0_30cm': [22.867, 'g_kg'], // (402, 260, 150) dg/kg, d 10
        'soil.phh2o_0_30cm': [6.467, 'pH'], // (62, 64, 66) pH·10, d 10
        'soil.clay_0_30cm': [28.217, 'percent'], // (253, 270, 300) g/kg, d 10
        'soil.sand_0_30cm': [38.283, 'percent'], // (401, 390, 372) g/kg, d 10
        'soil.bdod_0_30cm': [1.368, 'kg_dm3'], // (128, 135, 141) cg/cm³, d 100
        'soil.nitrogen_0_30cm': [2.685, 'g_kg'], // (412, 301, 199) cg/kg, d 100
      };
      bands.forEach((b, i) => {
        const o = outs[i];
        assert.ok(o.status === 'value', b);
        if (o.status !== 'value') return;
        assert.deepEqual([o.value, o.unit], want[b], b);
        assert.equal(o.tslot, 0);
        assert.equal(o.fn, 'soilgrids_depth_weighted_0_30@1');
        assert.equal(o.provenance.version, 'soilgrids-v2.0');
      });
      assert.equal(fx.count(PATHS.soilgrids), 1, 'the six soil bands of a cell share one request');
      const q = fx.requests[0].query;
      assert.deepEqual(q.getAll('property'), ['bdod', 'clay', 'nitrogen', 'phh2o', 'sand', 'soc']);
      assert.deepEqual(q.getAll('depth'), ['0-5cm', '5-15cm', '15-30cm']);
      assert.equal(q.get('value'), 'mean');
      const centre = cellCenter(cell);
      assert.ok(Math.abs(Number(q.get('lat')) - centre.lat) < 1e-6 && Math.abs(Number(q.get('lon')) - centre.lng) < 1e-6);
    });
  });

  describe('when a depth has no prediction', () => {
    it('any null depth is a signed absence outside_coverage', async () => {
      const c = soilgrids(fixtureDeps(fx));
      fx.data.soil.clay.means = [null, 270, 300];
      const out = await c.materialize(requestFor(cellOf(60, -40), 'soil.clay_0_30cm'));
      assert.deepEqual([out.status, out.status === 'absence' && out.reason], ['absence', 'outside_coverage']);
    });
  });

  describe('when the answer has the wrong shape', () => {
    it('an unexpected target unit is source_format_mismatch (never a value in the wrong unit)', async () => {
      const c = soilgrids(fixtureDeps(fx));
      fx.data.soil.clay.target_units = 'g/kg';
      const out = await c.materialize(requestFor(cellOf(10, 10), 'soil.clay_0_30cm'));
      assert.ok(out.status === 'error' && out.format_mismatch && /target_units/.test(out.reason));
    });

    it('a non-numeric mean is source_format_mismatch', async () => {
      const c = soilgrids(fixtureDeps(fx));
      fx.data.soil.sand.means = [401, '390' as unknown as number, 372];
      const out = await c.materialize(requestFor(cellOf(10, 11), 'soil.sand_0_30cm'));
      assert.ok(out.status === 'error' && out.format_mismatch && /values.mean/.test(out.reason));
    });
  });
});
