/**
 * Turns a Resolution into the LocateResp fields (docs/locate.md, "Response (LocateResp)") that
 * depend only on the place: cell64, the 8 neighbours, polygon_bbox with its source,
 * polygon_geojson, up to 64 sample cells inside the polygon (deterministic per place, memoized) and
 * the Overture division.
 */
import { BoundedCache } from '../lib/cache.js';
import { cellBbox, cellOf, neighbours } from '../protocol/cell64.js';
import { inCountry } from './countries.js';
import type { Gazetteer } from './gazetteer.js';
import { boxPolygon, pointInPolygon, samplePoints, type Box } from './geometry.js';
import { OVERTURE_DIVISION_SCHEMA, type Resolution } from './resolution.js';
import type { ExtentSource, GeoJsonPolygon, LocateResp } from './types.js';

/** Locate returns at most 64 polygon_sample_cells (docs/locate.md, "Response (LocateResp)"). */
export const MAX_SAMPLE_CELLS = 64;

const MEMO_LIMIT = 4096;
const cachedSamples = new BoundedCache<string, string[]>('locate_sample_cells', { max: MEMO_LIMIT });

function geojsonBox(g: GeoJsonPolygon): Box {
  const polys = g.type === 'Polygon' ? [g.coordinates] : g.coordinates;
  let minLat = 90,
    maxLat = -90,
    minLng = 180,
    maxLng = -180;
  for (const rings of polys)
    for (const [x, y] of rings[0] ?? []) {
      if (y < minLat) minLat = y;
      if (y > maxLat) maxLat = y;
      if (x < minLng) minLng = x;
      if (x > maxLng) maxLng = x;
    }
  return { min_lat: minLat, min_lng: minLng, max_lat: maxLat, max_lng: maxLng };
}

/** Up to 64 distinct cells inside the place's polygon (or box), the same ones every time. */
export function sampleCells(g: Gazetteer, r: Resolution, centre: string): string[] {
  if (r.sample.shape === 'point' || (!r.box && !r.geojson)) return [centre];
  const memoKey = `${r.via}|${r.seed}`;
  const hit = cachedSamples.get(memoKey);
  if (hit) return hit;
  let pts: Array<{ lat: number; lng: number }>;
  if (r.sample.shape === 'country') {
    const c = g.countryByAlpha2.get(r.sample.alpha2)!;
    pts = samplePoints(c.box, r.seed, MAX_SAMPLE_CELLS, (a, b) => inCountry(c, a, b));
  } else if (r.sample.shape === 'geojson' && r.geojson) {
    const poly = r.geojson;
    pts = samplePoints(r.box ?? geojsonBox(poly), r.seed, MAX_SAMPLE_CELLS, (a, b) => pointInPolygon(poly, a, b));
  } else {
    pts = samplePoints(r.box!, r.seed, MAX_SAMPLE_CELLS);
  }
  const cells = [...new Set(pts.map((p) => cellOf(p.lat, p.lng)))].slice(0, MAX_SAMPLE_CELLS);
  const out = cells.length > 0 ? cells : [centre];
  cachedSamples.set(memoKey, out);
  return out;
}

/**
 * What the extent rests on, read off the box's source (so answers cached by earlier builds,
 * which lack the field, say it too).
 */
export function extentSource(r: Resolution): ExtentSource {
  if (!r.box || !r.boxSource || r.sample.shape === 'point') return 'point';
  switch (r.boxSource) {
    case 'country_table':
      return 'boundary';
    case 'admin1_table':
    case 'wide_bbox_table':
      return 'curated_box';
    case 'admin2_table':
    case 'admin3_table':
      return 'member_places';
    case 'population_scaled':
      return 'population_scaled';
    case 'nominatim_boundingbox':
    case 'overture_division_area':
      return r.geojson ? 'geocoder_boundary' : 'geocoder_bbox';
    case 'centre_cell_bbox':
      return 'point';
  }
}

/** Every LocateResp field except data_at_this_cell (which needs the store). */
export function locateCore(g: Gazetteer, r: Resolution): Omit<LocateResp, 'data_at_this_cell'> {
  const cell64 = cellOf(r.lat, r.lng);
  const out: Omit<LocateResp, 'data_at_this_cell'> = {
    cell64,
    via: r.via,
    label: r.label,
    lat: r.lat,
    lng: r.lng,
    localized_names: r.localized,
    neighborhood_cells: neighbours(cell64),
    polygon_bbox: r.box && r.boxSource ? { ...r.box, source: r.boxSource } : { ...cellBbox(cell64), source: 'centre_cell_bbox' },
    extent_source: extentSource(r),
    polygon_sample_cells: sampleCells(g, r, cell64),
    selected: r.selected,
    alternatives: r.alternatives,
  };
  // A boundary when an admin tier resolved (docs/locate.md, polygon_geojson); admin-1 and admin-2
  // have a box, not a surveyed boundary.
  if (r.geojson) out.polygon_geojson = r.geojson;
  else if ((r.via === 'admin1' || r.via === 'admin2') && r.box) out.polygon_geojson = boxPolygon(r.box);
  if (r.division) out.overture_division = { ...r.division, schema_url: OVERTURE_DIVISION_SCHEMA };
  return out;
}
