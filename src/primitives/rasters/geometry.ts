/**
 * Where a lat/lng box falls in a scene's grid (docs/rasters.md, "The window"): the canonical box
 * and its aoi_cid, the pixel window that covers it at native resolution, the window's
 * geotransform, and the service's own grid cells inside the box with the pixels each overlaps.
 */
import { cellOf, LAT_MAX, LNG_MAX } from '../../protocol/cell64.js';
import { anchorId } from '../../protocol/cid.js';
import { invalidArgument } from '../../protocol/errors.js';
import { projectPoint } from '../../sources/cog/georef.js';
import type { PixelWindow } from '../../sources/cog/window.js';
import type { LatLngBox } from '../../sources/sentinel2-raster.js';

export type { LatLngBox } from '../../sources/sentinel2-raster.js';
export type Affine = readonly [number, number, number, number, number, number];

/** What every answer carrying a gridded artifact says of it: its derivation, where to fetch it, how it is georeferenced. */
export interface GriddedArtifact {
  derivation_cid: string;
  /** The derivation record as an svc:fact: handle (POST /v1/memory_token/resolve, /v1/fetch). */
  record: string;
  artifact_cid: string;
  artifact_url: string;
  media_type: string;
  bytes: number;
  width: number;
  height: number;
  epsg: number;
  geotransform: Affine;
  pixel_size_m: number;
}

/** Decimals a box coordinate keeps (1e-7 degrees, about 1 cm): the canonical box. */
export const BOX_DECIMALS = 7;
/** Points per box edge projected into the grid to find the window (a UTM image of a lat/lng box has curved edges). */
const EDGE_POINTS = 17;
/** Cells listed as anchors at most (docs/rasters.md, "Cell anchors"). */
export const MAX_ANCHORS = 256;

const q = (x: number) => Math.floor(x * 10 ** BOX_DECIMALS + 0.5) / 10 ** BOX_DECIMALS;

/** The box as signed and hashed: each coordinate rounded half up to BOX_DECIMALS decimals; refuses an empty or inverted box. */
export function canonicalBox(b: LatLngBox): LatLngBox {
  for (const k of ['min_lat', 'max_lat'] as const) if (!Number.isFinite(b[k]) || Math.abs(b[k]) > 90) throw invalidArgument(`bbox.${k}`, `${b[k]} is outside [-90, 90]`);
  for (const k of ['min_lng', 'max_lng'] as const) if (!Number.isFinite(b[k]) || Math.abs(b[k]) > 180) throw invalidArgument(`bbox.${k}`, `${b[k]} is outside [-180, 180]`);
  const c = { min_lat: q(b.min_lat), min_lng: q(b.min_lng), max_lat: q(b.max_lat), max_lng: q(b.max_lng) };
  if (!(c.min_lat < c.max_lat)) throw invalidArgument('bbox.max_lat', `must be above min_lat (after rounding to ${BOX_DECIMALS} decimals)`);
  if (!(c.min_lng < c.max_lng)) throw invalidArgument('bbox.max_lng', `must be east of min_lng (after rounding to ${BOX_DECIMALS} decimals; a box across the antimeridian is two requests)`);
  return c;
}

/**
 * aoi_cid: the 26-character anchor of the canonical box, `anchorId({kind: "bbox", min_lat,
 * min_lng, max_lat, max_lng})`: the same anchor field_boundaries gives a box, so one area has one
 * aoi_cid across primitives.
 */
export function aoiCid(box: LatLngBox): string {
  return anchorId({ kind: 'bbox', min_lat: box.min_lat, min_lng: box.min_lng, max_lat: box.max_lat, max_lng: box.max_lng });
}

/** Fractional (col, row) of a WGS 84 point in a north-up grid. */
function pixelAt(epsg: number, t: Affine, lat: number, lng: number): [number, number] {
  const [x, y] = projectPoint(epsg, lat, lng);
  return [(x - t[2]) / t[0], (y - t[5]) / t[4]];
}

/** Points along the box's edges (corners included). */
function boxOutline(b: LatLngBox): Array<[number, number]> {
  const pts: Array<[number, number]> = [];
  for (let i = 0; i < EDGE_POINTS; i++) {
    const f = i / (EDGE_POINTS - 1);
    const lat = b.min_lat + f * (b.max_lat - b.min_lat);
    const lng = b.min_lng + f * (b.max_lng - b.min_lng);
    pts.push([b.min_lat, lng], [b.max_lat, lng], [lat, b.min_lng], [lat, b.max_lng]);
  }
  return pts;
}

