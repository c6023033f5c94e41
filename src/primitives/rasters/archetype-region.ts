/**
 * The region of region_archetype_map (docs/rasters.md, "The region"): a place (resolved by locate
 * to its outline, its box, or a square around a point), a GeoJSON polygon, a box or a list of
 * cells, made canonical (coordinates to 7 decimals, cells sorted) so one area has one aoi_cid:
 * a box is anchored as band_raster and tessera_field anchor it, a polygon as
 * `{kind: "polygon", polygons}`, a cell list as `{kind: "cells", cells}`. A pixel belongs to the
 * region when its centre does (inside the box or polygon, or inside one of the cells).
 */
import { cellOf, isCell, LAT_MAX, LNG_MAX, cellCenter } from '../../protocol/cell64.js';
import { requireCell } from '../../protocol/cell-token.js';
import { anchorId } from '../../protocol/cid.js';
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import type { ServiceContext } from '../context/context.js';
import { locate } from '../locate/locate.js';
import { contains, parsePolygon, type Area, type PolygonRings } from '../reads/geometry.js';
import { aoiCid, BOX_DECIMALS, canonicalBox, type LatLngBox } from './geometry.js';

/** Cells a cell-list region may name. */
export const REGION_MAX_CELLS = 4096;
/** The square read around a place that resolves to a point: half its side, m. */
export const PLACE_RADIUS_M = { default: 1000, max: 1280 } as const;

export interface RegionRequest {
  place?: string;
  radius_m?: number;
  polygon?: { type: 'Polygon' | 'MultiPolygon'; coordinates: unknown[] };
  bbox?: LatLngBox;
  cells?: string[];
}

/** The region as its record signs it (the aoi_cid anchors exactly this). */
export type SignedRegion = ({ kind: 'bbox' } & LatLngBox) | { kind: 'polygon'; polygons: PolygonRings[] } | { kind: 'cells'; cells: string[] };

export interface PlaceBlock {
  query: string;
  label: string;
  lat: number;
  lng: number;
  via: string;
  is_high_confidence: boolean;
  radius_m?: number;
}

export interface Region {
  signed: SignedRegion;
  aoi_cid: string;
  /** The canonical box holding the region (the field is read over it). */
  bbox: LatLngBox;
  contains(lat: number, lng: number): boolean;
  place?: PlaceBlock;
}

const q = (x: number) => Math.floor(x * 10 ** BOX_DECIMALS + 0.5) / 10 ** BOX_DECIMALS;

/** A box region (anchored as a box is everywhere). */
export function boxRegion(b: LatLngBox): Region {
  const box = canonicalBox(b);
  return {
    signed: { kind: 'bbox', ...box },
    aoi_cid: aoiCid(box),
    bbox: box,
    contains: (lat, lng) => lat >= box.min_lat && lat <= box.max_lat && lng >= box.min_lng && lng <= box.max_lng,
  };
}

/** A polygon region from GeoJSON: positions rounded to 7 decimals, then checked. */
export function polygonRegion(g: unknown, field = 'polygon'): Region {
  const parsed = parsePolygon(g, field);
  const polygons = parsed.polygons.map((p) => p.map((ring) => ring.map(([lng, lat]) => [q(lng), q(lat)] as [number, number])));
  const area: Area = parsePolygon({ type: 'MultiPolygon', coordinates: polygons }, field);
  const b = area.bbox;
  if (!(b.min_lat < b.max_lat) || !(b.min_lng < b.max_lng)) throw invalidArgument(field, 'the polygon has no area (after rounding to 7 decimals)');
  const signed: SignedRegion = { kind: 'polygon', polygons };
  return { signed, aoi_cid: anchorId(signed), bbox: canonicalBox(b), contains: (lat, lng) => contains(area, lat, lng) };
}

