/**
 * Fixture rasters for EUDR statements where the truth is known (docs/eudr.md, "Tests"): a JRC
 * GFC2020 COG and Hansen treecover2000 / lossyear tiles at 0.0001° (about 7 × 11 m) over
 * 10.00–10.06°E, 49.98–50.02°N, split at 50°N into the two Hansen tiles `50N_010E` and
 * `60N_010E` as Hansen names them. Made by gdal_translate (or the in-test writer) and served by
 * the raster fixture server with HTTP Range, at the paths the connectors read.
 *
 * Plots (boxes [west, south, east, north]):
 * - cleared: all forest in 2020; its western half lost in 2022;
 * - untouched: all forest, no loss;
 * - field: never forest (tree cover 3 %);
 * - patch: a 9.5 ha field holding a 0.25 ha forest patch (under the 0.5 ha unit);
 * - straddle: forest across 50°N; the part north of 50°N (the other Hansen tile) lost in 2021;
 * - outside: east of the JRC map's extent (no baseline).
 */
import type { RasterSpec } from '../sources/fixtures/raster-tiff.js';
import { makeRaster } from '../sources/fixtures/raster-tiff.js';

export type BoxWSEN = [number, number, number, number];
export const PLOTS: Record<'cleared' | 'untouched' | 'field' | 'patch' | 'straddle' | 'outside', BoxWSEN> = {
  cleared: [10.002, 49.99, 10.008, 49.996],
  untouched: [10.012, 49.99, 10.018, 49.996],
  field: [10.022, 49.99, 10.028, 49.996],
  patch: [10.032, 49.99, 10.036, 49.993],
  straddle: [10.012, 49.997, 10.018, 50.003],
  outside: [10.052, 49.99, 10.056, 49.994],
};
const PATCH: BoxWSEN = [10.032, 49.99, 10.0324, 49.9908];
const CLEARED_WEST_OF = 10.005;

const PX = 0.0001;
const W = 10;
const JRC_EAST = 10.04;
const inside = (b: BoxWSEN, lng: number, lat: number) => lng >= b[0] && lng < b[2] && lat >= b[1] && lat < b[3];

/** What the maps say at (lng, lat). */
function truth(lng: number, lat: number): { forest: number; cover: number; loss: number } {
  if (inside(PLOTS.cleared, lng, lat)) return { forest: 1, cover: 80, loss: lng < CLEARED_WEST_OF ? 22 : 0 };
  if (inside(PLOTS.untouched, lng, lat)) return { forest: 1, cover: 85, loss: 0 };
  if (inside(PLOTS.field, lng, lat)) return { forest: 0, cover: 3, loss: 0 };
  if (inside(PATCH, lng, lat)) return { forest: 1, cover: 70, loss: 0 };
  if (inside(PLOTS.straddle, lng, lat)) return { forest: 1, cover: 75, loss: lat > 50 ? 21 : 0 };
  return { forest: 0, cover: 0, loss: 0 };
}

function grid(top: number, rows: number, cols: number, pick: (t: ReturnType<typeof truth>) => number): RasterSpec {
  return {
    width: cols,
    height: rows,
    type: 'u8',
    epsg: 4326,
    origin: [W, top],
    pixel: [PX, PX],
    values: (c, r) => pick(truth(W + (c + 0.5) * PX, top - (r + 0.5) * PX)),
  };
}

/** The fixture files by server path (under the raster fixture server's per-source prefixes). */
export function eudrFiles(): Map<string, Uint8Array> {
  const files = new Map<string, Uint8Array>();
  const cols = Math.round((JRC_EAST - W) / PX);
  files.set('/gfc2020/LATEST/single-cog/JRC_GFC2020_V3.tif', makeRaster({ ...grid(50.02, 400, cols, (t) => t.forest), nodata: 255 }));
  // Hansen tiles reach further east, so the "outside" plot has loss data but no JRC baseline.
  const hcols = 600;
  const hansen = (layer: string, tile: string, top: number, pick: (t: ReturnType<typeof truth>) => number) =>
    files.set(`/hansen/GFC-2024-v1.12/Hansen_GFC-2024-v1.12_${layer}_${tile}.tif`, makeRaster(grid(top, 200, hcols, pick), 'strips'));
  for (const [tile, top] of [
    ['50N_010E', 50.0],
    ['60N_010E', 50.02],
  ] as const) {
    hansen('treecover2000', tile, top, (t) => t.cover);
    hansen('lossyear', tile, top, (t) => t.loss);
  }
  return files;
}

/** A plot's GeoJSON polygon (outer ring counter-clockwise, closed). */
export function boxPolygon(b: BoxWSEN) {
  const [w, s, e, n] = b;
  return {
    type: 'Polygon',
    coordinates: [
      [
        [w, s],
        [e, s],
        [e, n],
        [w, n],
        [w, s],
      ],
    ],
  };
}
