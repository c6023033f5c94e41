/**
 * A plot's geolocation as the caller sends it (GeoJSON Polygon or Point, or a bbox), checked
 * strictly: a due-diligence statement must not rest on a boundary that is open, twisted or wound
 * the wrong way, so each fault is refused with its place named rather than repaired silently.
 * Also the plot's geodesic area and its box.
 */
import { invalidArgument } from '../../protocol/errors.js';
import type { PlotGeometry } from './types.js';

/** Positions accepted per ring: the self-intersection check is quadratic in them. */
export const MAX_RING_POSITIONS = 2000;
/** Mean Earth radius (IUGG), the sphere the plot areas are measured on. */
export const SPHERE_RADIUS_M = 6_371_008.8;

const rad = (d: number) => (d * Math.PI) / 180;

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'string' ? `the string ${JSON.stringify(v.slice(0, 40))}` : typeof v;
}

function shownPos(p: number[]): string {
  return `[${p[0]}, ${p[1]}]`;
}

/**
 * A [lng, lat] pair of finite numbers in range; `where` names it in the message (e.g.
 * "coordinates[0][3]"). A third number (an altitude, which GeoJSON allows and GPS exports carry)
 * is accepted and dropped: the plot is its footprint.
 */
function parsePosition(p: unknown, field: string, where: string): number[] {
  const altitudeOk = Array.isArray(p) && (p.length === 2 || (p.length === 3 && typeof p[2] === 'number' && Number.isFinite(p[2])));
  if (!Array.isArray(p) || !altitudeOk || typeof p[0] !== 'number' || typeof p[1] !== 'number' || !Number.isFinite(p[0]) || !Number.isFinite(p[1])) {
    throw invalidArgument(field, `${where} is not a position of two finite numbers [lng, lat] (an altitude may follow)`);
  }
  const [lng, lat] = p as number[];
  if (lng < -180 || lng > 180) throw invalidArgument(field, `${where}: longitude ${lng} is outside [-180, 180]`);
  if (lat < -90 || lat > 90) throw invalidArgument(field, `${where}: latitude ${lat} is outside [-90, 90]`);
  return [lng, lat];
}

/** Twice the signed planar area of a closed ring in degrees²; positive when counter-clockwise. */
function signedArea2(ring: number[][]): number {
  const [x0, y0] = ring[0];
  let s = 0;
  // Relative to the first vertex, so a small plot far from (0, 0) keeps its digits.
  for (let i = 0; i < ring.length - 1; i++) s += (ring[i][0] - x0) * (ring[i + 1][1] - y0) - (ring[i + 1][0] - x0) * (ring[i][1] - y0);
  return s;
}

/** Whether every position lies on the line through the first one and the one farthest from it (to rounding). */
function collinear(v: number[][]): boolean {
  const [x0, y0] = v[0];
  let far = v[0];
  let d2 = 0;
  for (const p of v) {
    const d = (p[0] - x0) ** 2 + (p[1] - y0) ** 2;
    if (d > d2) {
      d2 = d;
      far = p;
    }
  }
  if (d2 === 0) return true;
  const dx = far[0] - x0;
  const dy = far[1] - y0;
  // |cross| / |d| is the distance off the line; a billionth of the ring's extent is rounding, not a corner.
  return v.every((p) => Math.abs(dx * (p[1] - y0) - dy * (p[0] - x0)) <= 1e-9 * d2);
}

function orient(a: number[], b: number[], c: number[]): number {
  const v = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
  return v > 0 ? 1 : v < 0 ? -1 : 0;
}

/** Whether c, known collinear with a–b, lies within the segment's extent. */
function within(a: number[], b: number[], c: number[]): boolean {
  return Math.min(a[0], b[0]) <= c[0] && c[0] <= Math.max(a[0], b[0]) && Math.min(a[1], b[1]) <= c[1] && c[1] <= Math.max(a[1], b[1]);
}

/** 'cross' when the segments cross at an interior point, 'touch' when they meet otherwise, null when apart. */
function segmentsMeet(a: number[], b: number[], c: number[], d: number[]): 'cross' | 'touch' | null {
  if (Math.max(a[0], b[0]) < Math.min(c[0], d[0]) || Math.max(c[0], d[0]) < Math.min(a[0], b[0])) return null;
  if (Math.max(a[1], b[1]) < Math.min(c[1], d[1]) || Math.max(c[1], d[1]) < Math.min(a[1], b[1])) return null;
  const o1 = orient(a, b, c);
  const o2 = orient(a, b, d);
  const o3 = orient(c, d, a);
  const o4 = orient(c, d, b);
  if (o1 * o2 < 0 && o3 * o4 < 0) return 'cross';
  if ((o1 === 0 && within(a, b, c)) || (o2 === 0 && within(a, b, d)) || (o3 === 0 && within(c, d, a)) || (o4 === 0 && within(c, d, b))) return 'touch';
  return null;
}

