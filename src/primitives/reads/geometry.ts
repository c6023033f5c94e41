/**
 * Area selection for the multi-cell reads: GeoJSON polygons and boxes validated field by field,
 * and a deterministic sampler that turns an area into at most N cells. Small areas are
 * enumerated exactly (so `is_exhaustive` can be true); large ones are sampled on a regular grid
 * of cell centres, because the same request must always read the same cells.
 */
import { CELL_PREFIX, LAT_MAX, LNG_MAX, cellText, parseCell, quantise } from '../../protocol/cell64.js';
import { invalidArgument } from '../../protocol/errors.js';
import { evenPick, isNum, isObject } from './common.js';

/** [lng, lat] positions; the first ring is the outer boundary, the rest are holes. */
export type Ring = Array<[number, number]>;
export type PolygonRings = Ring[];

/** A validated area: one or more polygons plus its bounding box. */
export interface Area {
  polygons: PolygonRings[];
  bbox: { min_lat: number; min_lng: number; max_lat: number; max_lng: number };
  source: 'polygon' | 'multipolygon' | 'bbox';
}

export interface Sample {
  cells: string[];
  /** True when `cells` is every cell whose centre lies inside the area. */
  exhaustive: boolean;
  method: 'enumerated' | 'enumerated_then_spread' | 'grid';
  /** Lattice cells in the bounding box (an upper bound on cells inside). */
  bbox_cells: number;
}

/** Above this many lattice cells in the bbox, sample on a grid instead of enumerating. */
const ENUMERATE_LIMIT = 65_536;

function ring(v: unknown, field: string): Ring {
  if (!Array.isArray(v) || v.length < 4) throw invalidArgument(field, 'expected a linear ring of at least 4 [lng, lat] positions');
  const out: Ring = v.map((p, i) => {
    if (!Array.isArray(p) || p.length < 2 || !isNum(p[0]) || !isNum(p[1])) throw invalidArgument(`${field}[${i}]`, 'expected [lng, lat] numbers');
    if (Math.abs(p[0]) > 180) throw invalidArgument(`${field}[${i}][0]`, `longitude ${p[0]} is outside [-180, 180]`);
    if (Math.abs(p[1]) > 90) throw invalidArgument(`${field}[${i}][1]`, `latitude ${p[1]} is outside [-90, 90]`);
    return [p[0], p[1]] as [number, number];
  });
  const [f, l] = [out[0], out[out.length - 1]];
  if (f[0] !== l[0] || f[1] !== l[1]) throw invalidArgument(field, 'ring is not closed (first and last positions differ)');
  return out;
}

function polygonRings(v: unknown, field: string): PolygonRings {
  if (!Array.isArray(v) || v.length === 0) throw invalidArgument(field, 'expected an array of linear rings');
  return v.map((r, i) => ring(r, `${field}[${i}]`));
}

function bboxOf(polys: PolygonRings[]): Area['bbox'] {
  const b = { min_lat: Infinity, min_lng: Infinity, max_lat: -Infinity, max_lng: -Infinity };
  for (const p of polys)
    for (const [lng, lat] of p[0]) {
      b.min_lat = Math.min(b.min_lat, lat);
      b.max_lat = Math.max(b.max_lat, lat);
      b.min_lng = Math.min(b.min_lng, lng);
      b.max_lng = Math.max(b.max_lng, lng);
    }
  return b;
}

/** A GeoJSON Polygon or MultiPolygon (as locate returns it), validated. */
export function parsePolygon(v: unknown, field = 'polygon'): Area {
  if (!isObject(v)) throw invalidArgument(field, 'expected a GeoJSON Polygon or MultiPolygon object');
  if (v.type === 'Polygon') {
    const p = polygonRings(v.coordinates, `${field}.coordinates`);
    return { polygons: [p], bbox: bboxOf([p]), source: 'polygon' };
  }
  if (v.type === 'MultiPolygon') {
    if (!Array.isArray(v.coordinates) || v.coordinates.length === 0) throw invalidArgument(`${field}.coordinates`, 'expected an array of polygons');
    const ps = v.coordinates.map((c, i) => polygonRings(c, `${field}.coordinates[${i}]`));
    return { polygons: ps, bbox: bboxOf(ps), source: 'multipolygon' };
  }
  throw invalidArgument(`${field}.type`, 'expected "Polygon" or "MultiPolygon"');
}

