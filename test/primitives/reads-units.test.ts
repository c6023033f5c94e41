import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as P from '../../src/protocol/index.js';
import { SvcError } from '../../src/protocol/errors.js';
import { cosine, evenPick, l2, mapLimit, newestPerTslot } from '../../src/primitives/reads/common.js';
import { contains, parseBboxArray, parsePolygon, parsePolygonBbox, sampleArea } from '../../src/primitives/reads/geometry.js';
import { centroid, scalarAgg } from '../../src/primitives/reads/region.js';
import { residualOf } from '../../src/primitives/embeddings/state.js';
import { captureDates } from '../../src/primitives/tokens/tokens.js';
import { parseToken } from '../../src/protocol/token-grammar.js';
import { bundleCidOf } from '../../src/primitives/tokens/bundles.js';

const code = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return e instanceof SvcError ? [e.code, e.httpStatus] : ['thrown', 0];
  }
  return null;
};

describe('area sampling', () => {
  it('a box of k×k cells is enumerated exactly and is_exhaustive', () => {
    const c = P.cellCenter(P.cellOf(1, 1));
    const a = parsePolygonBbox({ min_lat: c.lat - 1.4 * P.PITCH_LAT_DEG, max_lat: c.lat + 1.4 * P.PITCH_LAT_DEG, min_lng: c.lng - 1.4 * P.PITCH_LNG_DEG, max_lng: c.lng + 1.4 * P.PITCH_LNG_DEG });
    const s = sampleArea(a, 64);
    assert.equal(s.cells.length, 9);
    assert.equal(s.exhaustive, true);
    assert.ok(s.cells.includes(P.cellOf(1, 1)));
    const capped = sampleArea(a, 4);
    assert.equal(capped.cells.length, 4);
    assert.equal(capped.exhaustive, false);
  });

  it('a polygon smaller than a cell yields the cell under it', () => {
    const p = parsePolygon({
      type: 'Polygon',
      coordinates: [
        [
          [5, 5],
          [5.00001, 5],
          [5.00001, 5.00001],
          [5, 5],
        ],
      ],
    });
    assert.deepEqual(sampleArea(p, 64).cells, [P.cellOf(5, 5)]);
  });

  it('large areas: deterministic grid, all inside, MultiPolygon and holes honoured', () => {
    const mp = parsePolygon({
      type: 'MultiPolygon',
      coordinates: [
        [
          [
            [0, 0],
            [1, 0],
            [1, 1],
            [0, 1],
            [0, 0],
          ],
        ],
        [
          [
            [3, 3],
            [4, 3],
            [4, 4],
            [3, 4],
            [3, 3],
          ],
          [
            [3.2, 3.2],
            [3.8, 3.2],
            [3.8, 3.8],
            [3.2, 3.8],
            [3.2, 3.2],
          ],
        ],
      ],
    });
    const a = sampleArea(mp, 50);
    assert.deepEqual(a.cells, sampleArea(mp, 50).cells);
    assert.equal(a.cells.length, 50);
    assert.equal(a.method, 'grid');
    for (const c of a.cells) {
      const { lat, lng } = P.cellCenter(c);
      assert.ok(contains(mp, lat, lng), `${c} inside`);
    }
    assert.ok(a.cells.some((c) => P.cellCenter(c).lat < 1.5) && a.cells.some((c) => P.cellCenter(c).lat > 2.5), 'both parts sampled');
  });

  it('validation names the field', () => {
    assert.deepEqual(
      code(() => parseBboxArray([1, 2, 3])),
      ['invalid_argument', 422],
    );
    assert.deepEqual(
      code(() => parseBboxArray([0, 95, 1, 96])),
      ['invalid_argument', 422],
    );
    assert.deepEqual(
      code(() =>
        parsePolygon({
          type: 'Polygon',
          coordinates: [
            [
              [0, 0],
              [1, 0],
              [0, 0],
            ],
          ],
        }),
      ),
      ['invalid_argument', 422],
    );
    assert.deepEqual(
      code(() =>
        parsePolygon({
          type: 'Polygon',
          coordinates: [
            [
              [0, 0],
              [1, 0],
              [1, 'x'],
              [0, 0],
            ],
          ],
        }),
      ),
      ['invalid_argument', 422],
    );
  });
});

