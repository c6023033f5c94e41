/**
 * How a hunt ranks its hotspots (docs/hunt.md; docs/verification.md, "Hunt hotspots"), as a
 * verifier needs it: each hunt event ranks by
 * one primary band in one direction, and no two events share a primary band, so the signed band
 * of the hotspot facts alone names the direction their order must follow. The registry's hunt
 * event table is the source; this copy exists so that the ranking can be checked offline
 * (browser included), and a test pins it to the registry.
 */

export type HuntRank = 'desc' | 'asc' | 'abs_desc';

/** Event → its primary band and ranking direction (events with an algorithm only). */
export const HUNT_RANKING: Readonly<Record<string, { band: string; rank: HuntRank }>> = Object.freeze({
  algal_bloom: { band: 'indices.ndci', rank: 'desc' },
  deforestation: { band: 'indices.ndvi', rank: 'asc' },
  flood_extent: { band: 's1.vv_db', rank: 'asc' },
  wildfire: { band: 'indices.dnbr', rank: 'desc' },
  urban_heat_island: { band: 'lst.day_8day', rank: 'desc' },
  methane_plume: { band: 'indices.swir_b12_b11_ratio', rank: 'asc' },
  landslide: { band: 's1.vv_change_db', rank: 'abs_desc' },
  drought: { band: 'precip.spi_3m', rank: 'asc' },
  soil_salinity: { band: 'indices.salinity_si', rank: 'desc' },
  crop_stress: { band: 'indices.ndmi', rank: 'asc' },
  water_turbidity: { band: 'indices.turbidity_red', rank: 'desc' },
});

/** The direction hotspots ranked on `band` follow, or undefined when no event ranks on it. */
export function rankOfBand(band: string): HuntRank | undefined {
  for (const e of Object.values(HUNT_RANKING)) if (e.band === band) return e.rank;
  return undefined;
}

export interface Ranked {
  cell64: string;
  value: number;
}

const strength: Record<HuntRank, (v: number) => number> = {
  desc: (v) => v,
  asc: (v) => -v,
  abs_desc: (v) => Math.abs(v),
};

/** Sort comparator, best first: the stronger value, then (ties) the smaller cell64. */
export function compareRanked(a: Ranked, b: Ranked, direction: HuntRank): number {
  const s = strength[direction];
  return s(b.value) - s(a.value) || (a.cell64 < b.cell64 ? -1 : a.cell64 > b.cell64 ? 1 : 0);
}

/** Words for the direction, for the answer and its caveats. */
export function directionText(direction: HuntRank): string {
  return direction === 'desc' ? 'highest first' : direction === 'asc' ? 'lowest first' : 'largest magnitude first';
}
