/**
 * The band_raster@1 recipe (docs/rasters.md): the bands it serves, its size cap, and the one
 * function that turns a window of an asset into grid bytes. band_raster and the rebuild of an
 * evicted artifact both go through `makeGrid`, so the same record always gives the same bytes.
 */
import type { PixelWindow } from '../../sources/cog/window.js';
import { PIXEL_VALID } from '../../sources/cog/window.js';
import type { ReadOptions, Sentinel2Raster } from '../../sources/sentinel2-raster.js';
import { encodeGrid } from './grid-format.js';
import type { Affine } from './geometry.js';

/** Bands band_raster serves (their native resolutions in metres). */
export const RASTER_BANDS = ['s2.B02', 's2.B03', 's2.B04', 's2.B08', 's2.B11', 's2.B12'] as const;
export type RasterBand = (typeof RASTER_BANDS)[number];
export const NATIVE_RESOLUTION_M: Readonly<Record<RasterBand, number>> = { 's2.B02': 10, 's2.B03': 10, 's2.B04': 10, 's2.B08': 10, 's2.B11': 20, 's2.B12': 20 };
/** The cap: pixels per side of one raster at native resolution (5.12 km at 10 m, 10.24 km at 20 m). */
export const MAX_PIXELS_PER_SIDE = 512;
/** Rasters one process reads at once: each holds a window and the blocks it came from (a few MB), and asks the upstream for up to 9 blocks. */
export const RASTERS_AT_ONCE = 4;

/** What band_raster@1 does to one window: DN × scale + offset, float32, NaN where there is no data. */
export interface GridRecipe {
  href: string;
  epsg: number;
  window: PixelWindow;
  geotransform: Affine;
  scale: number;
  offset: number;
  nodata: readonly number[];
}

/**
 * The reflectance of every pixel of `r.window` (DN × scale + offset in double precision, NaN where
 * there is no data; writers round to float32) and how many samples have data. band_cube reads
 * each of its slices through this too, so a slice and a raster of the same window agree.
 */
export async function readReflectance(s2: Sentinel2Raster, r: Omit<GridRecipe, 'geotransform'>, o: ReadOptions): Promise<{ values: Float64Array; valid: number }> {
  const read = await s2.readWindow(r.href, r.window, r.epsg, r.nodata, o);
  const values = new Float64Array(read.values.length);
  for (let i = 0; i < values.length; i++) values[i] = read.mask[i] === PIXEL_VALID ? read.values[i] * r.scale + r.offset : Number.NaN;
  return { values, valid: read.valid };
}

/** The grid bytes of `r` and how many samples have data; only the COG blocks covering the window are read. */
export async function makeGrid(s2: Sentinel2Raster, r: GridRecipe, o: ReadOptions): Promise<{ bytes: Uint8Array; valid: number }> {
  const { values, valid } = await readReflectance(s2, r, o);
  const bytes = encodeGrid({ width: r.window.width, height: r.window.height, epsg: r.epsg, geotransform: r.geotransform, values });
  return { bytes, valid };
}
