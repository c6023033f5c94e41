/**
 * Field boundaries (GET/POST /v1/field_boundaries, tool field_boundaries; docs/field-boundaries.md):
 * the Fields of The World polygons inside a box, clipped to it, each with its geodesic area, the
 * upstream confidence and the country, signed by one receipt. The box is a polygon_bbox, or a
 * place resolved by locate (its box; a point gets a square of radius_m around it), capped at
 * FIELD_LIMITS.max_area_km2. No polygon there is an empty list with a typed note, never a guess.
 *
 * Signing (protocol/field-boundaries.ts): each field carries field_cid, the content id of its
 * body; the receipt (primitive `<prefix>.field_boundaries`) lists the field_cids in fact_cids in
 * the order shown, binds the box (field.aoi_cid) and how it was read (field.derivation_cid:
 * source, archive version, layer, zoom, methods), and names the archive version in
 * source_versions. The centre cell of the box is its one cell.
 */
import { BoundedCache } from '../../lib/cache.js';
import { cellOf } from '../../protocol/cell64.js';
import { fieldAreaCid, derivationCid, fieldCid } from '../../protocol/field-boundaries.js';
import { invalidArgument, SvcError } from '../../protocol/errors.js';
import type { Receipt } from '../../protocol/receipt.js';
import { fieldBoundaryConnector, FTW_SOURCE, type FieldRead } from '../../sources/ftw.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import { locate } from '../locate/locate.js';
import { assembleFields, layerYear, type Box, type FieldBody } from './assemble.js';
import { boxAreaKm2, labelPoint } from './measure.js';

/** Bounds of one field-boundaries read (served by /v1/limits as `field_boundaries`). */
export const FIELD_LIMITS = {
  /** Largest box read, km² (geodesic). 100 km² is a district's farmland: at the read zoom a few dozen to a few hundred tiles. */
  max_area_km2: 100,
  /** Tiles one read may need at the read zoom (a box near the poles needs more per km²). */
  max_tiles: 512,
  /** Fields one answer lists at most (the rest is cut, with a note). */
  max_fields: { default: 1000, max: 5000 },
  /** The square read around a place that resolves to a point: half its side, m. */
  point_radius_m: { default: 1000, max: 5000 },
} as const;

export const FIELD_LICENSE = 'CC-BY-4.0';

type SignedField = FieldBody & { field_cid: string };

/**
 * Fields assembled from the same archive version, zoom, layer and box, with their field_cids:
 * a repeat reads its tiles from the tile cache and skips clipping, joining, measuring and hashing
 * (each answer still gets its own receipt).
 */
const assembled = new BoundedCache<string, SignedField[]>('field_boundaries_assembled', {
  max: 256,
  maxBytes: 64 * 1024 * 1024,
  ttlMs: 10 * 60_000,
  bytesOf: (fields) => fields.reduce((n, f) => n + 400 + JSON.stringify(f.geometry.coordinates).length, 64),
});

export interface FieldBoundariesRequest {
  place?: string;
  polygon_bbox?: { min_lat: number; min_lng: number; max_lat: number; max_lng: number; source?: string };
  radius_m?: number;
  year?: number;
  min_confidence?: number;
  max_fields: number;
}

export type NoteCode = 'no_fields_in_area' | 'outside_coverage' | 'year_not_in_archive' | 'below_min_confidence' | 'truncated';

/** The area block of an answer: the box read (signed through aoi_cid) and, unsigned, how it was chosen. */
export interface AreaBlock {
  source: 'polygon_bbox' | 'place' | 'recall_polygon';
  bbox: Box;
  aoi_cid: string;
  area_km2: number;
  place?: { query: string; label: string; lat: number; lng: number; via: string; is_high_confidence: boolean; radius_m?: number };
}

export interface FieldsAnswer {
  area: AreaBlock;
  fields: SignedField[];
  truncated: boolean;
  note?: { code: NoteCode; message: string };
  derivation: Record<string, unknown> & { derivation_cid: string };
  read: { zoom: number; tiles_covering: number; tiles_present: number; tiles_from_cache: number; range_requests: number; bytes_read: number; inside_archive_bounds: boolean };
  license: string;
  attribution: string;
  receipt: Receipt;
}

