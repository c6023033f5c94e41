import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { boxAreaKm2, countryLookup, labelPoint, polygonsAreaM2, type LngLat } from '../../../src/primitives/fields/measure.js';

/** Exact area of a latitude–longitude rectangle on the WGS 84 ellipsoid (authalic formula), m². */
function rectAreaM2(w: number, s: number, e: number, n: number): number {
  const a = 6378137;
  const f = 1 / 298.257223563;
  const e2 = f * (2 - f);
  const ec = Math.sqrt(e2);
  const q = (phi: number) => {
    const sp = Math.sin(phi);
    return sp / (1 - e2 * sp * sp) + Math.log((1 + ec * sp) / (1 - ec * sp)) / (2 * ec);
  };
  const rad = Math.PI / 180;
  return ((a * a * (1 - e2)) / 2) * (e - w) * rad * (q(n * rad) - q(s * rad));
}
const rect = (w: number, s: number, e: number, n: number): LngLat[] => [
  [w, s],
  [e, s],
  [e, n],
  [w, n],
  [w, s],
];

describe('field measures', () => {
  it('geodesic areas agree with the ellipsoidal rectangle formula at every latitude (1e-5)', () => {
    for (const lat of [-60, -33.9, 0, 12.5, 48.4, 71]) {
      const [w, s, e, n] = [10, lat, 10.004, lat + 0.003];
      const want = rectAreaM2(w, s, e, n);
      const got = polygonsAreaM2([[rect(w, s, e, n)]]);
      assert.ok(Math.abs(got - want) / want < 1e-5, `${lat}: ${got} vs ${want}`);
    }
    // A hole is subtracted; orientation does not matter.
    const outer = rect(0, 0, 0.01, 0.01);
    const hole = rect(0.004, 0.004, 0.006, 0.006).reverse();
    assert.ok(Math.abs(polygonsAreaM2([[outer, hole]]) - (rectAreaM2(0, 0, 0.01, 0.01) - rectAreaM2(0.004, 0.004, 0.006, 0.006))) < 1);
    assert.ok(Math.abs(boxAreaKm2({ min_lat: 0, min_lng: 0, max_lat: 0.01, max_lng: 0.01 }) * 1e6 - rectAreaM2(0, 0, 0.01, 0.01)) < 1);
  });

  it('names the country of a point, inside one country and across a border', () => {
    const inside = countryLookup({ min_lat: 48.4, min_lng: 1.4, max_lat: 48.45, max_lng: 1.45 });
    assert.equal(inside([1.42, 48.42]), 'FR');
    // The box around Basel holds France, Germany and Switzerland.
    const basel = countryLookup({ min_lat: 47.5, min_lng: 7.45, max_lat: 47.65, max_lng: 7.7 });
    assert.equal(basel([7.52, 47.6]), 'FR');
    assert.equal(basel([7.65, 47.62]), 'DE');
    assert.equal(basel([7.6, 47.52]), 'CH');
    const sea = countryLookup({ min_lat: 45, min_lng: -30, max_lat: 45.01, max_lng: -29.99 });
    assert.equal(sea([-30, 45]), null);
  });

  it('puts the label point inside a convex field', () => {
    const [x, y] = labelPoint([[rect(1, 2, 3, 4)]]);
    assert.ok(Math.abs(x - 2) < 1e-12 && Math.abs(y - 3) < 1e-12);
  });
});
