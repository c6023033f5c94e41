/**
 * From the polygon pieces of the tiles read to the fields of an answer: each piece cut to its own
 * tile (dropping the tile buffer) and to the box asked for, the parts of one field joined across
 * tile edges, converted to longitude and latitude (RFC 7946: exterior rings counter-clockwise,
 * seven decimals, about a centimetre), and measured.
 */
import { anchorId } from '../../protocol/cid.js';
import type { PolygonPiece } from '../../sources/pmtiles/mvt.js';
import { toLngLat, toUnits, UNITS } from '../../sources/pmtiles/mvt.js';
import { countryLookup, labelPoint, polygonsAreaM2, type LngLat, type Rings } from './measure.js';
import { clipRing, dissolve, groupPieces, openRing, ringArea2, type GroupInput, type Poly, type Rect, type Ring } from './polygons.js';

export interface Box {
  min_lat: number;
  min_lng: number;
  max_lat: number;
  max_lng: number;
}

/** A field before it is signed (the served body minus field_cid, in key order of the answer). */
export interface FieldBody {
  id: string;
  layer: string;
  geometry: { type: 'Polygon'; coordinates: Rings } | { type: 'MultiPolygon'; coordinates: Rings[] };
  area_ha: number;
  confidence: number | null;
  country: string | null;
  clipped: boolean;
}

const round7 = (x: number) => {
  const r = Math.round(x * 1e7) / 1e7;
  return Object.is(r, -0) ? 0 : r;
};

/** The confidence a feature carries, as 0..1 (FTW publishes 0–100); null when it has none. */
export function confidenceOf(props: Record<string, unknown>): number | null {
  for (const k of ['confidence', 'conf', 'score', 'probability']) {
    const v = props[k];
    if (typeof v === 'number' && Number.isFinite(v) && v >= 0) {
      const c = v > 1 ? v / 100 : v;
      return Math.round(Math.min(1, c) * 1e4) / 1e4;
    }
  }
  return null;
}

/** The ISO 3166-1 alpha-2 code a feature carries, if any. */
function countryProp(props: Record<string, unknown>): string | null {
  for (const k of ['country', 'country_code', 'admin:country_code', 'iso_a2']) {
    const v = props[k];
    if (typeof v === 'string' && /^[A-Za-z]{2}$/.test(v)) return v.toUpperCase();
  }
  return null;
}

/** The year in a layer name (`field-2025-01-01 00:00:00` → 2025), if any. */
export function layerYear(layer: string): number | null {
  const m = /(?:^|\D)((?:19|20)\d{2})(?:\D|$)/.exec(layer);
  return m ? Number(m[1]) : null;
}

/**
 * Rings in units → GeoJSON rings in degrees, each reversed (y grows southward in units). A vertex
 * the box cut (on a box edge in units) takes the box's own number, so it lies exactly on the edge.
 */
function toDegrees(p: Poly, z: number, box: Box, edges: Rect): Rings | null {
  const conv = (r: Ring): LngLat[] | null => {
    const out: LngLat[] = [];
    for (let i = r.length - 1; i >= 0; i--) {
      const { lng, lat } = toLngLat(r[i], z);
      const [x, y] = r[i];
      const q: LngLat = [
        x === edges.x0 ? box.min_lng : x === edges.x1 ? box.max_lng : Math.min(box.max_lng, Math.max(box.min_lng, round7(lng))),
        y === edges.y0 ? box.max_lat : y === edges.y1 ? box.min_lat : Math.min(box.max_lat, Math.max(box.min_lat, round7(lat))),
      ];
      const last = out[out.length - 1];
      if (!last || last[0] !== q[0] || last[1] !== q[1]) out.push(q);
    }
    while (out.length > 1 && out[0][0] === out[out.length - 1][0] && out[0][1] === out[out.length - 1][1]) out.pop();
    if (out.length < 3) return null;
    out.push([out[0][0], out[0][1]]);
    return out;
  };
  const outer = conv(p.outer);
  if (!outer) return null;
  return [outer, ...p.holes.map(conv).filter((r): r is LngLat[] => r !== null)];
}