/** Ranges and order of an explicit box (the schema admits any numbers). */
function checkBox(b: Box, field: string): Box {
  const { min_lat: s, min_lng: w, max_lat: n, max_lng: e } = b;
  for (const [k, v, lim] of [
    ['min_lat', s, 90],
    ['max_lat', n, 90],
    ['min_lng', w, 180],
    ['max_lng', e, 180],
  ] as const) {
    if (!Number.isFinite(v) || Math.abs(v) > lim) throw invalidArgument(`${field}.${k}`, `expected a number in [-${lim}, ${lim}]`);
  }
  if (s >= n) throw invalidArgument(field, `min_lat ${s} is not south of max_lat ${n}`);
  if (w >= e) throw invalidArgument(field, `min_lng ${w} is not west of max_lng ${e} (split boxes that cross the antimeridian)`);
  return { min_lat: s, min_lng: w, max_lat: n, max_lng: e };
}

/** The cap, refused naming it. */
function checkCap(box: Box, field: string): number {
  const km2 = boxAreaKm2(box);
  if (km2 > FIELD_LIMITS.max_area_km2) {
    throw new SvcError(
      'invalid_argument',
      `${field}: the box covers about ${km2.toFixed(1)} km², beyond the field_boundaries cap max_area_km2 = ${FIELD_LIMITS.max_area_km2} km² (/v1/limits); ask for a smaller box`,
      { field, area_km2: Math.round(km2 * 10) / 10, max_area_km2: FIELD_LIMITS.max_area_km2 },
    );
  }
  return km2;
}

/**
 * The box a place stands for: its extent, or a square of radius_m around a point. A city's
 * population-scaled box (docs/locate.md, "Extents") is an estimate, not an extent to read field
 * polygons over: a city counts as a point here, as it always has.
 */
async function placeArea(ctx: ServiceContext, query: string, radiusM: number | undefined): Promise<{ box: Box; place: NonNullable<AreaBlock['place']> }> {
  const loc = await locate(ctx, { place: query });
  const base = { query, label: loc.label, lat: loc.lat, lng: loc.lng, via: loc.via, is_high_confidence: loc.selected.is_high_confidence };
  const b = loc.polygon_bbox;
  if (b && b.source !== 'centre_cell_bbox' && b.source !== 'population_scaled' && radiusM === undefined) {
    if (b.min_lng > b.max_lng) throw invalidArgument('place', `"${query}" crosses the antimeridian; give polygon_bbox for one side of it`);
    return { box: { min_lat: b.min_lat, min_lng: b.min_lng, max_lat: b.max_lat, max_lng: b.max_lng }, place: base };
  }
  const r = radiusM ?? FIELD_LIMITS.point_radius_m.default;
  const dLat = r / 111_320;
  const dLng = r / (111_320 * Math.max(0.01, Math.cos((loc.lat * Math.PI) / 180)));
  const round = (x: number) => Math.round(x * 1e7) / 1e7;
  return {
    box: { min_lat: round(Math.max(-90, loc.lat - dLat)), min_lng: round(Math.max(-180, loc.lng - dLng)), max_lat: round(Math.min(90, loc.lat + dLat)), max_lng: round(Math.min(180, loc.lng + dLng)) },
    place: { ...base, radius_m: r },
  };
}

/** The typed error of a read that did not complete (nothing is signed for it). */
function readFailure(r: Exclude<FieldRead, { status: 'ok' }>, source: AreaBlock['source']): SvcError {
  if (r.status === 'too_many_tiles') {
    const field = source === 'recall_polygon' ? 'polygon' : source;
    return new SvcError('invalid_argument', `${field}: the box needs ${r.tiles} tiles at zoom ${r.zoom}, beyond the field_boundaries cap max_tiles = ${r.max} (/v1/limits); ask for a smaller box`, {
      field,
      tiles: r.tiles,
      max_tiles: r.max,
    });
  }
  const details = { source: FTW_SOURCE, detail: r.reason, range_requests: r.stats.requests };
  if (r.status === 'timeout') return new SvcError('compute_timeout', `field_boundaries: ${r.reason}`, details);
  if (r.format_mismatch) return new SvcError('source_format_mismatch', r.reason, details);
  if (r.reason.startsWith('internal:')) return new SvcError('internal', 'internal error while reading field boundaries', details);
  return new SvcError('source_fetch_failed', r.reason, details);
}

