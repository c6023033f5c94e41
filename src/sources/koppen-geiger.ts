/**
 * Köppen-Geiger climate classes 1991–2020 (source koppen_geiger) → `climate.koppen_geiger_1991_2020`
 * (static, categorical 1..30): the class of the 1 km map of Beck et al. (2023) at the pixel
 * holding the cell centre. The published map comes inside a zip archive, so the operator hosts
 * the 1 km GeoTIFF as a COG and names it in SVC_UPSTREAM_KOPPEN_GEIGER_URL (docs/sources.md);
 * until then the band is not wired (operator-cog.ts). 0 (sea) and the file's nodata are
 * `outside_coverage` absences; a value outside 1..30 is `source_format_mismatch`.
 */
import type { ConnectorFactory } from './contract.js';
import { operatorCogConnector } from './operator-cog.js';

/** Connector for `climate.koppen_geiger_1991_2020`. */
export const koppenGeigerConnector: ConnectorFactory = (deps) =>
  operatorCogConnector(deps, {
    key: 'koppen_geiger',
    bands: ['climate.koppen_geiger_1991_2020'],
    history: true,
    version: 'Beck et al. 2023 V2, 1991-2020, 1 km',
    capturedAt: '2020-12-31T23:59:59Z',
    nodata: () => [0],
    nodataReason: 'outside_coverage',
  });
