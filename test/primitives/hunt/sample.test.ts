import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cellCenter } from '../../../src/protocol/cell64.js';
import { contains, parsePolygon, parsePolygonBbox } from '../../../src/primitives/reads/geometry.js';
import { sampleSeed, stratifiedSample } from '../../../src/primitives/hunt/sample.js';
import { rankCandidates } from '../../../src/primitives/hunt/rank.js';

describe('hunt stratified sampling', () => {
  const box = parsePolygonBbox({ min_lat: 41, min_lng: -83, max_lat: 41.5, max_lng: -82 });
  it('is deterministic per region and day, and changes with the day', () => {
    const a = stratifiedSample(box, 32, sampleSeed(box, '2026-11-20'));
    const b = stratifiedSample(box, 32, sampleSeed(box, '2026-11-20'));
    const c = stratifiedSample(box, 32, sampleSeed(box, '2026-11-21'));
    assert.equal(a.cells.length, 32);
    assert.deepEqual(a.cells, b.cells);
    assert.notDeepEqual(a.cells, c.cells);
  });
  it('samples inside the polygon, not just its box (a triangle)', () => {
    const tri = parsePolygon({
      type: 'Polygon',
      coordinates: [
        [
          [-83, 41],
          [-82, 41],
          [-83, 42],
          [-83, 41],
        ],
      ],
    });
    const s = stratifiedSample(tri, 32, 'x');
    assert.equal(s.cells.length, 32);
    for (const c of s.cells) {
      const p = cellCenter(c);
      assert.ok(contains(tri, p.lat, p.lng), `${c} is outside the triangle`);
    }
  });
});

describe('hunt ranking', () => {
  const xs = [
    { cell64: 'b', value: -3 },
    { cell64: 'a', value: 2 },
    { cell64: 'c', value: 1 },
  ];
  it('orders by direction, ties by cell', () => {
    assert.deepEqual(
      rankCandidates(xs, 'desc').map((x) => x.cell64),
      ['a', 'c', 'b'],
    );
    assert.deepEqual(
      rankCandidates(xs, 'asc').map((x) => x.cell64),
      ['b', 'c', 'a'],
    );
    assert.deepEqual(
      rankCandidates(xs, 'abs_desc').map((x) => x.cell64),
      ['b', 'a', 'c'],
    );
  });
});