export interface FieldsOptions {
  deadline?: number;
  year?: number;
  minConfidence?: number;
  maxFields?: number;
  /** Keep only fields whose label point passes (recall_polygon: inside its polygon). */
  keep?: (lat: number, lng: number) => boolean;
}

/**
 * The signed fields inside a checked, capped box. Throws a typed error when no connector is
 * wired or the read fails.
 */
export async function fieldsInBox(ctx: ServiceContext, area: Omit<AreaBlock, 'aoi_cid' | 'area_km2'> & { area_km2: number }, opts: FieldsOptions = {}): Promise<FieldsAnswer> {
  const ftw = fieldBoundaryConnector(ctx.materializers.list());
  if (!ftw) {
    throw new SvcError('not_yet_implemented', `no Fields of The World connector (${FTW_SOURCE}) is wired on this responder, so it serves no field boundaries (see /v1/materializers)`, {
      workaround: 'ask a responder that lists the ftw connector at /v1/materializers',
    });
  }
  const deadline = opts.deadline ?? Date.now() + ctx.config.materializerTimeoutSecs * 1000;
  const r = await ftw.readFields({ box: area.bbox, deadline, maxTiles: FIELD_LIMITS.max_tiles });
  if (r.status !== 'ok') throw readFailure(r, area.source);
  const years = r.layers.map((l) => ({ l, y: layerYear(l) }));
  let layer: string | null = null;
  let note: FieldsAnswer['note'];
  if (opts.year !== undefined) layer = years.find((x) => x.y === opts.year)?.l ?? null;
  else layer = [...years].sort((a, b) => (b.y ?? -1) - (a.y ?? -1) || (a.l < b.l ? -1 : 1))[0]?.l ?? null;
  const b = area.bbox;
  const key = `${ftw.url}|${r.archive.version}|${r.archive.zoom}|${layer}|${b.min_lat},${b.min_lng},${b.max_lat},${b.max_lng}`;
  let fields: SignedField[] = [];
  if (layer !== null) {
    const hit = assembled.get(key);
    fields = hit ?? assembleFields(r.pieces, layer, r.archive.zoom, b).map((f) => ({ field_cid: fieldCid(f as unknown as Record<string, unknown>), ...f }));
    if (!hit) assembled.set(key, fields);
  }
  const found = fields.length;
  if (opts.minConfidence !== undefined) fields = fields.filter((f) => f.confidence !== null && f.confidence >= opts.minConfidence!);
  if (opts.keep) fields = fields.filter((f) => labelInside(f, opts.keep!));
  const max = opts.maxFields ?? FIELD_LIMITS.max_fields.default;
  const truncated = fields.length > max;
  if (truncated) fields = fields.slice(0, max);
  if (!r.inside_bounds) note = { code: 'outside_coverage', message: 'the box lies outside the bounds of the Fields of The World archive; nothing was read there' };
  else if (opts.year !== undefined && layer === null && r.layers.length > 0)
    note = { code: 'year_not_in_archive', message: `no layer for ${opts.year} in the tiles read (layers: ${r.layers.join(', ')})` };
  else if (found > 0 && fields.length === 0 && opts.minConfidence !== undefined)
    note = { code: 'below_min_confidence', message: `${found} fields in the box, none with confidence ≥ ${opts.minConfidence}` };
  else if (fields.length === 0) note = { code: 'no_fields_in_area', message: 'the archive holds no field polygon inside this box' };
  else if (truncated) note = { code: 'truncated', message: `more than ${max} fields in the box: the first ${max} by id are listed; ask for a smaller box or a larger max_fields` };
  return sign(ctx, area, fields, layer, r, truncated, note);
}

/** Whether the field's label point (the centroid of its largest exterior ring) passes `keep`. */
function labelInside(f: SignedField, keep: (lat: number, lng: number) => boolean): boolean {
  const [lng, lat] = labelPoint(f.geometry.type === 'Polygon' ? [f.geometry.coordinates] : f.geometry.coordinates);
  return keep(lat, lng);
}

