/**
 * The large red-band COG the raster benches serve in place of a fixture asset: SIDE² pixels on the
 * fixture's UTM grid, shifted OFFSET pixels north-west, TILE² DEFLATE tiles (gdal_translate when
 * installed, else the in-test writer). A smooth field plus noise in the low bits, so DEFLATE
 * compresses it about as little as real reflectance.
 */
import { S2_GRID } from '../test/sources/fixtures/raster-scenes.js';
import { gdalAvailable, gdalTranslate, writeGeoTiff, type RasterSpec } from '../test/sources/fixtures/raster-tiff.js';

export const SIDE = 4096;
export const TILE = 1024;
/** Pixels the COG's origin lies north-west of the fixture grid's. */
export const OFFSET = 768;

export function redCog(): Uint8Array {
  const spec: RasterSpec = {
    width: SIDE,
    height: SIDE,
    type: 'u16',
    epsg: 32633,
    pixel: [10, 10],
    nodata: 0,
    origin: [S2_GRID.origin[0] - OFFSET * 10, S2_GRID.origin[1] + OFFSET * 10],
    values: (c, r) => {
      let h = (c * 374761393 + r * 668265263) | 0;
      h = Math.imul(h ^ (h >>> 13), 1274126177);
      return 1001 + ((c * 7 + r * 13) % 3000) + ((h >>> 20) & 255);
    },
  };
  if (gdalAvailable()) return gdalTranslate(spec, ['-of', 'COG', '-co', `BLOCKSIZE=${TILE}`, '-co', 'COMPRESS=DEFLATE', '-co', 'PREDICTOR=2']);
  return writeGeoTiff(spec, { block: TILE, compression: 8, predictor: 2 });
}
