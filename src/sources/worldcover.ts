/**
 * ESA WorldCover 10 m 2021 v200 (source esa_worldcover): 3° × 3° COG tiles named by their
 * south-west corner, `v200/2021/map/ESA_WorldCover_10m_2021_v200_N45E015_Map.tif`. Tiles exist
 * only where there is land; a missing tile (open ocean) and the 0 nodata class are absences.
 */
import type { ConnectorFactory } from './contract.js';
import { pointSampleConnector } from './cog/point-connector.js';

/** Tile name part for the 3° tile holding (lat, lng): `N45E015`, `S03W060`. */
export function worldCoverTileName(lat: number, lng: number): string {
  const south = Math.floor(lat / 3) * 3;
  const west = Math.floor(lng / 3) * 3;
  const ns = `${south < 0 ? 'S' : 'N'}${String(Math.abs(south)).padStart(2, '0')}`;
  const ew = `${west < 0 ? 'W' : 'E'}${String(Math.abs(west)).padStart(3, '0')}`;
  return `${ns}${ew}`;
}

/** Connector for `landcover.esa_worldcover_2021`. */
export const worldCoverConnector: ConnectorFactory = (deps) =>
  pointSampleConnector(deps, {
    key: 'esa_worldcover',
    bands: ['landcover.esa_worldcover_2021'],
    history: true,
    version: 'v200',
    locate(req, base) {
      const { lat, lng } = req.center;
      if (lat < -60 || lat >= 84) return { absence: 'outside_coverage', detail: 'WorldCover 2021 spans 60°S to 84°N' };
      const name = `ESA_WorldCover_10m_2021_v200_${worldCoverTileName(lat, lng)}_Map.tif`;
      return { url: `${base}/v200/2021/map/${name}`, ref: name, captured_at: '2021-12-31T23:59:59Z' };
    },
    // Class 0 is the map's nodata; it is declared in the files as well.
    nodata: () => [0],
    missing: { absence: 'outside_coverage', detail: 'no WorldCover tile covers the cell (open ocean)' },
    nodataReason: 'outside_coverage',
  });