/**
 * The first pair of edges of a ring that meet where they should not, as original edge indices
 * (edge k runs from position k to position k + 1). `idx[t]` is the original index of cleaned vertex t.
 */
function selfIntersection(v: number[][], idx: number[]): string | null {
  const edges = v.length - 1;
  // Adjacent edges share a vertex; they only go wrong when the second folds back along the first.
  for (let t = 0; t < edges; t++) {
    const u = (t + 1) % edges;
    const a = v[t];
    const b = v[t + 1];
    const c = v[u + 1];
    if (orient(a, b, c) === 0 && (b[0] - a[0]) * (c[0] - b[0]) + (b[1] - a[1]) * (c[1] - b[1]) < 0) {
      return `edges ${Math.min(idx[t], idx[u])} and ${Math.max(idx[t], idx[u])} overlap (the boundary doubles back on itself)`;
    }
  }
  for (let t = 0; t < edges; t++) {
    for (let u = t + 2; u < edges; u++) {
      if (t === 0 && u === edges - 1) continue;
      const how = segmentsMeet(v[t], v[t + 1], v[u], v[u + 1]);
      if (how) return `edges ${idx[t]} and ${idx[u]} ${how} (edge k runs from position k to position k + 1)`;
    }
  }
  return null;
}

function parseRing(r: unknown, i: number, field: string): number[][] {
  const name = i === 0 ? 'ring 0 (the outer ring)' : `ring ${i} (a hole)`;
  if (!Array.isArray(r)) throw invalidArgument(field, `coordinates[${i}] is not an array of positions`);
  if (r.length > MAX_RING_POSITIONS) throw invalidArgument(field, `${name} has ${r.length} positions; at most ${MAX_RING_POSITIONS} are accepted per ring (simplify the boundary)`);
  if (r.length < 4) throw invalidArgument(field, `${name} has ${r.length} positions; a closed ring needs at least 4 (three corners and the first repeated at the end)`);
  const ring = r.map((p, j) => parsePosition(p, field, `coordinates[${i}][${j}]`));
  const first = ring[0];
  const last = ring[ring.length - 1];
  if (first[0] !== last[0] || first[1] !== last[1]) {
    throw invalidArgument(field, `${name} is open: its first position ${shownPos(first)} differs from its last ${shownPos(last)} (repeat the first position at the end)`);
  }
  for (let j = 0; j + 1 < ring.length; j++) {
    if (Math.abs(ring[j + 1][0] - ring[j][0]) > 180) {
      throw invalidArgument(field, `${name} crosses the antimeridian (edge ${j} jumps from longitude ${ring[j][0]} to ${ring[j + 1][0]}); send such a plot as polygons split at ±180`);
    }
  }
  // A position repeated right after itself is a zero-length edge, harmless: drop it, keeping the last
  // index of each run so that edge numbers in messages still point into what the caller sent.
  const v: number[][] = [];
  const idx: number[] = [];
  for (let j = 0; j < ring.length; j++) {
    const prev = v[v.length - 1];
    if (prev && prev[0] === ring[j][0] && prev[1] === ring[j][1]) idx[idx.length - 1] = j;
    else {
      v.push(ring[j]);
      idx.push(j);
    }
  }
  if (v.length < 4 || collinear(v)) throw invalidArgument(field, `${name} has zero area (its positions are repeated or on one line)`);
  const meet = selfIntersection(v, idx);
  if (meet) throw invalidArgument(field, `${name} intersects itself: ${meet}`);
  // A simple ring that is not all on one line has a non-zero signed area, so its sign is the winding.
  const a2 = signedArea2(v);
  if (a2 === 0) throw invalidArgument(field, `${name} has zero area (its positions are repeated or on one line)`);
  if (i === 0 && a2 < 0) throw invalidArgument(field, `${name} is clockwise; RFC 7946 expects the outer ring counter-clockwise (reverse the order of its positions)`);
  if (i > 0 && a2 > 0) throw invalidArgument(field, `${name} is counter-clockwise; RFC 7946 expects holes clockwise (reverse the order of its positions)`);
  return v;
}