/** The pixels of `points` projected into the grid, as the smallest window holding every pixel they touch. */
function windowOf(points: Array<[number, number]>, epsg: number, t: Affine): PixelWindow {
  let c0 = Infinity;
  let r0 = Infinity;
  let c1 = -Infinity;
  let r1 = -Infinity;
  for (const [lat, lng] of points) {
    const [c, r] = pixelAt(epsg, t, lat, lng);
    c0 = Math.min(c0, c);
    r0 = Math.min(r0, r);
    c1 = Math.max(c1, c);
    r1 = Math.max(r1, r);
  }
  const col0 = Math.floor(c0);
  const row0 = Math.floor(r0);
  return { col0, row0, width: Math.max(1, Math.ceil(c1) - col0), height: Math.max(1, Math.ceil(r1) - row0) };
}

/**
 * The window of a north-up grid (`t` its affine, pixel corner at 0, 0) covering the box: every
 * pixel that any point of the box's outline falls in, so the window holds the whole box
 * (projected, a lat/lng box is a slightly curved quadrilateral; the window is its envelope).
 */
export function windowOfBox(box: LatLngBox, epsg: number, t: Affine): PixelWindow {
  return windowOf(boxOutline(box), epsg, t);
}

/** The GDAL geotransform of window `w` of a north-up grid. */
export function windowGeotransform(t: Affine, w: { col0: number; row0: number }): Affine {
  return [t[2] + t[0] * w.col0, t[0], 0, t[5] + t[4] * w.row0, 0, t[4]];
}

/** A grid cell inside the box and the pixels of the artifact it overlaps. */
export interface CellAnchor {
  cell: string;
  window: PixelWindow;
}

export interface CellAnchors {
  /** Cells of the service's grid whose centres lie inside the box. */
  cells_in_box: number;
  /** Every `stride`-th cell along latitude and longitude, at most MAX_ANCHORS. */
  stride: { lat: number; lng: number };
  listed: CellAnchor[];
  truncated: boolean;
}

/**
 * The cells of the service's grid inside the box (their centres in it) and, for each listed
 * one, the window of the artifact (`gt` its geotransform, width × height) its footprint (centre
 * ± half a pitch) overlaps, clipped to the artifact. Computed only: nothing is read or written.
 * Past MAX_ANCHORS, an evenly strided subset is listed.
 */
export function cellAnchors(box: LatLngBox, epsg: number, gt: Affine, width: number, height: number): CellAnchors {
  const latLo = Math.ceil(((box.min_lat + 90) / 180) * LAT_MAX);
  const latHi = Math.floor(((box.max_lat + 90) / 180) * LAT_MAX);
  const lngLo = Math.ceil(((box.min_lng + 180) / 360) * LNG_MAX);
  const lngHi = Math.floor(((box.max_lng + 180) / 360) * LNG_MAX);
  const nLat = Math.max(0, latHi - latLo + 1);
  const nLng = Math.max(0, lngHi - lngLo + 1);
  const side = Math.floor(Math.sqrt(MAX_ANCHORS));
  const stride = { lat: Math.max(1, Math.ceil(nLat / side)), lng: Math.max(1, Math.ceil(nLng / side)) };
  const t: Affine = [gt[1], gt[2], gt[0], gt[4], gt[5], gt[3]];
  const hLat = 90 / LAT_MAX;
  const hLng = 180 / LNG_MAX;
  const listed: CellAnchor[] = [];
  // From the middle of each stride, so the listed cells spread over the box evenly.
  for (let la = latHi - Math.floor(stride.lat / 2); la >= latLo && listed.length < MAX_ANCHORS; la -= stride.lat) {
    for (let ln = lngLo + Math.floor(stride.lng / 2); ln <= lngHi && listed.length < MAX_ANCHORS; ln += stride.lng) {
      const lat = (la / LAT_MAX) * 180 - 90;
      const lng = (ln / LNG_MAX) * 360 - 180;
      const w = windowOf(
        [
          [lat - hLat, lng - hLng],
          [lat - hLat, lng + hLng],
          [lat + hLat, lng - hLng],
          [lat + hLat, lng + hLng],
        ],
        epsg,
        t,
      );
      const c0 = Math.max(0, w.col0);
      const r0 = Math.max(0, w.row0);
      const c1 = Math.min(width, w.col0 + w.width);
      const r1 = Math.min(height, w.row0 + w.height);
      if (c0 >= c1 || r0 >= r1) continue;
      listed.push({ cell: cellOf(lat, lng), window: { col0: c0, row0: r0, width: c1 - c0, height: r1 - r0 } });
    }
  }
  const total = nLat * nLng;
  return { cells_in_box: total, stride, listed, truncated: listed.length < total };
}