/**
 * Fields of one layer from the pieces of the tiles read, inside `box`, at zoom `z`. A field's id
 * is `ftw:<year or layer>:<upstream id>`; a feature without an id is named by the anchor of its
 * smallest original vertex (one not made by a tile or box cut), stable for every box that reads
 * the tile holding that vertex.
 */
export function assembleFields(pieces: readonly PolygonPiece[], layer: string, z: number, box: Box): FieldBody[] {
  const [ax0, ay0] = toUnits(box.min_lng, box.max_lat, z);
  const [ax1, ay1] = toUnits(box.max_lng, box.min_lat, z);
  const inputs: Array<GroupInput & { piece: PolygonPiece; smallest: [number, number] | null; clipped: boolean }> = [];
  for (const piece of pieces) {
    if (piece.layer !== layer) continue;
    const tx = piece.tile.x * UNITS;
    const ty = piece.tile.y * UNITS;
    const rect: Rect = { x0: Math.max(tx, ax0), y0: Math.max(ty, ay0), x1: Math.min(tx + UNITS, ax1), y1: Math.min(ty + UNITS, ay1) };
    if (rect.x0 >= rect.x1 || rect.y0 >= rect.y1) continue;
    let smallest: [number, number] | null = null;
    let clipped = false;
    const rings: Ring[] = [];
    for (const raw of piece.rings) {
      const r = openRing(raw);
      for (const p of r) {
        // A vertex beyond the box (buffer vertices included: they lie on the field's edges) means the box cuts the field.
        if (p[0] < ax0 || p[0] > ax1 || p[1] < ay0 || p[1] > ay1) clipped = true;
        const inTile = p[0] > tx && p[0] < tx + UNITS && p[1] > ty && p[1] < ty + UNITS;
        if (inTile && (!smallest || p[0] < smallest[0] || (p[0] === smallest[0] && p[1] < smallest[1]))) smallest = [p[0], p[1]];
      }
      const c = clipRing(r, rect);
      if (c.length > 0) rings.push(c);
    }
    if (!rings.some((r) => ringArea2(r) > 0)) continue;
    inputs.push({ layer, id: piece.id, tile: { x: piece.tile.x, y: piece.tile.y }, rings, piece, smallest, clipped });
  }
  const year = layerYear(layer);
  const tag = year !== null ? String(year) : layer;
  const country = countryLookup(box);
  const out: FieldBody[] = [];
  for (const group of groupPieces(inputs, UNITS)) {
    const members = group.map((i) => inputs[i]);
    const polys = dissolve(members.flatMap((m) => m.rings)) ?? members.flatMap((m) => dissolve(m.rings) ?? bySign(m.rings));
    const rings = polys.map((p) => toDegrees(p, z, box, { x0: ax0, y0: ay0, x1: ax1, y1: ay1 })).filter((r): r is Rings => r !== null);
    if (rings.length === 0) continue;
    const areaM2 = polygonsAreaM2(rings);
    if (areaM2 <= 0) continue;
    const first = members[0].piece;
    const upstreamId = members.find((m) => m.piece.id !== null)?.piece.id ?? null;
    const corner = members
      .map((m) => m.smallest)
      .filter((p): p is [number, number] => p !== null)
      .sort((a, b) => a[0] - b[0] || a[1] - b[1])[0];
    const id = upstreamId !== null ? `ftw:${tag}:${upstreamId}` : `ftw:${tag}:g${anchorId({ layer, z, vertex: corner ?? members[0].rings[0][0] })}`;
    out.push({
      id,
      layer,
      geometry: rings.length === 1 ? { type: 'Polygon', coordinates: rings[0] } : { type: 'MultiPolygon', coordinates: rings },
      area_ha: Math.round(areaM2) / 1e4,
      confidence: confidenceOf(first.properties),
      country: countryProp(first.properties) ?? country(labelPoint(rings)),
      clipped: members.some((m) => m.clipped),
    });
  }
  return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** Rings taken as they are: exteriors by their sign, each hole under the first exterior. */
function bySign(rings: readonly Ring[]): Poly[] {
  const outers = rings.filter((r) => ringArea2(r) > 0).map((outer) => ({ outer, holes: [] as Ring[] }));
  for (const h of rings.filter((r) => ringArea2(r) < 0)) outers[0]?.holes.push(h);
  return outers;
}