function parseBbox(b: unknown, field: string): PlotGeometry {
  if (!Array.isArray(b) || b.length !== 4 || !b.every((x) => typeof x === 'number' && Number.isFinite(x))) {
    throw invalidArgument(field, 'bbox must be four finite numbers [min_lng, min_lat, max_lng, max_lat]');
  }
  const [w, s, e, n] = b as number[];
  for (const x of [w, e]) if (x < -180 || x > 180) throw invalidArgument(field, `bbox longitude ${x} is outside [-180, 180]`);
  for (const y of [s, n]) if (y < -90 || y > 90) throw invalidArgument(field, `bbox latitude ${y} is outside [-90, 90]`);
  if (!(w < e)) throw invalidArgument(field, `bbox min_lng ${w} is not less than max_lng ${e} (a box crossing the antimeridian is not accepted)`);
  if (!(s < n)) throw invalidArgument(field, `bbox min_lat ${s} is not less than max_lat ${n}`);
  const ring = [
    [w, s],
    [e, s],
    [e, n],
    [w, n],
    [w, s],
  ];
  return { type: 'Polygon', coordinates: [ring], source: 'bbox' };
}

/** Validates a plot's geometry (GeoJSON Polygon or Point, or {bbox}); every fault is an invalid_argument on `field`. */
export function parsePlotGeometry(g: unknown, field: string): PlotGeometry {
  if (g === null || typeof g !== 'object' || Array.isArray(g)) {
    throw invalidArgument(field, `is not an object (got ${describe(g)}): expected a GeoJSON Polygon or Point, or {bbox: [min_lng, min_lat, max_lng, max_lat]}`);
  }
  const o = g as Record<string, unknown>;
  if (o.type === undefined && o.bbox !== undefined) return parseBbox(o.bbox, field);
  if (o.type === 'Point') return { type: 'Point', coordinates: parsePosition(o.coordinates, field, 'coordinates'), source: 'point' };
  if (o.type === 'Polygon') {
    const c = o.coordinates;
    if (!Array.isArray(c) || c.length === 0) throw invalidArgument(field, 'coordinates must be a non-empty array of rings (the outer ring first, then any holes)');
    return { type: 'Polygon', coordinates: c.map((r, i) => parseRing(r, i, field)), source: 'polygon' };
  }
  if (o.type === undefined) throw invalidArgument(field, 'has no type: expected a GeoJSON Polygon or Point, or {bbox: [min_lng, min_lat, max_lng, max_lat]}');
  const hint = o.type === 'MultiPolygon' ? ' (send each polygon as its own plot)' : o.type === 'Feature' ? ' (send the feature’s geometry)' : '';
  throw invalidArgument(field, `unknown geometry type ${JSON.stringify(String(o.type).slice(0, 40))}: expected "Polygon" or "Point", or {bbox: [...]}${hint}`);
}

/**
 * Signed spherical excess of a closed ring: per edge, the excess of the quadrilateral between the
 * edge and the equator, tan(E/2) = tan(Δλ/2)·(tan(φ1/2) + tan(φ2/2)) / (1 + tan(φ1/2)·tan(φ2/2)).
 * Exact for great-circle edges.
 */
function ringExcess(ring: number[][]): number {
  let s = 0;
  for (let i = 0; i + 1 < ring.length; i++) {
    const t1 = Math.tan(rad(ring[i][1]) / 2);
    const t2 = Math.tan(rad(ring[i + 1][1]) / 2);
    s += 2 * Math.atan2(Math.tan(rad(ring[i + 1][0] - ring[i][0]) / 2) * (t1 + t2), 1 + t1 * t2);
  }
  return s;
}

/** Area in m² on the sphere of radius 6 371 008.8 m: the outer ring minus its holes, never negative. */
export function geodesicAreaM2(rings: number[][][]): number {
  if (rings.length === 0) return 0;
  const r2 = SPHERE_RADIUS_M * SPHERE_RADIUS_M;
  let a = Math.abs(ringExcess(rings[0])) * r2;
  for (let k = 1; k < rings.length; k++) a -= Math.abs(ringExcess(rings[k])) * r2;
  return Math.max(0, a);
}

/** A plot's area in hectares; a point plot has none. */
export function plotAreaHa(geom: PlotGeometry): number | null {
  return geom.type === 'Point' ? null : geodesicAreaM2(geom.coordinates as number[][][]) / 10_000;
}

/** The latitude/longitude box of a plot (its outer ring, or the point itself). */
export function geometryBox(geom: PlotGeometry): { min_lat: number; min_lng: number; max_lat: number; max_lng: number } {
  const pts = geom.type === 'Point' ? [geom.coordinates as number[]] : (geom.coordinates as number[][][])[0];
  const box = { min_lat: Infinity, min_lng: Infinity, max_lat: -Infinity, max_lng: -Infinity };
  for (const [lng, lat] of pts) {
    box.min_lat = Math.min(box.min_lat, lat);
    box.min_lng = Math.min(box.min_lng, lng);
    box.max_lat = Math.max(box.max_lat, lat);
    box.max_lng = Math.max(box.max_lng, lng);
  }
  return box;
}
