/**
 * Gate bands of the hunt algorithms: a second band read beside the primary that says whether a cell
 * can carry the event at all (a bloom needs open water, a flood must not be permanent water). A
 * gate only admits or drops a cell; it never contributes to the ranking, which uses the primary
 * band alone (docs/hunt.md, "How it works"). Rules follow each algorithm's registered formula.
 */

export interface Gate {
  band: string;
  /** The rule in words, as the answer reports it. */
  rule: string;
  test(value: number): boolean;
}

/** Land-cover classes that cannot be a surface heat island hotspot: canopy and water (ESA WorldCover). */
const UHI_EXCLUDED = new Set([10, 80, 90, 95]);

const GATES: Readonly<Record<string, Gate>> = {
  algal_bloom: { band: 'indices.mndwi', rule: 'open water: MNDWI > 0', test: (v) => v > 0 },
  water_turbidity: { band: 'indices.mndwi', rule: 'open water: MNDWI > 0', test: (v) => v > 0 },
  flood_extent: { band: 'water.gsw_occurrence', rule: 'not permanent water: GSW occurrence < 50 %', test: (v) => v < 50 },
  urban_heat_island: {
    band: 'landcover.esa_worldcover_2021',
    rule: 'not canopy or water: WorldCover class not in {10 tree cover, 80 water, 90 wetland, 95 mangroves}',
    test: (v) => !UHI_EXCLUDED.has(v),
  },
  deforestation: { band: 'forest.jrc_gfc2020', rule: 'forest in 2020: JRC GFC2020 class = 1', test: (v) => v === 1 },
  crop_stress: { band: 'landcover.esa_worldcover_2021', rule: 'cropland: WorldCover class = 40', test: (v) => v === 40 },
  soil_salinity: { band: 'indices.ndvi', rule: 'sparse vegetation: NDVI < 0.2', test: (v) => v < 0.2 },
};

/** The gate of an event; events whose formula names no admitting band (wildfire, methane, drought, landslide) have none. */
export function gateFor(event: string): Gate | undefined {
  return GATES[event];
}

export type GateResult =
  | { band: string; rule: string; status: 'pass' | 'fail'; value: number; fact_cid: string }
  | { band: string; rule: string; status: 'unknown'; reason: string; fact_cid?: string };
