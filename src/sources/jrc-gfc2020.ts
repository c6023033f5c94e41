/**
 * JRC Global Forest Cover 2020 V3 (source jrc_gfc2020), the EUDR reference map. Layout chosen:
 * the single global 10 m COG at `LATEST/single-cog/JRC_GFC2020_V3.tif` (EPSG:4326). A COG that
 * size lists millions of tiles, so its tile offset arrays do not fit the first range read; the
 * reader then range-reads just the two array entries of the pixel's tile. 1 = forest on
 * 31 December 2020, 0 = not forest; the file's nodata (and 255) is outside coverage.
 */
import type { ConnectorFactory } from './contract.js';
import { pointSampleConnector } from './cog/point-connector.js';

/** Path of the global COG under the source's base URL. */
export const GFC2020_PATH = 'LATEST/single-cog/JRC_GFC2020_V3.tif';

/** Connector for `forest.jrc_gfc2020`. */
export const jrcGfc2020Connector: ConnectorFactory = (deps) =>
  pointSampleConnector(deps, {
    key: 'jrc_gfc2020',
    bands: ['forest.jrc_gfc2020'],
    history: true,
    version: 'V3',
    locate(_req, base) {
      return { url: `${base}/${GFC2020_PATH}`, ref: 'JRC_GFC2020_V3.tif', captured_at: '2020-12-31T23:59:59Z' };
    },
    nodata: () => [255],
    // A single global file that is missing is a broken upstream, not an ocean.
    missing: { skip: 'the global GFC2020 COG is not at its published path' },
    nodataReason: 'outside_coverage',
  });