describe('aggregates and vector math', () => {
  it('mean, median (even and odd), p90 interpolated; empty → null', () => {
    assert.equal(scalarAgg([1, 2, 3, 4], 'mean'), 2.5);
    assert.equal(scalarAgg([4, 1, 3, 2], 'median'), 2.5);
    assert.equal(scalarAgg([3, 1, 2], 'median'), 2);
    assert.equal(scalarAgg([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 'p90'), 9.1);
    assert.equal(scalarAgg([], 'mean'), null);
    assert.deepEqual(
      centroid([
        [1, 2],
        [3, 4],
      ]),
      [2, 3],
    );
    assert.equal(centroid([]), null);
  });

  it('cosine and L2', () => {
    assert.equal(cosine([1, 0], [0, 1]), 0);
    assert.equal(cosine([1, 1], [2, 2]), 1);
    assert.equal(cosine([0, 0], [1, 1]), null);
    assert.equal(l2([0, 0], [3, 4]), 5);
  });

  it('cosine, L2 and the state residual hold at extreme magnitudes (no overflow to NaN or 0)', () => {
    const v = Array.from({ length: 128 }, (_, i) => Math.sin(i + 1));
    for (const scale of [1e300, 1e-300]) {
      const c = cosine(
        v,
        v.map((x) => x * scale),
      );
      assert.ok(c !== null && Math.abs(c - 1) < 1e-12, `scale ${scale}: ${c}`);
    }
    // Subnormal values keep only a few significant bits: the direction itself is perturbed, not lost.
    const sub = cosine(
      v,
      v.map((x) => x * 1e-320),
    );
    assert.ok(sub !== null && Math.abs(sub - 1) < 1e-6, `subnormal: ${sub}`);
    assert.ok(
      Math.abs(
        cosine(
          v,
          v.map((x) => -x * 1e200),
        )! + 1,
      ) < 1e-12,
    );
    assert.ok(Math.abs(l2([0, 0], [3e200, 4e200]) / 5e200 - 1) < 1e-15);
    assert.ok(Math.abs(l2([0, 0], [3e-200, 4e-200]) / 5e-200 - 1) < 1e-15);
    // b = 2a + e (e orthogonal to a): the residual is e, at any magnitude.
    const a = [1, 0, 0, 0];
    const e = [0, 0.5, -0.25, 0];
    for (const scale of [1, 1e200, 1e-200]) {
      const r = residualOf(
        a.map((x) => x * scale),
        a.map((x, i) => (2 * x + e[i]) * scale),
      );
      r.forEach((x, i) => assert.ok(Math.abs(x - e[i] * scale) <= 1e-12 * scale, `scale ${scale}: ${r}`));
    }
  });

  it('evenPick spreads deterministically; newestPerTslot keeps the last version', () => {
    assert.deepEqual(evenPick([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 3), [1, 5, 8]);
    const f = (tslot: number, v: number) => ({ tslot, fact_cid: `${tslot}-${v}` }) as any;
    assert.deepEqual(
      newestPerTslot([f(1, 1), f(2, 1), f(1, 2)]).map((x) => x.fact_cid),
      ['1-2', '2-1'],
    );
  });

  it('mapLimit bounds concurrency, keeps order and stops starting when told', async () => {
    let active = 0;
    let peak = 0;
    const out = await mapLimit([1, 2, 3, 4, 5, 6, 7, 8], 3, async (x) => {
      active++;
      peak = Math.max(peak, active);
      await new Promise((r) => setTimeout(r, 5));
      active--;
      return x * 2;
    });
    assert.deepEqual(out, [2, 4, 6, 8, 10, 12, 14, 16]);
    assert.equal(peak, 3);
    let started = 0;
    const partial = await mapLimit(
      [1, 2, 3, 4],
      1,
      async (x) => x,
      () => started++ < 2,
    );
    assert.deepEqual(partial, [1, 2, undefined, undefined]);
  });
});

describe('tokens and bundles', () => {
  const cid = 'a'.repeat(52);
  const cell = P.cellOf(12.9716, 77.5946);
  it('parses cell, readable and legacy forms', () => {
    assert.deepEqual(parseToken('svc', `svc:fact:${cell}:${cid}`), { kind: 'fact', form: 'cell', subject: cell, fact_cid: cid, legacy: false });
    const r = parseToken('svc', `memt:12.971600,77.594600@2025-11-09@indices.ndvi:${cid}`);
    assert.equal(r.kind === 'fact' && r.form === 'readable' && r.band, 'indices.ndvi');
    assert.equal(r.legacy, true);
    assert.deepEqual(parseToken('svc', `memb:${'a'.repeat(26)}`), { kind: 'bundle', rest: 'a'.repeat(26), legacy: true });
    assert.deepEqual(parseToken('other', `other:bundle:x`), { kind: 'bundle', rest: 'x', legacy: false });
  });

  it('refuses coarse coordinates with 400 and malformed tokens with 422', () => {
    assert.deepEqual(
      code(() => parseToken('svc', `svc:fact:12.9716,77.594600@2025-11-09@indices.ndvi:${cid}`)),
      ['invalid_argument', 400],
    );
    assert.deepEqual(
      code(() => parseToken('svc', `svc:fact:12,77@2025-11-09@indices.ndvi:${cid}`)),
      ['invalid_argument', 400],
    );
    assert.deepEqual(
      code(() => parseToken('svc', `svc:fact:12.971600,77.594600@2025-02-30@indices.ndvi:${cid}`)),
      ['invalid_argument', 422],
    );
    assert.deepEqual(
      code(() => parseToken('svc', `svc:fact:95.000000,77.594600@2025-02-01@indices.ndvi:${cid}`)),
      ['invalid_argument', 422],
    );
    assert.deepEqual(
      code(() => parseToken('svc', 'svc:fact:nope')),
      ['invalid_argument', 422],
    );
    assert.deepEqual(
      code(() => parseToken('svc', 'xyz:fact:nope')),
      ['invalid_argument', 422],
    );
  });

  it('capture date: derivation.captured_at first, else signed_at (UTC)', () => {
    const f = (body: Record<string, unknown>) => ({ body }) as any;
    assert.deepEqual(captureDates(f({ signed_at: '2025-11-09T23:30:00-02:00' })), ['2025-11-10']);
    assert.deepEqual(captureDates(f({ signed_at: '2025-11-09T10:00:00Z', derivation: { captured_at: '2025-11-03T10:00:00Z' } })), ['2025-11-03']);
    assert.deepEqual(captureDates(f({})), []);
  });

  it('bundle_cid is content-derived: order-free once sorted, label-sensitive, 26 characters', () => {
    const a = bundleCidOf({ fact_cids: ['x', 'y'] });
    assert.equal(a, bundleCidOf({ fact_cids: ['x', 'y'] }));
    assert.notEqual(a, bundleCidOf({ fact_cids: ['x', 'y'], label: 'l' }));
    assert.ok(P.isAnchorId(a));
  });
});
