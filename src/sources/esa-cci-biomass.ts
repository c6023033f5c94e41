/**
 * ESA CCI Biomass v6.0 above-ground biomass (source esa_cci_biomass) → `carbon.agb_t_per_ha`
 * (slow tempo, one map per year): 100 m uint16 GeoTIFFs in 10° × 10° tiles named by their
 * north-west corner (`N10E020` covers 0–10°N, 20–30°E), LZW-compressed and range-readable, at
 * `{year}/{TILE}_ESACCI-BIOMASS-L4-AGB-MERGED-100m-{year}-fv6.0.tif` under the source's URL.
 *
 * Maps exist for 2010 and 2015–2022. A slot of a mapped year reads that year's map; a slot after
 * the newest map reads the newest one, attributed to the slot asked (captured_at and the ref name
 * the map's year); a year between or before the maps is an `outside_coverage` absence. Tiles
 * exist only over land: a missing tile (404, open ocean) is an `outside_coverage` absence, as is
 * a pixel equal to the file's declared nodata. 0 t/ha is a real value (no woody biomass).
 */
import type { ConnectorFactory } from './contract.js';
import { annualMapFor, endOfYearIso } from './annual.js';
import { pointSampleConnector } from './cog/point-connector.js';

/** The years with a v6.0 map. */
export const BIOMASS_YEARS: readonly number[] = [2010, 2015, 2016, 2017, 2018, 2019, 2020, 2021, 2022];
const VERSION = 'fv6.0';

/** Tile name of the 10° tile holding (lat, lng), by its north-west corner: `N10E020`, `S10W060`. */
export function biomassTileName(lat: number, lng: number): string {
  const north = Math.floor(lat / 10) * 10 + 10;
  const west = Math.floor(lng / 10) * 10;
  return `${north < 0 ? 'S' : 'N'}${String(Math.abs(north)).padStart(2, '0')}${west < 0 ? 'W' : 'E'}${String(Math.abs(west)).padStart(3, '0')}`;
}

/** Connector for `carbon.agb_t_per_ha`. */
export const esaCciBiomassConnector: ConnectorFactory = (deps) =>
  pointSampleConnector(deps, {
    key: 'esa_cci_biomass',
    bands: ['carbon.agb_t_per_ha'],
    history: true,
    version: VERSION,
    locate(req, base) {
      const pick = annualMapFor(req.tslot, BIOMASS_YEARS);
      if ('absent' in pick) return { absence: 'outside_coverage', detail: `ESA CCI Biomass has ${pick.absent}` };
      const { lat, lng } = req.center;
      const name = `${biomassTileName(lat, lng)}_ESACCI-BIOMASS-L4-AGB-MERGED-100m-${pick.year}-${VERSION}.tif`;
      return { url: `${base}/${pick.year}/${name}`, ref: name, captured_at: endOfYearIso(pick.year), tslot: req.tslot };
    },
    missing: { absence: 'outside_coverage', detail: 'no ESA CCI Biomass tile covers the cell (open ocean)' },
    nodataReason: 'outside_coverage',
  });