/** A box from explicit bounds (validated); the polygon is its rectangle. */
export function boxArea(min_lat: unknown, min_lng: unknown, max_lat: unknown, max_lng: unknown, field: string, names: [string, string, string, string]): Area {
  const vals = [min_lat, min_lng, max_lat, max_lng];
  vals.forEach((x, i) => {
    if (!isNum(x)) throw invalidArgument(`${field}${names[i]}`, 'expected a finite number');
  });
  const [s, w, n, e] = vals as number[];
  if (Math.abs(s) > 90) throw invalidArgument(`${field}${names[0]}`, `latitude ${s} is outside [-90, 90]`);
  if (Math.abs(n) > 90) throw invalidArgument(`${field}${names[2]}`, `latitude ${n} is outside [-90, 90]`);
  if (Math.abs(w) > 180) throw invalidArgument(`${field}${names[1]}`, `longitude ${w} is outside [-180, 180]`);
  if (Math.abs(e) > 180) throw invalidArgument(`${field}${names[3]}`, `longitude ${e} is outside [-180, 180]`);
  const base = field.replace(/\.$/, '');
  if (s > n) throw invalidArgument(base, `south ${s} is north of north ${n}`);
  // Boxes across the antimeridian would need two rectangles; callers split them instead.
  if (w > e) throw invalidArgument(base, `west ${w} is east of east ${e} (split boxes that cross the antimeridian)`);
  const r: Ring = [
    [w, s],
    [e, s],
    [e, n],
    [w, n],
    [w, s],
  ];
  return { polygons: [[r]], bbox: { min_lat: s, min_lng: w, max_lat: n, max_lng: e }, source: 'bbox' };
}

/** `polygon_bbox` {min_lat, min_lng, max_lat, max_lng} as locate returns it (extra keys like `source` ignored). */
export function parsePolygonBbox(v: unknown, field = 'polygon_bbox'): Area {
  if (!isObject(v)) throw invalidArgument(field, 'expected {min_lat, min_lng, max_lat, max_lng}');
  return boxArea(v.min_lat, v.min_lng, v.max_lat, v.max_lng, `${field}.`, ['min_lat', 'min_lng', 'max_lat', 'max_lng']);
}

/** `bbox` [west, south, east, north] degrees. */
export function parseBboxArray(v: unknown, field = 'bbox'): Area {
  if (!Array.isArray(v) || v.length !== 4) throw invalidArgument(field, 'expected [west, south, east, north] in degrees');
  return boxArea(v[1], v[0], v[3], v[2], field, ['[1]', '[0]', '[3]', '[2]']);
}

