import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import geodesic from 'geographiclib-geodesic';
import { SvcError } from '../../../src/protocol/errors.js';
import { geodesicAreaM2, geometryBox, MAX_RING_POSITIONS, parsePlotGeometry, plotAreaHa, SPHERE_RADIUS_M } from '../../../src/primitives/eudr/geometry.js';

const F = 'plots[0].geometry_geojson';

function refused(g: unknown, pattern: RegExp): void {
  assert.throws(
    () => parsePlotGeometry(g, F),
    (e: unknown) => {
      assert.ok(e instanceof SvcError, 'an SvcError');
      assert.equal(e.code, 'invalid_argument');
      assert.equal(e.details.field, F);
      assert.ok(e.message.startsWith(`${F}: `), e.message);
      assert.match(e.message, pattern);
      return true;
    },
  );
}

const poly = (...rings: number[][][]) => ({ type: 'Polygon', coordinates: rings });
/** A counter-clockwise square ring with its south-west corner at (lng, lat). */
const square = (lng: number, lat: number, side: number) => [
  [lng, lat],
  [lng + side, lat],
  [lng + side, lat + side],
  [lng, lat + side],
  [lng, lat],
];

describe('parsePlotGeometry accepts', () => {
  it('a counter-clockwise polygon', () => {
    const g = parsePlotGeometry(poly(square(-5, 6, 0.01)), F);
    assert.equal(g.type, 'Polygon');
    assert.equal(g.source, 'polygon');
    assert.deepEqual(g.coordinates, [square(-5, 6, 0.01)]);
  });
  it('a polygon with a clockwise hole, keeping the hole', () => {
    const hole = square(-4.996, 6.004, 0.002).reverse();
    const g = parsePlotGeometry(poly(square(-5, 6, 0.01), hole), F);
    assert.equal((g.coordinates as number[][][]).length, 2);
    assert.deepEqual((g.coordinates as number[][][])[1], hole);
  });
  it('a point', () => {
    assert.deepEqual(parsePlotGeometry({ type: 'Point', coordinates: [-5.5, 7.25] }, F), { type: 'Point', coordinates: [-5.5, 7.25], source: 'point' });
  });
  it('a bbox, as a closed counter-clockwise rectangle', () => {
    const g = parsePlotGeometry({ bbox: [-5, 6, -4.99, 6.01] }, F);
    assert.equal(g.source, 'bbox');
    assert.deepEqual(g.coordinates, [
      [
        [-5, 6],
        [-4.99, 6],
        [-4.99, 6.01],
        [-5, 6.01],
        [-5, 6],
      ],
    ]);
    // The rectangle passes the polygon checks itself.
    assert.deepEqual(parsePlotGeometry(poly(...(g.coordinates as number[][][])), F).coordinates, g.coordinates);
  });
  it('a position repeated right after itself, dropping the repeat', () => {
    const ring = [
      [0, 0],
      [1, 0],
      [1, 0],
      [1, 1],
      [0, 1],
      [0, 0],
    ];
    assert.deepEqual(parsePlotGeometry(poly(ring), F).coordinates, [square(0, 0, 1)]);
  });
  it('a ring of exactly the cap', () => {
    const ring: number[][] = [];
    for (let i = 0; i < MAX_RING_POSITIONS - 1; i++) {
      const a = (2 * Math.PI * i) / (MAX_RING_POSITIONS - 1);
      ring.push([10 + 0.01 * Math.cos(a), 0.01 * Math.sin(a)]);
    }
    ring.push(ring[0]);
    assert.equal((parsePlotGeometry(poly(ring), F).coordinates as number[][][])[0].length, MAX_RING_POSITIONS);
  });
});

