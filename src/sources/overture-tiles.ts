/**
 * What the Overture connector keeps of one vector tile of each theme it reads, and the measures
 * of a window over those tiles (overture.ts reads the tiles; this file only decodes and measures).
 *
 * Every piece is clipped to its own tile's bounds when decoded: a feature crossing a tile edge is
 * held by both tiles, each copy reaching into the neighbour's buffer, and clipping each copy at
 * the shared edge makes the copies a partition of the feature (no area or length counted twice).
 *
 * - buildings (layer `building`, polygons): per piece its id (the GERS id in `id`, else the MVT
 *   feature id), its rings, its planar area and centroid (global units, about the tile's corner),
 *   the bounds of the piece as the tile held it (reaching into the buffer shows which neighbouring
 *   tiles hold the rest of the building), and its geodesic area once measured;
 * - places (layer `place`, points): the points inside the tile itself (a buffer copy is the
 *   neighbour's);
 * - transportation (layer `segment`, lines): the segments whose `subtype` is `road`, clipped to
 *   the tile, with their geodesic length once measured; rail and water segments are counted only.
 */
import { boundsOf, clipLine, clipRing, disjoint, inside, lineLengthM, ringAreaM2, ringMoments } from './pmtiles/geometry.js';
import { pmtilesFormat } from './pmtiles/archive.js';
import { decodeLayer, GEOM_LINE, GEOM_POINT, GEOM_POLYGON, type Pt } from './pmtiles/mvt.js';
import { tileKey, tileRect, type TileAddress, type UnitRect } from './pmtiles/tiles.js';

export type OvertureTheme = 'buildings' | 'places' | 'transportation';

/** The layer read in each theme's archive. */
export const THEME_LAYER: Readonly<Record<OvertureTheme, string>> = { buildings: 'building', places: 'place', transportation: 'segment' };

export interface BuildingPiece {
  id: string;
  tile: TileAddress;
  rings: Pt[][];
  box: UnitRect;
  /** Bounds of the piece as the tile held it, buffer included. */
  reach: UnitRect;
  /** Twice the planar area (global units²) and the planar centroid. */
  a2: number;
  cx: number;
  cy: number;
  /** Geodesic area (m²), measured on first use. */
  areaM2?: number;
}

export interface RoadPiece {
  parts: Pt[][];
  box: UnitRect;
  lengthM?: number;
}

export type DecodedTile =
  | { theme: 'buildings'; tile: TileAddress; pieces: BuildingPiece[] }
  | { theme: 'places'; tile: TileAddress; points: Float64Array }
  | { theme: 'transportation'; tile: TileAddress; roads: RoadPiece[]; otherSegments: number };

/** The cache weight of a decoded tile, bytes (coordinates dominate). */
export function decodedBytes(t: DecodedTile): number {
  let n = 128;
  if (t.theme === 'places') return n + t.points.byteLength;
  const parts = t.theme === 'buildings' ? t.pieces.flatMap((p) => p.rings) : t.roads.flatMap((r) => r.parts);
  for (const p of parts) n += 48 + p.length * 40;
  return n + (t.theme === 'buildings' ? t.pieces.length * 160 : t.roads.length * 80);
}

/** One tile of `theme` decoded (bytes null: the archive has no tile there, so nothing is in it). */
export function decodeTile(theme: OvertureTheme, bytes: Uint8Array | null, t: TileAddress): DecodedTile {
  const { z, x, y } = t;
  const bounds = tileRect(t);
  if (theme === 'places') {
    if (!bytes) return { theme, tile: t, points: new Float64Array(0) };
    const pts: number[] = [];
    for (const f of decodeLayer(bytes, z, x, y, THEME_LAYER.places, GEOM_POINT).features)
      for (const [p] of f.parts) if (p[0] >= bounds.x0 && p[0] < bounds.x1 && p[1] >= bounds.y0 && p[1] < bounds.y1) pts.push(p[0], p[1]);
    return { theme, tile: t, points: Float64Array.from(pts) };
  }
  if (theme === 'transportation') {
    const roads: RoadPiece[] = [];
    let otherSegments = 0;
    if (bytes)
      for (const f of decodeLayer(bytes, z, x, y, THEME_LAYER.transportation, GEOM_LINE).features) {
        const subtype = f.properties.subtype;
        if (typeof subtype !== 'string') throw pmtilesFormat(`tile ${tileKey(t)}: a segment has no subtype (Overture segments are road, rail or water)`);
        if (subtype !== 'road') {
          otherSegments++;
          continue;
        }
        const parts = inside(boundsOf(f.parts), bounds) ? f.parts : f.parts.flatMap((line) => clipLine(line, bounds));
        if (parts.length > 0) roads.push({ parts, box: boundsOf(parts) });
      }
    return { theme, tile: t, roads, otherSegments };
  }
  const pieces: BuildingPiece[] = [];
  if (bytes) {
    const origin: Pt = [bounds.x0, bounds.y0];
    for (const f of decodeLayer(bytes, z, x, y, THEME_LAYER.buildings, GEOM_POLYGON).features) {
      if (f.id === null) throw pmtilesFormat(`tile ${tileKey(t)}: a building has neither an id property nor a feature id, so its parts in other tiles cannot be joined`);
      const reach = boundsOf(f.parts);
      // Most buildings lie inside their tile: only those reaching into the buffer are clipped.
      const rings = inside(reach, bounds) ? f.parts : f.parts.map((r) => clipRing(r, bounds)).filter((r) => r.length > 0);
      let a2 = 0;
      let mx = 0;
      let my = 0;
      for (const r of rings) {
        const m = ringMoments(r, origin);
        a2 += m.a2;
        mx += m.a2 * m.cx;
        my += m.a2 * m.cy;
      }
      // Nothing of it inside the tile (a buffer copy), or a sliver along the edge.
      if (a2 <= 0) continue;
      pieces.push({ id: f.id, tile: t, rings, box: rings === f.parts ? reach : boundsOf(rings), reach, a2, cx: mx / a2, cy: my / a2 });
    }
  }
  return { theme, tile: t, pieces };
}

