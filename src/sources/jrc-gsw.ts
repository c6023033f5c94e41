/**
 * JRC Global Surface Water v1.4 (source jrc_gsw): 10° × 10° tiles per layer under
 * `downloads2021/{layer}/{layer}_{lng}_{lat}v1_4_2021.tif`, named by the tile's top-left
 * (north-west) corner, e.g. `occurrence_10E_50Nv1_4_2021.tif` covers 10–20°E, 40–50°N.
 * Values are percentages 0–100; 255 is no data; a missing tile is outside coverage.
 */
import type { ConnectorFactory } from './contract.js';
import { pointSampleConnector } from './cog/point-connector.js';

const LAYERS: Record<string, string> = { 'water.gsw_occurrence': 'occurrence', 'water.gsw_recurrence': 'recurrence' };

/** `10E_50N`-style tile id of the 10° tile holding (lat, lng), by its north-west corner. */
export function gswTileId(lat: number, lng: number): string {
  const west = Math.floor(lng / 10) * 10;
  // The tile whose northern edge is the first multiple of 10 strictly above the point.
  const north = Math.floor(lat / 10) * 10 + 10;
  return `${Math.abs(west)}${west < 0 ? 'W' : 'E'}_${Math.abs(north)}${north < 0 ? 'S' : 'N'}`;
}

/** Connector for the GSW occurrence and recurrence bands. */
export const jrcGswConnector: ConnectorFactory = (deps) =>
  pointSampleConnector(deps, {
    key: 'jrc_gsw',
    bands: Object.keys(LAYERS),
    history: true,
    version: 'v1.4 (2021)',
    locate(req, base) {
      const layer = LAYERS[req.band.key];
      const name = `${layer}_${gswTileId(req.center.lat, req.center.lng)}v1_4_2021.tif`;
      return { url: `${base}/downloads2021/${layer}/${name}`, ref: name, captured_at: '2021-12-31T23:59:59Z' };
    },
    nodata: () => [255],
    missing: { absence: 'outside_coverage', detail: 'no GSW tile covers the cell' },
    nodataReason: 'outside_coverage',
  });
