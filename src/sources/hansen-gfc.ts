/**
 * Hansen Global Forest Change 2000–2024 v1.12 (source hansen_gfc): 10° × 10° GeoTIFF tiles per
 * layer, `GFC-2024-v1.12/Hansen_GFC-2024-v1.12_{layer}_{lat}_{lng}.tif`, named by the tile's
 * top-left corner (`_50N_010E` covers 40–50°N, 10–20°E). 0 is a real value in every layer
 * (no tree cover, no loss, no gain); only a missing tile is an absence. The published files
 * are LZW strips rather than COGs: the reader range-reads the one strip holding the pixel.
 */
import type { ConnectorFactory } from './contract.js';
import { pointSampleConnector } from './cog/point-connector.js';

const VERSION = 'GFC-2024-v1.12';
const LAYERS: Record<string, string> = { 'forest.treecover2000': 'treecover2000', 'forest.lossyear': 'lossyear', 'forest.gain': 'gain' };

/** `50N_010E`-style tile id of the 10° tile holding (lat, lng), by its top-left corner. */
export function hansenTileId(lat: number, lng: number): string {
  const north = Math.floor(lat / 10) * 10 + 10;
  const west = Math.floor(lng / 10) * 10;
  return `${String(Math.abs(north)).padStart(2, '0')}${north < 0 ? 'S' : 'N'}_${String(Math.abs(west)).padStart(3, '0')}${west < 0 ? 'W' : 'E'}`;
}

/** Connector for treecover2000, lossyear and gain. */
export const hansenGfcConnector: ConnectorFactory = (deps) =>
  pointSampleConnector(deps, {
    key: 'hansen_gfc',
    bands: Object.keys(LAYERS),
    history: true,
    version: VERSION,
    locate(req, base) {
      const { lat, lng } = req.center;
      // The tile grid spans 80°N to 60°S (no forest data beyond).
      if (lat >= 80 || lat < -60) return { absence: 'outside_coverage', detail: 'Hansen GFC tiles span 80°N to 60°S' };
      const name = `Hansen_${VERSION}_${LAYERS[req.band.key]}_${hansenTileId(lat, lng)}.tif`;
      return { url: `${base}/${VERSION}/${name}`, ref: name, captured_at: '2024-12-31T23:59:59Z' };
    },
    missing: { absence: 'outside_coverage', detail: 'no Hansen GFC tile covers the cell' },
    nodataReason: 'outside_coverage',
  });