/** The tiles next to a building piece's tile that the piece reaches into (the building goes on there). */
export function reachedNeighbours(p: BuildingPiece): TileAddress[] {
  const b = tileRect(p.tile);
  const dxs = [0, ...(p.reach.x0 < b.x0 ? [-1] : []), ...(p.reach.x1 > b.x1 ? [1] : [])];
  const dys = [0, ...(p.reach.y0 < b.y0 ? [-1] : []), ...(p.reach.y1 > b.y1 ? [1] : [])];
  const last = 2 ** p.tile.z - 1;
  const out: TileAddress[] = [];
  for (const dx of dxs)
    for (const dy of dys) {
      if (dx === 0 && dy === 0) continue;
      const x = p.tile.x + dx;
      const y = p.tile.y + dy;
      if (x >= 0 && x <= last && y >= 0 && y <= last) out.push({ z: p.tile.z, x, y });
    }
  return out;
}

/** The buildings with a piece inside the window, by id, with all their pieces among `tiles`. */
export function buildingsNear(tiles: Iterable<DecodedTile>, rect: UnitRect): Map<string, BuildingPiece[]> {
  const byId = new Map<string, BuildingPiece[]>();
  for (const t of tiles) {
    if (t.theme !== 'buildings') continue;
    for (const p of t.pieces) {
      const list = byId.get(p.id);
      if (list) list.push(p);
      else byId.set(p.id, [p]);
    }
  }
  for (const [id, pieces] of byId) if (!pieces.some((p) => !disjoint(p.box, rect))) byId.delete(id);
  return byId;
}

/** Tiles not yet read that hold more of the buildings near the window. */
export function tilesToComplete(near: Map<string, BuildingPiece[]>, read: ReadonlySet<string>): TileAddress[] {
  const need = new Map<string, TileAddress>();
  for (const pieces of near.values()) for (const p of pieces) for (const n of reachedNeighbours(p)) if (!read.has(tileKey(n))) need.set(tileKey(n), n);
  return [...need.values()];
}

/** Buildings whose area-weighted centroid lies in the window (west and north edges included). */
export function countBuildings(near: Map<string, BuildingPiece[]>, rect: UnitRect): number {
  let n = 0;
  for (const pieces of near.values()) {
    let a2 = 0;
    let mx = 0;
    let my = 0;
    for (const p of pieces) {
      a2 += p.a2;
      mx += p.a2 * p.cx;
      my += p.a2 * p.cy;
    }
    const cx = mx / a2;
    const cy = my / a2;
    if (cx >= rect.x0 && cx < rect.x1 && cy >= rect.y0 && cy < rect.y1) n++;
  }
  return n;
}

/** Geodesic area (m²) of the building pieces of `tiles` inside the window. */
export function footprintInWindow(tiles: Iterable<DecodedTile>, rect: UnitRect): number {
  let s = 0;
  for (const t of tiles) {
    if (t.theme !== 'buildings') continue;
    const z = t.tile.z;
    for (const p of t.pieces) {
      if (disjoint(p.box, rect)) continue;
      if (inside(p.box, rect)) {
        p.areaM2 ??= p.rings.reduce((a, r) => a + ringAreaM2(r, z), 0);
        s += p.areaM2;
      } else for (const r of p.rings) s += ringAreaM2(clipRing(r, rect), z);
    }
  }
  return s;
}

/** Points of the place tiles inside the window (west and north edges included). */
export function countPlaces(tiles: Iterable<DecodedTile>, rect: UnitRect): number {
  let n = 0;
  for (const t of tiles) {
    if (t.theme !== 'places') continue;
    const p = t.points;
    for (let i = 0; i < p.length; i += 2) if (p[i] >= rect.x0 && p[i] < rect.x1 && p[i + 1] >= rect.y0 && p[i + 1] < rect.y1) n++;
  }
  return n;
}

/** Geodesic length (m) of the road segments of `tiles` inside the window. */
export function roadLengthInWindow(tiles: Iterable<DecodedTile>, rect: UnitRect): number {
  let s = 0;
  for (const t of tiles) {
    if (t.theme !== 'transportation') continue;
    const z = t.tile.z;
    for (const r of t.roads) {
      if (disjoint(r.box, rect)) continue;
      if (inside(r.box, rect)) {
        r.lengthM ??= r.parts.reduce((a, part) => a + lineLengthM(part, z), 0);
        s += r.lengthM;
      } else for (const part of r.parts) for (const run of clipLine(part, rect)) s += lineLengthM(run, z);
    }
  }
  return s;
}