/** A cell-list region: the union of the cells' footprints (centre ± half a pitch). */
export function cellsRegion(ctx: ServiceContext, list: readonly string[]): Region {
  if (list.length === 0) throw invalidArgument('cells', `expected 1..${REGION_MAX_CELLS} cells`);
  if (list.length > REGION_MAX_CELLS) throw invalidArgument('cells', `at most ${REGION_MAX_CELLS} cells (got ${list.length})`);
  const cells = [...new Set(list.map((c, i) => requireCell(ctx.config.prefix, c, `cells[${i}]`)))].sort();
  if (!cells.every(isCell)) throw invalidArgument('cells', 'expected cell64 values');
  const hLat = 90 / LAT_MAX;
  const hLng = 180 / LNG_MAX;
  const b = { min_lat: Infinity, min_lng: Infinity, max_lat: -Infinity, max_lng: -Infinity };
  for (const c of cells) {
    const { lat, lng } = cellCenter(c);
    b.min_lat = Math.min(b.min_lat, Math.max(-90, lat - hLat));
    b.max_lat = Math.max(b.max_lat, Math.min(90, lat + hLat));
    b.min_lng = Math.min(b.min_lng, lng - hLng);
    b.max_lng = Math.max(b.max_lng, lng + hLng);
  }
  // Outward to 7 decimals, so the box holds every footprint.
  const box = canonicalBox({
    min_lat: Math.floor(b.min_lat * 1e7) / 1e7,
    min_lng: Math.floor(b.min_lng * 1e7) / 1e7,
    max_lat: Math.ceil(b.max_lat * 1e7) / 1e7,
    max_lng: Math.ceil(b.max_lng * 1e7) / 1e7,
  });
  const set = new Set(cells);
  const signed: SignedRegion = { kind: 'cells', cells };
  return { signed, aoi_cid: anchorId(signed), bbox: box, contains: (lat, lng) => set.has(cellOf(lat, lng)) };
}

/**
 * A place: its outline when locate has one, else its box, else a square of radius_m around the
 * point. A city's population-scaled box (docs/locate.md, "Extents") is an estimate, so a city
 * counts as a point here.
 */
async function placeRegion(ctx: ServiceContext, query: string, radiusM: number | undefined): Promise<Region> {
  const loc = await locate(ctx, { place: query });
  const place: PlaceBlock = { query, label: loc.label, lat: loc.lat, lng: loc.lng, via: loc.via, is_high_confidence: loc.selected.is_high_confidence };
  const b = loc.polygon_bbox;
  if (radiusM === undefined && loc.polygon_geojson) return { ...polygonRegion(loc.polygon_geojson, 'place'), place };
  if (radiusM === undefined && b && b.source !== 'centre_cell_bbox' && b.source !== 'population_scaled') {
    if (b.min_lng > b.max_lng) throw invalidArgument('place', `"${query}" crosses the antimeridian; give a bbox for one side of it`);
    return { ...boxRegion(b), place };
  }
  const r = radiusM ?? PLACE_RADIUS_M.default;
  const dLat = r / 111_320;
  const dLng = r / (111_320 * Math.max(0.01, Math.cos((loc.lat * Math.PI) / 180)));
  const box = { min_lat: Math.max(-90, loc.lat - dLat), min_lng: Math.max(-180, loc.lng - dLng), max_lat: Math.min(90, loc.lat + dLat), max_lng: Math.min(180, loc.lng + dLng) };
  return { ...boxRegion(box), place: { ...place, radius_m: r } };
}

/** Exactly one of place, polygon, bbox, cells. */
export async function resolveRegion(ctx: ServiceContext, req: RegionRequest): Promise<Region> {
  const given = (['place', 'polygon', 'bbox', 'cells'] as const).filter((k) => req[k] !== undefined);
  if (given.length !== 1) {
    throw new SvcError('invalid_argument', `${given.length ? given.join(', ') : 'place, polygon, bbox, cells'}: give exactly one of place, polygon, bbox, cells`, {
      field: given[1] ?? 'place',
      fields: given,
    });
  }
  if (req.radius_m !== undefined && req.place === undefined) throw invalidArgument('radius_m', 'only with place');
  if (req.place !== undefined) return placeRegion(ctx, req.place, req.radius_m);
  if (req.polygon !== undefined) return polygonRegion(req.polygon);
  if (req.bbox !== undefined) return boxRegion(req.bbox);
  return cellsRegion(ctx, req.cells!);
}

/** Region from its signed form (a rebuild reads the region from the record). */
export function regionOfSigned(ctx: ServiceContext, s: SignedRegion): Region {
  if (s.kind === 'bbox') return boxRegion(s);
  if (s.kind === 'polygon') return polygonRegion({ type: 'MultiPolygon', coordinates: s.polygons });
  return cellsRegion(ctx, s.cells);
}