function sign(
  ctx: ServiceContext,
  area: Omit<AreaBlock, 'aoi_cid' | 'area_km2'> & { area_km2: number },
  fields: SignedField[],
  layer: string | null,
  r: Extract<FieldRead, { status: 'ok' }>,
  truncated: boolean,
  note: FieldsAnswer['note'],
): FieldsAnswer {
  const src = ctx.registry.sources.get(FTW_SOURCE);
  const d = {
    source: FTW_SOURCE,
    archive_version: r.archive.version,
    layer,
    zoom: r.archive.zoom,
    clip: 'tile edges, then the box (Sutherland–Hodgman); parts joined across tile edges',
    area_method: 'geodesic on WGS 84 (GeographicLib, Karney 2013), hectares to 1 m²',
    confidence: 'upstream score 0–100 divided by 100',
    country: 'feature property, else Natural Earth 1:50m outline at the label point',
  };
  const derivation = { ...d, derivation_cid: derivationCid(d) };
  const aoi = fieldAreaCid(area.bbox);
  const centre = cellOf((area.bbox.min_lat + area.bbox.max_lat) / 2, (area.bbox.min_lng + area.bbox.max_lng) / 2);
  const receipt = issueReceipt(
    ctx,
    'field_boundaries',
    [centre],
    fields.map((f) => f.field_cid),
    {
      field: { aoi_cid: aoi, derivation_cid: derivation.derivation_cid },
      source_versions: { [FTW_SOURCE]: r.archive.version },
    },
  );
  return {
    area: { source: area.source, bbox: area.bbox, aoi_cid: aoi, area_km2: Math.round(area.area_km2 * 1000) / 1000, ...(area.place ? { place: area.place } : {}) },
    fields,
    truncated,
    ...(note ? { note } : {}),
    derivation,
    read: {
      zoom: r.archive.zoom,
      tiles_covering: r.tiles.covering,
      tiles_present: r.tiles.present,
      tiles_from_cache: r.tiles.from_cache,
      range_requests: r.stats.requests,
      bytes_read: r.stats.bytes,
      inside_archive_bounds: r.inside_bounds,
    },
    license: src?.license ?? FIELD_LICENSE,
    attribution: src?.attribution ?? 'Fields of The World',
    receipt,
  };
}

/** POST /v1/field_boundaries: exactly one of place or polygon_bbox. */
export async function fieldBoundaries(ctx: ServiceContext, req: FieldBoundariesRequest, opts: { deadline?: number } = {}): Promise<FieldsAnswer> {
  if ((req.place === undefined) === (req.polygon_bbox === undefined)) {
    throw invalidArgument(req.place === undefined ? 'place' : 'polygon_bbox', 'give exactly one of place (a name) or polygon_bbox {min_lat, min_lng, max_lat, max_lng}');
  }
  if (req.radius_m !== undefined && req.place === undefined) throw invalidArgument('radius_m', 'applies to place only (the square read around a place that is a point)');
  let area: Omit<AreaBlock, 'aoi_cid' | 'area_km2'>;
  if (req.polygon_bbox !== undefined) area = { source: 'polygon_bbox', bbox: checkBox(req.polygon_bbox, 'polygon_bbox') };
  else {
    const text = (req.place ?? '').trim();
    if (text === '') throw invalidArgument('place', 'expected a place name');
    const { box, place } = await placeArea(ctx, text, req.radius_m);
    area = { source: 'place', bbox: checkBox(box, 'place'), place };
  }
  const km2 = checkCap(area.bbox, req.polygon_bbox !== undefined ? 'polygon_bbox' : 'place');
  return fieldsInBox(ctx, { ...area, area_km2: km2 }, { deadline: opts.deadline, year: req.year, minConfidence: req.min_confidence, maxFields: req.max_fields });
}

/** What recall_polygon shows when it cannot add the fields (no connector, the cap, an upstream failure). */
export interface FieldsUnavailable {
  status: 'unavailable';
  reason: string;
  code: string;
}

/** recall_polygon's `include: ["ftw_fields"]`: the fields of its area's box, kept inside its polygon. */
export async function fieldsForRecallArea(ctx: ServiceContext, bbox: Box, opts: { deadline?: number; keep?: (lat: number, lng: number) => boolean }): Promise<FieldsAnswer | FieldsUnavailable> {
  try {
    const box = checkBox(bbox, 'polygon');
    const km2 = checkCap(box, 'polygon');
    return await fieldsInBox(ctx, { source: 'recall_polygon', bbox: box, area_km2: km2 }, { deadline: opts.deadline, keep: opts.keep });
  } catch (e) {
    if (e instanceof SvcError) return { status: 'unavailable', code: e.code, reason: e.message };
    throw e;
  }
}
