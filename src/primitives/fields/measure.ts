/**
 * Measures of a field polygon in degrees: its geodesic area on the WGS 84 ellipsoid, a
 * representative point, and the country it lies in.
 *
 * Area: GeographicLib (Karney 2013, "Algorithms for geodesics", J. Geodesy 87, 43–55), the
 * reference implementation of geodesic polygon areas, through the `geographiclib-geodesic`
 * package. Its edges are geodesics; the polygons' edges are straight in Web Mercator, and over
 * the few hundred metres of a field edge the two differ by far less than a square metre.
 */
import geodesic from 'geographiclib-geodesic';
import type { Country } from '../../geo/countries.js';
import { inCountry } from '../../geo/countries.js';
import { gazetteer } from '../../geo/gazetteer.js';

/** [lng, lat] */
export type LngLat = [number, number];
/** GeoJSON polygon rings: exterior first, each closed. */
export type Rings = LngLat[][];

const WGS84 = geodesic.Geodesic.WGS84;

/** Unsigned geodesic area of one closed ring, m². */
export function ringAreaM2(ring: readonly LngLat[]): number {
  const p = WGS84.Polygon(false);
  for (let i = 0; i + 1 < ring.length; i++) p.AddPoint(ring[i][1], ring[i][0]);
  return Math.abs(p.Compute(false, true).area ?? 0);
}

/** Geodesic area of polygons (exterior minus holes), m². */
export function polygonsAreaM2(polys: readonly Rings[]): number {
  let a = 0;
  for (const rings of polys) {
    a += ringAreaM2(rings[0]);
    for (let k = 1; k < rings.length; k++) a -= ringAreaM2(rings[k]);
  }
  return Math.max(0, a);
}

/** Geodesic area of a box in degrees, km². */
export function boxAreaKm2(b: { min_lat: number; min_lng: number; max_lat: number; max_lng: number }): number {
  return (
    ringAreaM2([
      [b.min_lng, b.min_lat],
      [b.max_lng, b.min_lat],
      [b.max_lng, b.max_lat],
      [b.min_lng, b.max_lat],
      [b.min_lng, b.min_lat],
    ]) / 1e6
  );
}

/** The planar centroid of the largest exterior ring (its first vertex when degenerate), [lng, lat]. */
export function labelPoint(polys: readonly Rings[]): LngLat {
  let best: LngLat = polys[0][0][0];
  let bestArea = -1;
  for (const rings of polys) {
    const r = rings[0];
    let a2 = 0;
    let cx = 0;
    let cy = 0;
    for (let i = 0; i + 1 < r.length; i++) {
      const c = r[i][0] * r[i + 1][1] - r[i + 1][0] * r[i][1];
      a2 += c;
      cx += (r[i][0] + r[i + 1][0]) * c;
      cy += (r[i][1] + r[i + 1][1]) * c;
    }
    if (Math.abs(a2) > bestArea) {
      bestArea = Math.abs(a2);
      best = a2 === 0 ? r[0] : [cx / (3 * a2), cy / (3 * a2)];
    }
  }
  return best;
}

const boxes = new WeakMap<Country, { s: number; w: number; n: number; e: number }>();
function fullBox(c: Country) {
  let b = boxes.get(c);
  if (!b) {
    b = { s: 90, w: Infinity, n: -90, e: -Infinity };
    for (const rings of (c.pip as { coordinates: number[][][][] }).coordinates) {
      for (const [x, y] of rings[0]) {
        b.s = Math.min(b.s, y);
        b.n = Math.max(b.n, y);
        b.w = Math.min(b.w, x);
        b.e = Math.max(b.e, x);
      }
    }
    boxes.set(c, b);
  }
  return b;
}

type Span = { min_lat: number; min_lng: number; max_lat: number; max_lng: number };

/** Whether any edge of the country's outline may pass through the box (edge boxes overlapping it). */
function outlineMeets(c: Country, b: Span, shift: number): boolean {
  for (const rings of (c.pip as { coordinates: number[][][][] }).coordinates) {
    for (const ring of rings) {
      for (let i = 0; i + 1 < ring.length; i++) {
        const [x1, y1] = ring[i];
        const [x2, y2] = ring[i + 1];
        if (Math.max(y1, y2) >= b.min_lat && Math.min(y1, y2) <= b.max_lat && Math.max(x1, x2) >= b.min_lng + shift && Math.min(x1, x2) <= b.max_lng + shift) return true;
      }
    }
  }
  return false;
}

/**
 * ISO 3166-1 alpha-2 of the country at a point of the box (Natural Earth 1:50m outlines, as
 * locate uses); null at sea or outside every outline. When no outline passes through the box,
 * the whole box has the country of its centre and each point costs nothing; otherwise each point
 * is tested against the countries whose outlines do.
 */
export function countryLookup(box: Span): (p: LngLat) => string | null {
  const shifts = [0, 360, -360];
  const near = gazetteer().countries.filter((c) => {
    const b = fullBox(c);
    // The outlines are continuous across ±180, so a box is also tried shifted by a turn.
    return shifts.some((d) => b.s <= box.max_lat && box.min_lat <= b.n && b.w <= box.max_lng + d && box.min_lng + d <= b.e);
  });
  const crossing = near.filter((c) => shifts.some((d) => outlineMeets(c, box, d)));
  if (crossing.length === 0) {
    const lat = (box.min_lat + box.max_lat) / 2;
    const lng = (box.min_lng + box.max_lng) / 2;
    const code = near.find((c) => inCountry(c, lat, lng))?.alpha2 ?? null;
    return () => code;
  }
  return ([lng, lat]) => crossing.find((c) => inCountry(c, lat, lng))?.alpha2 ?? null;
}
