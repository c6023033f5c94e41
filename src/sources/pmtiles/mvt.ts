/**
 * Mapbox Vector Tile polygons (MVT spec 2.1) decoded with @mapbox/vector-tile into one
 * coordinate space for a whole zoom: global tile units, x = (tile x + px / extent) × UNITS and
 * likewise y (y grows southward), so a polygon cut by a tile edge has the same vertex
 * coordinates in the two tiles that hold its parts. Rings keep the winding the spec gives them
 * (exterior rings positive by the shoelace formula in these y-down units, holes negative), so
 * a ring's role is its sign. decodePolygons keeps the polygons of every layer; decodeLayer reads
 * one layer's points, lines or polygons.
 */
import { VectorTile } from '@mapbox/vector-tile';
import { PbfReader } from 'pbf';
import { pmtilesFormat } from './archive.js';

/** Units per tile side in the global space (the usual MVT extent; other extents are rescaled). */
export const UNITS = 4096;

/** [x, y] in global tile units of one zoom. */
export type Pt = [number, number];

/** One polygon feature of one tile, as the tile holds it (clipped to the tile plus its buffer). */
export interface PolygonPiece {
  layer: string;
  /** The feature's `id` property, else its MVT feature id, as text; null when it has neither. */
  id: string | null;
  properties: Record<string, string | number | boolean>;
  /** Every ring of the feature (exteriors positive, holes negative), closed (last = first). */
  rings: Pt[][];
  /** The tile it came from. */
  tile: { z: number; x: number; y: number };
}

/** Every polygon of every layer of a tile, by layer name. */
export function decodePolygons(bytes: Uint8Array, z: number, x: number, y: number): Map<string, PolygonPiece[]> {
  let tile: VectorTile;
  try {
    tile = new VectorTile(new PbfReader(bytes));
  } catch (e) {
    throw pmtilesFormat(`tile ${z}/${x}/${y} is not a vector tile (${(e as Error).message})`);
  }
  const out = new Map<string, PolygonPiece[]>();
  for (const [name, layer] of Object.entries(tile.layers)) {
    const scale = UNITS / layer.extent;
    const pieces: PolygonPiece[] = [];
    for (let i = 0; i < layer.length; i++) {
      const f = layer.feature(i);
      if (f.type !== 3) continue;
      let geometry: ReturnType<typeof f.loadGeometry>;
      try {
        geometry = f.loadGeometry();
      } catch (e) {
        throw pmtilesFormat(`tile ${z}/${x}/${y} layer ${name} feature ${i}: ${(e as Error).message}`);
      }
      const rings: Pt[][] = [];
      for (const ring of geometry) {
        if (ring.length < 3) continue;
        const r: Pt[] = ring.map((p) => [x * UNITS + p.x * scale, y * UNITS + p.y * scale]);
        const [a, b] = [r[0], r[r.length - 1]];
        if (a[0] !== b[0] || a[1] !== b[1]) r.push([a[0], a[1]]);
        rings.push(r);
      }
      if (rings.length === 0) continue;
      const pid = f.properties.id;
      const id = typeof pid === 'string' || typeof pid === 'number' ? String(pid) : f.id !== undefined ? String(f.id) : null;
      pieces.push({ layer: name, id, properties: { ...f.properties }, rings, tile: { z, x, y } });
    }
    out.set(name, pieces);
  }
  return out;
}

/** One feature of one layer of a tile, of the geometry type asked for, in global units. */
export interface LayerFeature {
  /** The feature's `id` property, else its MVT feature id, as text; null when it has neither. */
  id: string | null;
  properties: Record<string, string | number | boolean>;
  /**
   * Points: one part per point. Lines: one part per line string. Polygons: every ring, closed,
   * exteriors positive and holes negative (as decodePolygons gives them).
   */
  parts: Pt[][];
}

/** MVT geometry types (spec 2.1, 4.3.4). */
export const GEOM_POINT = 1;
export const GEOM_LINE = 2;
export const GEOM_POLYGON = 3;

/**
 * The features of one layer of a tile whose geometry is of `type` (features of another type are
 * skipped and counted): an absent layer is an empty list, not an error.
 */
export function decodeLayer(bytes: Uint8Array, z: number, x: number, y: number, layerName: string, type: 1 | 2 | 3): { features: LayerFeature[]; otherTypes: number } {
  let tile: VectorTile;
  try {
    tile = new VectorTile(new PbfReader(bytes));
  } catch (e) {
    throw pmtilesFormat(`tile ${z}/${x}/${y} is not a vector tile (${(e as Error).message})`);
  }
  const layer = tile.layers[layerName];
  if (!layer) return { features: [], otherTypes: 0 };
  const scale = UNITS / layer.extent;
  const features: LayerFeature[] = [];
  let otherTypes = 0;
  for (let i = 0; i < layer.length; i++) {
    const f = layer.feature(i);
    if (f.type !== type) {
      otherTypes++;
      continue;
    }
    let geometry: ReturnType<typeof f.loadGeometry>;
    try {
      geometry = f.loadGeometry();
    } catch (e) {
      throw pmtilesFormat(`tile ${z}/${x}/${y} layer ${layerName} feature ${i}: ${(e as Error).message}`);
    }
    const parts: Pt[][] = [];
    for (const g of geometry) {
      if (g.length < (type === GEOM_POLYGON ? 3 : type === GEOM_LINE ? 2 : 1)) continue;
      const part: Pt[] = g.map((p) => [x * UNITS + p.x * scale, y * UNITS + p.y * scale]);
      if (type === GEOM_POLYGON) {
        const [a, b] = [part[0], part[part.length - 1]];
        if (a[0] !== b[0] || a[1] !== b[1]) part.push([a[0], a[1]]);
      }
      parts.push(part);
    }
    if (parts.length === 0) continue;
    const pid = f.properties.id;
    const id = typeof pid === 'string' || typeof pid === 'number' ? String(pid) : f.id !== undefined ? String(f.id) : null;
    features.push({ id, properties: { ...f.properties }, parts });
  }
  return { features, otherTypes };
}

/** Web-Mercator tile of a longitude and latitude at zoom z, as fractional global units. */
export function toUnits(lng: number, lat: number, z: number): Pt {
  const n = 2 ** z * UNITS;
  const s = Math.sin((Math.max(-85.0511287798, Math.min(85.0511287798, lat)) * Math.PI) / 180);
  return [((lng + 180) / 360) * n, (0.5 - Math.log((1 + s) / (1 - s)) / (4 * Math.PI)) * n];
}

/** Longitude and latitude of a point in global units at zoom z. */
export function toLngLat(p: Pt, z: number): { lng: number; lat: number } {
  const n = 2 ** z * UNITS;
  const lng = (p[0] / n) * 360 - 180;
  const lat = (Math.atan(Math.sinh(Math.PI * (1 - (2 * p[1]) / n))) * 180) / Math.PI;
  return { lng, lat };
}
