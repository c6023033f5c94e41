/**
 * Planar-on-the-sphere helpers for place extents: haversine distance, antimeridian-aware boxes,
 * point-in-polygon and the deterministic jittered sampling behind polygon_sample_cells.
 */
import type { GeoJsonPolygon } from './types.js';

/** A latitude/longitude box; min_lng > max_lng means it crosses the antimeridian. */
export interface Box {
  min_lat: number;
  min_lng: number;
  max_lat: number;
  max_lng: number;
}

const R_KM = 6371.0088;
const rad = (d: number) => (d * Math.PI) / 180;

/** Great-circle distance in kilometres. */
export function haversineKm(lat1: number, lng1: number, lat2: number, lng2: number): number {
  const dLat = rad(lat2 - lat1);
  const dLng = rad(lng2 - lng1);
  const a = Math.sin(dLat / 2) ** 2 + Math.cos(rad(lat1)) * Math.cos(rad(lat2)) * Math.sin(dLng / 2) ** 2;
  return 2 * R_KM * Math.asin(Math.min(1, Math.sqrt(a)));
}

/** Longitude wrapped into [-180, 180). */
export function wrapLng(lng: number): number {
  const w = ((((lng + 180) % 360) + 360) % 360) - 180;
  return w === -180 && lng > 0 ? 180 : w;
}

/** The square box of half-side `halfKm` around a point (longitude wrap-aware; latitude clamped to ±90). */
export function boxAround(lat: number, lng: number, halfKm: number): Box {
  const dLat = halfKm / 111.195;
  const dLng = Math.min(179.9, halfKm / (111.195 * Math.max(0.01, Math.cos(rad(lat)))));
  const round = (x: number) => Math.round(x * 1e5) / 1e5;
  return { min_lat: round(Math.max(-90, lat - dLat)), min_lng: round(wrapLng(lng - dLng)), max_lat: round(Math.min(90, lat + dLat)), max_lng: round(wrapLng(lng + dLng)) };
}

/** Longitudinal width of a box in degrees (wrap-aware). */
export function boxWidth(b: Box): number {
  return b.min_lng <= b.max_lng ? b.max_lng - b.min_lng : b.max_lng + 360 - b.min_lng;
}

/** Whether a box contains a point (inclusive, wrap-aware). */
export function boxContains(b: Box, lat: number, lng: number, marginDeg = 0): boolean {
  if (lat < b.min_lat - marginDeg || lat > b.max_lat + marginDeg) return false;
  const w = boxWidth(b);
  if (w + 2 * marginDeg >= 360) return true;
  const off = (((lng - (b.min_lng - marginDeg)) % 360) + 360) % 360;
  return off <= w + 2 * marginDeg;
}

/** Centre of a box (wrap-aware). */
export function boxCentre(b: Box): { lat: number; lng: number } {
  return { lat: (b.min_lat + b.max_lat) / 2, lng: wrapLng(b.min_lng + boxWidth(b) / 2) };
}

/** Approximate area of a box in km². */
export function boxAreaKm2(b: Box): number {
  const h = rad(b.max_lat - b.min_lat) * R_KM;
  const w = rad(boxWidth(b)) * R_KM * Math.cos(rad((b.min_lat + b.max_lat) / 2));
  return Math.abs(h * w);
}

/**
 * The smallest box (wrap-aware) covering longitude intervals: the complement of the widest
 * gap between them, so a set straddling ±180 (Fiji, Chukotka) yields a crossing box.
 */
