/**
 * The region of a hunt: free text through locate (its polygon when an admin tier answers, else
 * its box: a named city hunts over its population-scaled box), or an explicit polygon_bbox. Areas
 * beyond the hunt area cap are refused: 32 samples over a continent say nothing about where an
 * event is, so the caller is told to narrow it.
 */
import { boxAreaKm2 } from '../../geo/geometry.js';
import type { ExtentSource, LocateResp } from '../../geo/types.js';
import { invalidArgument } from '../../protocol/errors.js';
import type { ServiceContext } from '../context/context.js';
import { locate } from '../locate/locate.js';
import { boxArea, parsePolygon, parsePolygonBbox, type Area } from '../reads/geometry.js';

/**
 * Largest bounding-box area a hunt samples, km². The samples are capped (32, 8 for slow bands;
 * docs/hunt.md) but no rule bounds the area; 250 000 km² (about 500 km x 500 km) keeps a lake, a
 * county or a small state in reach while one sample still stands for at most about 8 000 km².
 */
export const HUNT_MAX_AREA_KM2 = 250_000;

export interface HuntRegion {
  area: Area;
  /** What the answer reports: the resolved polygon (GeoJSON when locate gave one) or box, and where it came from. */
  block: {
    source: string;
    query?: string;
    label?: string;
    is_high_confidence?: boolean;
    polygon_bbox: { min_lat: number; min_lng: number; max_lat: number; max_lng: number };
    polygon_geojson?: LocateResp['polygon_geojson'];
    /** What the resolved extent rests on (locate's extent_source); absent for an explicit polygon_bbox. */
    extent_source?: ExtentSource;
    area_km2: number;
  };
}

export type LocateFn = (ctx: ServiceContext, req: { place: string }) => Promise<LocateResp>;

/** An explicit hunt box (degrees; ranges and order are checked by parsePolygonBbox). */
export interface HuntBox {
  min_lat: number;
  min_lng: number;
  max_lat: number;
  max_lng: number;
  source?: string;
}

/** Resolve `region` or `polygon_bbox` (exactly one) to a sampled area within the cap. */
export async function resolveRegion(ctx: ServiceContext, req: { region?: string; polygon_bbox?: HuntBox }, locateFn: LocateFn = locate): Promise<HuntRegion> {
  if ((req.region === undefined) === (req.polygon_bbox === undefined)) {
    throw invalidArgument(req.region === undefined ? 'region' : 'polygon_bbox', 'give exactly one of region (free text) or polygon_bbox {min_lat, min_lng, max_lat, max_lng}');
  }
  let region: HuntRegion;
  if (req.polygon_bbox !== undefined) {
    const area = parsePolygonBbox(req.polygon_bbox);
    region = { area, block: { source: 'polygon_bbox', polygon_bbox: area.bbox, area_km2: 0 } };
  } else {
    const text = req.region ?? '';
    if (text.trim() === '') throw invalidArgument('region', 'expected a place name');
    region = fromLocate(await locateFn(ctx, { place: text }), text);
  }
  const km2 = boxAreaKm2(region.area.bbox);
  region.block.area_km2 = Math.round(km2);
  if (km2 > HUNT_MAX_AREA_KM2) {
    throw invalidArgument(
      req.polygon_bbox !== undefined ? 'polygon_bbox' : 'region',
      `the area's bounding box is about ${Math.round(km2).toLocaleString('en-US')} km², beyond the hunt cap of ${HUNT_MAX_AREA_KM2.toLocaleString('en-US')} km²; hunt a smaller region (a lake, county or sub-box)`,
    );
  }
  return region;
}

function fromLocate(loc: LocateResp, query: string): HuntRegion {
  const meta = { query, label: loc.label, is_high_confidence: loc.selected?.is_high_confidence, ...(loc.extent_source ? { extent_source: loc.extent_source } : {}) };
  if (loc.polygon_geojson) {
    const area = parsePolygon(loc.polygon_geojson, 'region');
    return { area, block: { source: `locate:${loc.via}:polygon`, ...meta, polygon_bbox: area.bbox, polygon_geojson: loc.polygon_geojson, area_km2: 0 } };
  }
  const b = loc.polygon_bbox;
  if (!b || b.source === 'centre_cell_bbox') {
    // A point has no extent to search; guessing a radius would invent the region.
    throw invalidArgument('region', `"${query}" resolved to a point (${loc.label}), not an area; give polygon_bbox {min_lat, min_lng, max_lat, max_lng} or a named area`);
  }
  if (b.min_lng > b.max_lng) throw invalidArgument('region', `"${query}" crosses the antimeridian; give polygon_bbox for one side of it`);
  const area = boxArea(b.min_lat, b.min_lng, b.max_lat, b.max_lng, 'region.', ['min_lat', 'min_lng', 'max_lat', 'max_lng']);
  return { area, block: { source: `locate:${b.source}`, ...meta, polygon_bbox: area.bbox, area_km2: 0 } };
}