describe('parsePlotGeometry refuses', () => {
  it('what is not an object', () => {
    refused(null, /is not an object \(got null\)/);
    refused([1, 2], /is not an object \(got an array\)/);
    refused('POLYGON((0 0, 1 0, 1 1, 0 0))', /is not an object \(got the string/);
    refused(42, /is not an object \(got number\)/);
  });
  it('an object without a type or bbox', () => {
    refused({ coordinates: [0, 0] }, /has no type: expected a GeoJSON Polygon or Point/);
  });
  it('an unknown type, with a hint for the near misses', () => {
    refused({ type: 'LineString', coordinates: [] }, /unknown geometry type "LineString": expected "Polygon" or "Point"/);
    refused({ type: 'MultiPolygon', coordinates: [] }, /unknown geometry type "MultiPolygon".*send each polygon as its own plot/);
    refused({ type: 'Feature', geometry: {} }, /unknown geometry type "Feature".*send the feature’s geometry/);
  });
  it('a position that is not two finite numbers', () => {
    refused({ type: 'Point', coordinates: [1] }, /coordinates is not a position of two finite numbers \[lng, lat\]/);
    refused({ type: 'Point', coordinates: [1, 2, 3, 4] }, /coordinates is not a position of two finite numbers/);
    refused({ type: 'Point', coordinates: [1, 2, 'high'] }, /coordinates is not a position of two finite numbers/);
    // An altitude after [lng, lat] is GeoJSON's own: accepted and dropped.
    assert.deepEqual(parsePlotGeometry({ type: 'Point', coordinates: [1, 2, 350] }, 'g').coordinates, [1, 2]);
    refused({ type: 'Point', coordinates: ['1', 2] }, /coordinates is not a position of two finite numbers/);
    refused({ type: 'Point', coordinates: [Number.NaN, 2] }, /coordinates is not a position of two finite numbers/);
    refused({ type: 'Point' }, /coordinates is not a position of two finite numbers/);
    refused(
      poly([
        [0, 0],
        [1, 0],
        [1, Number.POSITIVE_INFINITY],
        [0, 0],
      ]),
      /coordinates\[0\]\[2\] is not a position of two finite numbers/,
    );
  });
  it('a longitude or latitude out of range', () => {
    refused({ type: 'Point', coordinates: [181, 0] }, /coordinates: longitude 181 is outside \[-180, 180\]/);
    refused({ type: 'Point', coordinates: [0, -90.5] }, /coordinates: latitude -90.5 is outside \[-90, 90\]/);
    refused(
      poly([
        [0, 0],
        [1, 0],
        [1, 95],
        [0, 0],
      ]),
      /coordinates\[0\]\[2\]: latitude 95 is outside \[-90, 90\]/,
    );
  });
  it('polygon coordinates that are not rings', () => {
    refused({ type: 'Polygon', coordinates: [] }, /coordinates must be a non-empty array of rings/);
    refused({ type: 'Polygon', coordinates: 'x' }, /coordinates must be a non-empty array of rings/);
    refused(poly(square(0, 0, 1), 'x' as unknown as number[][]), /coordinates\[1\] is not an array of positions/);
  });
  it('a ring with fewer than 4 positions', () => {
    refused(
      poly([
        [0, 0],
        [1, 0],
        [0, 0],
      ]),
      /ring 0 \(the outer ring\) has 3 positions; a closed ring needs at least 4/,
    );
  });
  it('an open ring', () => {
    refused(
      poly([
        [0, 0],
        [1, 0],
        [1, 1],
        [0, 1],
      ]),
      /ring 0 \(the outer ring\) is open: its first position \[0, 0\] differs from its last \[0, 1\]/,
    );
    refused(
      poly(square(0, 0, 1), [
        [0.2, 0.2],
        [0.2, 0.4],
        [0.4, 0.4],
        [0.4, 0.2],
      ]),
      /ring 1 \(a hole\) is open/,
    );
  });
  it('more positions in a ring than the cap', () => {
    const ring = Array.from({ length: MAX_RING_POSITIONS + 1 }, () => [0, 0]);
    refused(poly(ring), /ring 0 \(the outer ring\) has 2001 positions; at most 2000 are accepted per ring/);
  });
  it('a self-intersecting ring, naming the two edges', () => {
    // A bow tie: edge 0 (0,0)→(1,1) crosses edge 2 (1,0)→(0,1).
    refused(
      poly([
        [0, 0],
        [1, 1],
        [1, 0],
        [0, 1],
        [0, 0],
      ]),
      /ring 0 \(the outer ring\) intersects itself: edges 0 and 2 cross/,
    );
    // A ring that comes back through its own corner (1,1): edges 1 and 4 touch there.
    const pinched = [
      [0, 0],
      [1, 0],
      [1, 1],
      [2, 1],
      [2, 2],
      [1, 1],
      [0, 1],
      [0, 0],
    ];
    refused(poly(pinched), /intersects itself: edges 1 and 4 touch/);
    // A spike that goes out and back along the same line.
    refused(
      poly([
        [0, 0],
        [2, 0],
        [1, 0],
        [1, 1],
        [0, 0],
      ]),
      /intersects itself: edges 0 and 1 overlap \(the boundary doubles back on itself\)/,
    );
    // Edge numbers are the caller's, even after a repeated position is dropped.
    refused(
      poly([
        [0, 0],
        [0, 0],
        [1, 1],
        [1, 0],
        [0, 1],
        [0, 0],
      ]),
      /edges 1 and 3 cross/,
    );
  });
  it('a clockwise outer ring or a counter-clockwise hole', () => {
    refused(poly(square(0, 0, 1).reverse()), /ring 0 \(the outer ring\) is clockwise; RFC 7946 expects the outer ring counter-clockwise/);
    refused(poly(square(0, 0, 1), square(0.2, 0.2, 0.2)), /ring 1 \(a hole\) is counter-clockwise; RFC 7946 expects holes clockwise/);
  });
  it('a ring of zero area', () => {
    refused(
      poly([
        [0, 0],
        [1, 1],
        [2, 2],
        [0, 0],
      ]),
      /ring 0 \(the outer ring\) has zero area/,
    );
    refused(
      poly([
        [3, 3],
        [3, 3],
        [3, 3],
        [3, 3],
      ]),
      /ring 0 \(the outer ring\) has zero area/,
    );
    refused(
      poly([
        [0.1, 0.1],
        [0.2, 0.2],
        [0.3, 0.3],
        [0.1, 0.1],
      ]),
      /has zero area/,
    );
  });
  it('a ring crossing the antimeridian', () => {
    refused(
      poly([
        [179.9, 0],
        [-179.9, 0],
        [-179.9, 1],
        [179.9, 1],
        [179.9, 0],
      ]),
      /ring 0 \(the outer ring\) crosses the antimeridian \(edge 0 jumps from longitude 179.9 to -179.9\)/,
    );
  });
  it('a bbox that is not four numbers in range with min < max', () => {
    refused({ bbox: [0, 0, 1] }, /bbox must be four finite numbers \[min_lng, min_lat, max_lng, max_lat\]/);
    refused({ bbox: 'x' }, /bbox must be four finite numbers/);
    refused({ bbox: [0, 0, 1, Number.NaN] }, /bbox must be four finite numbers/);
    refused({ bbox: [-181, 0, 1, 1] }, /bbox longitude -181 is outside \[-180, 180\]/);
    refused({ bbox: [0, 0, 1, 91] }, /bbox latitude 91 is outside \[-90, 90\]/);
    refused({ bbox: [1, 0, 1, 1] }, /bbox min_lng 1 is not less than max_lng 1/);
    refused({ bbox: [170, 0, -170, 1] }, /bbox min_lng 170 is not less than max_lng -170 \(a box crossing the antimeridian is not accepted\)/);
    refused({ bbox: [0, 2, 1, 1] }, /bbox min_lat 2 is not less than max_lat 1/);
  });
});

describe('geodesicAreaM2', () => {
  it('gives 123.6 ha for a 0.01° square at the equator and about half at 60° N', () => {
    const eq = geodesicAreaM2([square(0, 0, 0.01)]);
    assert.ok(Math.abs(eq - 1_236_000) / 1_236_000 < 0.005, `${eq}`);
    const north = geodesicAreaM2([square(0, 60, 0.01)]);
    assert.ok(Math.abs(north / eq - 0.5) < 0.01, `${north / eq}`);
  });
  it('gives 1 ha for a 100 m square built in metres near 45° N', () => {
    const dLat = (100 / SPHERE_RADIUS_M) * (180 / Math.PI);
    const dLng = dLat / Math.cos((45 * Math.PI) / 180);
    const ring = [
      [7, 45],
      [7 + dLng, 45],
      [7 + dLng, 45 + dLat],
      [7, 45 + dLat],
      [7, 45],
    ];
    assert.ok(Math.abs(geodesicAreaM2([ring]) - 10_000) / 10_000 < 0.01);
    assert.ok(Math.abs((plotAreaHa(parsePlotGeometry(poly(ring), F)) ?? 0) - 1) < 0.01);
  });
  it('agrees with GeographicLib on the same sphere, whatever the winding', () => {
    const sphere = new geodesic.Geodesic.Geodesic(SPHERE_RADIUS_M, 0);
    const ring = [
      [-5.1, 6.2],
      [-5.05, 6.21],
      [-5.04, 6.27],
      [-5.09, 6.3],
      [-5.12, 6.25],
      [-5.1, 6.2],
    ];
    const p = sphere.Polygon(false);
    for (const [lng, lat] of ring.slice(0, -1)) p.AddPoint(lat, lng);
    const ref = Math.abs(p.Compute(false, true).area ?? 0);
    assert.ok(Math.abs(geodesicAreaM2([ring]) - ref) / ref < 1e-9);
    assert.ok(Math.abs(geodesicAreaM2([[...ring].reverse()]) - ref) / ref < 1e-9);
  });
  it('subtracts holes and never goes below zero', () => {
    const outer = geodesicAreaM2([square(0, 0, 0.01)]);
    const hole = square(0.004, 0.004, 0.002).reverse();
    const withHole = geodesicAreaM2([square(0, 0, 0.01), hole]);
    assert.ok(Math.abs(withHole - outer * 0.96) / outer < 1e-6);
    assert.equal(geodesicAreaM2([square(0, 0, 0.001), square(0, 0, 0.01)]), 0);
    assert.equal(geodesicAreaM2([]), 0);
  });
});

describe('plotAreaHa and geometryBox', () => {
  it('gives hectares for a polygon and null for a point', () => {
    const g = parsePlotGeometry({ bbox: [0, 0, 0.01, 0.01] }, F);
    assert.ok(Math.abs((plotAreaHa(g) ?? 0) - 123.6) < 0.62);
    assert.equal(plotAreaHa(parsePlotGeometry({ type: 'Point', coordinates: [1, 2] }, F)), null);
  });
  it('boxes a polygon by its outer ring and a point by itself', () => {
    const g = parsePlotGeometry(
      poly([
        [-5, 6],
        [-4.9, 6.05],
        [-4.95, 6.2],
        [-5, 6],
      ]),
      F,
    );
    assert.deepEqual(geometryBox(g), { min_lat: 6, min_lng: -5, max_lat: 6.2, max_lng: -4.9 });
    assert.deepEqual(geometryBox(parsePlotGeometry({ type: 'Point', coordinates: [1, 2] }, F)), { min_lat: 2, min_lng: 1, max_lat: 2, max_lng: 1 });
  });
});
