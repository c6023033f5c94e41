import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { clipRing, dissolve, groupPieces, ringArea2, type Ring } from '../../../src/primitives/fields/polygons.js';

// Exterior rings have positive shoelace area in these y-down units (MVT winding).
const rect = (x0: number, y0: number, x1: number, y1: number): Ring => [
  [x0, y0],
  [x1, y0],
  [x1, y1],
  [x0, y1],
];
const area = (polys: NonNullable<ReturnType<typeof dissolve>>) => polys.reduce((s, p) => s + ringArea2(p.outer) + p.holes.reduce((h, r) => h + ringArea2(r), 0), 0) / 2;

describe('field polygons: clip, group, dissolve', () => {
  it('clips a rectangle and keeps its winding', () => {
    const r = clipRing(rect(0, 0, 10, 10), { x0: 5, y0: -1, x1: 20, y1: 4 });
    assert.equal(ringArea2(r) / 2, 5 * 4);
    assert.ok(ringArea2(r) > 0);
  });

  it('a concave ring cut in two by a clip becomes two polygons after dissolve', () => {
    // A U open to the north: two prongs joined by a base below y = 8.
    const u: Ring = [
      [0, 0],
      [3, 0],
      [3, 8],
      [7, 8],
      [7, 0],
      [10, 0],
      [10, 10],
      [0, 10],
    ];
    assert.ok(ringArea2(u) > 0);
    const clipped = clipRing(u, { x0: -5, y0: -5, x1: 15, y1: 5 });
    const polys = dissolve([clipped]);
    assert.ok(polys);
    assert.equal(polys.length, 2);
    assert.equal(area(polys), 2 * 3 * 5);
  });

  it('merges the parts of a field cut by a tile edge back into one polygon with its hole', () => {
    const units = 100;
    const outer = rect(60, 20, 150, 80);
    const hole = rect(90, 40, 120, 60).reverse() as Ring;
    const parts = [0, 1].map((tx) => {
      const tile = { x0: tx * units, y0: 0, x1: (tx + 1) * units, y1: units };
      return { layer: 'l', id: null, tile: { x: tx, y: 0 }, rings: [clipRing(outer, tile), clipRing(hole, tile)].filter((r) => r.length > 0) };
    });
    const groups = groupPieces(parts, units);
    assert.deepEqual(groups, [[0, 1]]);
    const polys = dissolve(parts.flatMap((p) => p.rings));
    assert.ok(polys);
    assert.equal(polys.length, 1);
    assert.equal(polys[0].holes.length, 1);
    assert.equal(area(polys), 90 * 60 - 30 * 20);
    assert.equal(polys[0].outer.length, 4, 'the cut vertices on the tile edge are gone');
  });

  it('keeps two fields apart when they only sit on both sides of a tile edge without touching it together', () => {
    const units = 100;
    const parts = [
      { layer: 'l', id: null, tile: { x: 0, y: 0 }, rings: [rect(80, 10, 100, 30)] },
      { layer: 'l', id: null, tile: { x: 1, y: 0 }, rings: [rect(100, 40, 120, 60)] },
      { layer: 'other', id: null, tile: { x: 1, y: 0 }, rings: [rect(100, 10, 120, 30)] },
    ];
    assert.deepEqual(
      groupPieces(parts, units).map((g) => g.length),
      [1, 1, 1],
    );
  });
});
