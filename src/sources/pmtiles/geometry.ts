/**
 * Planar pieces of vector-tile geometry and their measures on the ground, for values computed over
 * a window (a square of a stated side around a cell centre):
 *
 * - clipping in global tile units (Web Mercator), where a box of latitudes and longitudes is an
 *   axis-aligned rectangle: rings by Sutherland-Hodgman against the rectangle (a ring of any shape
 *   clipped by a convex window keeps its signed area inside the window, so the rings of a polygon,
 *   holes negative, add up to the polygon's area inside it), lines by Liang-Barsky per segment;
 * - planar area and centroid of rings, taken about a local origin (global units reach 2^26 at
 *   z14, and cross products of such numbers would lose the low digits);
 * - geodesic measures on the WGS 84 ellipsoid with GeographicLib (Karney 2013, "Algorithms for
 *   geodesics"): ring areas and line lengths between the vertices converted to degrees. Edges are
 *   straight in Web Mercator and geodesics here; over the tens of metres of a building or road
 *   edge the two differ by far less than the tiles' own precision (a z14 tile unit is about 0.6 m
 *   at the equator).
 */
import geodesic from 'geographiclib-geodesic';
import { metresPerDegree } from '../footprint.js';
import { toLngLat, toUnits, type Pt } from './mvt.js';
import type { UnitRect } from './tiles.js';

const WGS84 = geodesic.Geodesic.WGS84;
/** Web Mercator's latitude limit: the tiles reach no further north or south. */
export const MERCATOR_MAX_LAT = 85.0511287798;

/** A box in degrees. */
export interface DegreeBox {
  min_lat: number;
  min_lng: number;
  max_lat: number;
  max_lng: number;
}

/** The square of side `sideM` metres centred on (lat, lng), in degrees and in global units at z. */
export function windowAround(lat: number, lng: number, sideM: number, z: number): { box: DegreeBox; rect: UnitRect } {
  const m = metresPerDegree(lat);
  const dLat = sideM / 2 / m.lat;
  const dLng = sideM / 2 / m.lng;
  const box = { min_lat: lat - dLat, min_lng: lng - dLng, max_lat: lat + dLat, max_lng: lng + dLng };
  const [x0, y0] = toUnits(box.min_lng, box.max_lat, z);
  const [x1, y1] = toUnits(box.max_lng, box.min_lat, z);
  return { box, rect: { x0, y0, x1, y1 } };
}

/** The bounding rectangle of some parts (rings or lines). */
export function boundsOf(parts: readonly (readonly Pt[])[]): UnitRect {
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  for (const part of parts)
    for (const [x, y] of part) {
      if (x < x0) x0 = x;
      if (x > x1) x1 = x;
      if (y < y0) y0 = y;
      if (y > y1) y1 = y;
    }
  return { x0, y0, x1, y1 };
}

export const inside = (a: UnitRect, r: UnitRect): boolean => a.x0 >= r.x0 && a.x1 <= r.x1 && a.y0 >= r.y0 && a.y1 <= r.y1;
export const disjoint = (a: UnitRect, r: UnitRect): boolean => a.x1 <= r.x0 || a.x0 >= r.x1 || a.y1 <= r.y0 || a.y0 >= r.y1;

/** A closed ring clipped to a rectangle (Sutherland-Hodgman), closed again; [] when nothing is left. */
export function clipRing(ring: readonly Pt[], r: UnitRect): Pt[] {
  // The ring without its closing vertex, clipped by each edge in turn: x >= x0, x <= x1, y >= y0, y <= y1.
  let poly: Pt[] = ring.slice(0, ring.length - 1) as Pt[];
  for (let edge = 0; edge < 4 && poly.length > 0; edge++) {
    const axis = edge < 2 ? 0 : 1;
    const bound = edge === 0 ? r.x0 : edge === 1 ? r.x1 : edge === 2 ? r.y0 : r.y1;
    const low = edge === 0 || edge === 2;
    const isIn = (p: Pt) => (low ? p[axis] >= bound : p[axis] <= bound);
    const out: Pt[] = [];
    let prev = poly[poly.length - 1];
    let prevIn = isIn(prev);
    for (const cur of poly) {
      const curIn = isIn(cur);
      if (curIn !== prevIn) {
        const t = (bound - prev[axis]) / (cur[axis] - prev[axis]);
        out.push(axis === 0 ? [bound, prev[1] + t * (cur[1] - prev[1])] : [prev[0] + t * (cur[0] - prev[0]), bound]);
      }
      if (curIn) out.push(cur);
      prev = cur;
      prevIn = curIn;
    }
    poly = out;
  }
  if (poly.length < 3) return [];
  return [...poly, [poly[0][0], poly[0][1]]];
}