export function coverIntervals(intervals: ReadonlyArray<readonly [number, number]>, minLat: number, maxLat: number): Box {
  const iv = intervals.map(([a, b]) => [a, b] as [number, number]).sort((p, q) => p[0] - q[0]);
  const merged: [number, number][] = [];
  for (const [a, b] of iv) {
    const last = merged[merged.length - 1];
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else merged.push([a, b]);
  }
  let bestGap = -1;
  let gapAt = 0;
  for (let i = 0; i < merged.length; i++) {
    const end = merged[i][1];
    const nextStart = i + 1 < merged.length ? merged[i + 1][0] : merged[0][0] + 360;
    const gap = nextStart - end;
    if (gap > bestGap) {
      bestGap = gap;
      gapAt = i;
    }
  }
  if (merged.length === 0) return { min_lat: minLat, min_lng: -180, max_lat: maxLat, max_lng: 180 };
  const min_lng = gapAt + 1 < merged.length ? merged[gapAt + 1][0] : merged[0][0];
  const max_lng = merged[gapAt][1];
  if (bestGap <= 0) return { min_lat: minLat, min_lng: -180, max_lat: maxLat, max_lng: 180 };
  return { min_lat: minLat, min_lng: wrapLng(min_lng), max_lat: maxLat, max_lng: max_lng === 180 ? 180 : wrapLng(max_lng) };
}

function ringContains(ring: number[][], x: number, y: number): boolean {
  let inside = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const xi = ring[i][0],
      yi = ring[i][1],
      xj = ring[j][0],
      yj = ring[j][1];
    if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

/** Even-odd point-in-polygon over GeoJSON rings (holes excluded). Coordinates are [lng, lat]. */
export function pointInPolygon(geom: GeoJsonPolygon, lat: number, lng: number): boolean {
  const polys = geom.type === 'Polygon' ? [geom.coordinates] : geom.coordinates;
  for (const rings of polys) {
    if (rings.length === 0 || !ringContains(rings[0], lng, lat)) continue;
    let inHole = false;
    for (let k = 1; k < rings.length; k++)
      if (ringContains(rings[k], lng, lat)) {
        inHole = true;
        break;
      }
    if (!inHole) return true;
  }
  return false;
}

/** GeoJSON of a box: a Polygon, or a MultiPolygon split at ±180 when it crosses the antimeridian. */
export function boxPolygon(b: Box): GeoJsonPolygon {
  const ring = (w: number, e: number) => [
    [w, b.min_lat],
    [e, b.min_lat],
    [e, b.max_lat],
    [w, b.max_lat],
    [w, b.min_lat],
  ];
  if (b.min_lng <= b.max_lng) return { type: 'Polygon', coordinates: [ring(b.min_lng, b.max_lng)] };
  return { type: 'MultiPolygon', coordinates: [[ring(b.min_lng, 180)], [ring(-180, b.max_lng)]] };
}

/** FNV-1a 32-bit hash of a string (seeds the deterministic jitter). */
export function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** mulberry32: a tiny seeded PRNG in [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Up to `max` points inside a box (and inside `accept`, e.g. a polygon test), spread evenly: a
 * k×k grid whose points are jittered within their own grid cell by a PRNG seeded from `seed`,
 * refined until enough points land inside, then thinned evenly. Same seed, same points.
 */
export function samplePoints(b: Box, seed: string, max = 64, accept?: (lat: number, lng: number) => boolean): Array<{ lat: number; lng: number }> {
  const width = boxWidth(b);
  const height = b.max_lat - b.min_lat;
  let best: Array<{ lat: number; lng: number }> = [];
  for (const k of [8, 12, 16, 24, 32, 48]) {
    const rnd = seededRandom(fnv1a(`${seed}:${k}`));
    const pts: Array<{ lat: number; lng: number }> = [];
    for (let i = 0; i < k; i++) {
      for (let j = 0; j < k; j++) {
        const lat = b.min_lat + ((i + 0.2 + 0.6 * rnd()) / k) * height;
        const lng = wrapLng(b.min_lng + ((j + 0.2 + 0.6 * rnd()) / k) * width);
        if (!accept || accept(lat, lng)) pts.push({ lat, lng });
      }
    }
    if (pts.length > best.length) best = pts;
    if (pts.length >= max) break;
  }
  if (best.length <= max) return best;
  const step = best.length / max;
  return Array.from({ length: max }, (_, i) => best[Math.floor(i * step)]);
}