function inRing(lng: number, lat: number, r: Ring): boolean {
  let inside = false;
  for (let i = 0, j = r.length - 1; i < r.length; j = i++) {
    const [xi, yi] = r[i];
    const [xj, yj] = r[j];
    if (yi > lat !== yj > lat && lng < ((xj - xi) * (lat - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

function onBoxEdgeInclusive(lng: number, lat: number, a: Area): boolean {
  // Rectangles are closed sets: a centre exactly on the edge counts (ray casting is half-open).
  const b = a.bbox;
  return a.source === 'bbox' && lat >= b.min_lat && lat <= b.max_lat && lng >= b.min_lng && lng <= b.max_lng;
}

/** Point-in-area (even-odd per polygon, holes excluded). */
export function contains(a: Area, lat: number, lng: number): boolean {
  if (a.source === 'bbox') return onBoxEdgeInclusive(lng, lat, a);
  return a.polygons.some((p) => inRing(lng, lat, p[0]) && !p.slice(1).some((h) => inRing(lng, lat, h)));
}

/** Lattice indices of a cell. */
export function latLngIndex(cell: string): { latq: number; lngq: number } {
  const id = parseCell(cell);
  return { latq: Number((id >> 22n) & BigInt(LAT_MAX)), lngq: Number(id & BigInt(LNG_MAX)) };
}

/** cell64 text from lattice indices. */
export function cellAt(latq: number, lngq: number): string {
  return cellText(CELL_PREFIX | (BigInt(latq) << 22n) | BigInt(lngq));
}

const centreLat = (latq: number) => (latq / LAT_MAX) * 180 - 90;
const centreLng = (lngq: number) => (lngq / LNG_MAX) * 360 - 180;

/** Index ranges of the lattice cells covering the area's bbox. */
export function indexRange(a: Area): { lat0: number; lat1: number; lng0: number; lng1: number; count: number } {
  const lo = quantise(a.bbox.min_lat, a.bbox.min_lng);
  const hi = quantise(a.bbox.max_lat, a.bbox.max_lng);
  // quantise wraps +180 to index 0; a box ending at +180 still ends at the last column.
  const lng1 = a.bbox.max_lng >= 180 ? LNG_MAX - 1 : hi.lngq;
  const lng0 = Math.min(lo.lngq, lng1);
  return { lat0: lo.latq, lat1: hi.latq, lng0, lng1, count: (hi.latq - lo.latq + 1) * (lng1 - lng0 + 1) };
}

/**
 * At most `max` cells inside `a`, deterministic. Areas of ≤ 65 536 lattice cells are enumerated
 * (exhaustive when everything fits); larger ones get a grid of centres, refined until it has
 * enough inside points, then spread-picked down to `max`. An area smaller than one cell yields
 * the cell under its first vertex, so a tiny polygon is never empty.
 */
export function sampleArea(a: Area, max: number): Sample {
  const r = indexRange(a);
  if (r.count <= ENUMERATE_LIMIT) {
    const inside: string[] = [];
    for (let la = r.lat1; la >= r.lat0; la--) {
      for (let ln = r.lng0; ln <= r.lng1; ln++) if (contains(a, centreLat(la), centreLng(ln))) inside.push(cellAt(la, ln));
    }
    if (inside.length === 0) return { cells: [firstVertexCell(a)], exhaustive: false, method: 'enumerated', bbox_cells: r.count };
    if (inside.length <= max) return { cells: inside, exhaustive: true, method: 'enumerated', bbox_cells: r.count };
    return { cells: evenPick(inside, max), exhaustive: false, method: 'enumerated_then_spread', bbox_cells: r.count };
  }
  const latSpan = Math.max(a.bbox.max_lat - a.bbox.min_lat, 1e-9);
  const midLat = (a.bbox.max_lat + a.bbox.min_lat) / 2;
  const lngSpan = Math.max((a.bbox.max_lng - a.bbox.min_lng) * Math.cos((midLat * Math.PI) / 180), 1e-9);
  let target = max;
  let inside: string[] = [];
  for (let round = 0; round < 8; round++) {
    const rows = Math.max(1, Math.round(Math.sqrt((target * latSpan) / lngSpan)));
    const cols = Math.max(1, Math.round(target / rows));
    const seen = new Set<string>();
    inside = [];
    for (let i = rows - 1; i >= 0; i--) {
      const lat = a.bbox.min_lat + ((i + 0.5) / rows) * (a.bbox.max_lat - a.bbox.min_lat);
      for (let j = 0; j < cols; j++) {
        const lng = a.bbox.min_lng + ((j + 0.5) / cols) * (a.bbox.max_lng - a.bbox.min_lng);
        if (!contains(a, lat, lng)) continue;
        const q = quantise(lat, lng);
        const c = cellAt(q.latq, q.lngq);
        if (!seen.has(c)) {
          seen.add(c);
          inside.push(c);
        }
      }
    }
    if (inside.length >= max) break;
    target *= 2; // a thin or holed polygon fills little of its bbox: refine the grid
  }
  if (inside.length === 0) inside = [firstVertexCell(a)];
  return { cells: evenPick(inside, max), exhaustive: false, method: 'grid', bbox_cells: r.count };
}

function firstVertexCell(a: Area): string {
  const [lng, lat] = a.polygons[0][0][0];
  const q = quantise(lat, lng);
  return cellAt(q.latq, q.lngq);
}