/** A line clipped to a rectangle (Liang-Barsky per segment): the runs inside it. */
export function clipLine(line: readonly Pt[], r: UnitRect): Pt[][] {
  const runs: Pt[][] = [];
  let run: Pt[] | null = null;
  for (let i = 0; i + 1 < line.length; i++) {
    const [ax, ay] = line[i];
    const [bx, by] = line[i + 1];
    const dx = bx - ax;
    const dy = by - ay;
    let t0 = 0;
    let t1 = 1;
    let keep = true;
    for (const [p, q] of [
      [-dx, ax - r.x0],
      [dx, r.x1 - ax],
      [-dy, ay - r.y0],
      [dy, r.y1 - ay],
    ] as const) {
      if (p === 0) {
        if (q < 0) keep = false;
      } else {
        const t = q / p;
        if (p < 0) t0 = Math.max(t0, t);
        else t1 = Math.min(t1, t);
      }
    }
    if (!keep || t0 > t1 || (t0 === t1 && (dx !== 0 || dy !== 0))) {
      run = null;
      continue;
    }
    const a: Pt = t0 === 0 ? [ax, ay] : [ax + t0 * dx, ay + t0 * dy];
    const b: Pt = t1 === 1 ? [bx, by] : [ax + t1 * dx, ay + t1 * dy];
    if (run && t0 === 0) run.push(b);
    else {
      run = [a, b];
      runs.push(run);
    }
    if (t1 !== 1) run = null;
  }
  return runs;
}

/** Twice the signed planar area of a closed ring and its centroid (global units), computed about `origin`. */
export function ringMoments(ring: readonly Pt[], origin: Pt): { a2: number; cx: number; cy: number } {
  let a2 = 0;
  let mx = 0;
  let my = 0;
  for (let i = 0; i + 1 < ring.length; i++) {
    const x0 = ring[i][0] - origin[0];
    const y0 = ring[i][1] - origin[1];
    const x1 = ring[i + 1][0] - origin[0];
    const y1 = ring[i + 1][1] - origin[1];
    const c = x0 * y1 - x1 * y0;
    a2 += c;
    mx += (x0 + x1) * c;
    my += (y0 + y1) * c;
  }
  if (a2 === 0) return { a2: 0, cx: origin[0], cy: origin[1] };
  return { a2, cx: origin[0] + mx / (3 * a2), cy: origin[1] + my / (3 * a2) };
}

/**
 * Geodesic area (m²) of a closed ring in global units at zoom z, signed like its planar area in
 * those units (exterior rings of vector tiles positive, holes negative).
 */
export function ringAreaM2(ring: readonly Pt[], z: number): number {
  if (ring.length < 4) return 0;
  const planar = ringMoments(ring, ring[0]).a2;
  if (planar === 0) return 0;
  const p = WGS84.Polygon(false);
  for (let i = 0; i + 1 < ring.length; i++) {
    const { lng, lat } = toLngLat(ring[i] as Pt, z);
    p.AddPoint(lat, lng);
  }
  return Math.sign(planar) * Math.abs(p.Compute(false, true).area ?? 0);
}

/** Geodesic area (m²) of a box in degrees (corners joined by geodesics, as the rings are). */
export function boxAreaM2(b: DegreeBox): number {
  const p = WGS84.Polygon(false);
  for (const [lat, lng] of [
    [b.min_lat, b.min_lng],
    [b.min_lat, b.max_lng],
    [b.max_lat, b.max_lng],
    [b.max_lat, b.min_lng],
  ])
    p.AddPoint(lat, lng);
  return Math.abs(p.Compute(false, true).area ?? 0);
}

/** Geodesic length (m) of a line in global units at zoom z. */
export function lineLengthM(line: readonly Pt[], z: number): number {
  let s = 0;
  let prev = toLngLat(line[0] as Pt, z);
  for (let i = 1; i < line.length; i++) {
    const cur = toLngLat(line[i] as Pt, z);
    if (cur.lng !== prev.lng || cur.lat !== prev.lat) s += WGS84.Inverse(prev.lat, prev.lng, cur.lat, cur.lng, geodesic.Geodesic.DISTANCE).s12 ?? 0;
    prev = cur;
  }
  return s;
}
