/**
 * Algorithm outputs at one cell (`algorithms_for_question`, docs/ask.md, "Response"):
 * the registry's formula applied to the signed facts returned, for the algorithms whose inputs
 * are all at the cell. Algorithms that need an area (a regional percentile or mean), the 8
 * neighbours, or a second time are not evaluated here: the entry says what they need and which
 * call computes them. Every output names the fact_cids it was computed from.
 */
import type { AlgorithmEntry, Registry } from '../../registry/registry.js';
import type { ServedFact } from '../facts/facts-view.js';
import { dnbrClass, spiClass, WHO_AQG } from './interpret.js';

export interface AlgorithmOutput {
  value: number | boolean | string | Record<string, number>;
  unit?: string;
  verdict: string;
  fact_cids: string[];
}

export interface AlgorithmForQuestion {
  key: string;
  topic: string;
  formula: string;
  output?: AlgorithmOutput;
  /** Input bands with no usable fact at the cell. */
  missing_bands?: string[];
  /** Why the algorithm is not computed from one cell, when it is not. */
  needs?: string;
  /** A call that computes it (a shortcut of docs/shortcuts.md), when one exists. */
  computed_by?: string;
}

/** Reads of the facts at the cell: numbers and classes of primary facts, with their cids. */
interface Inputs {
  num(band: string): number | undefined;
  cid(band: string): string;
}

type Evaluator = (x: Inputs) => Omit<AlgorithmOutput, 'fact_cids'> & { used: string[] };

const r3 = (x: number) => Math.round(x * 1000) / 1000;
const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x));

/** An index read straight from its band, with the threshold its catalogue entry states. */
const index =
  (band: string, verdict: (v: number) => string): Evaluator =>
  (x) => {
    const v = x.num(band)!;
    return { value: r3(v), verdict: verdict(v), used: [band] };
  };

const EVALUATORS: Record<string, Evaluator> = {
  'ndvi@1': index('indices.ndvi', (v) =>
    v > 0.6 ? 'dense vegetation (> 0.6)' : v >= 0.2 ? 'sparse vegetation or crops (0.2 to 0.6)' : v < 0.1 ? 'bare, water or built-up (< 0.1)' : 'very sparse vegetation',
  ),
  'evi@1': index('indices.evi', (v) => (v >= 0.4 ? 'dense canopy (0.4 to 0.8)' : 'below the dense-canopy range')),
  'savi@1': index('indices.savi', (v) => (v > 0.5 ? 'well vegetated' : 'sparse cover, where SAVI corrects soil brightness')),
  'ndmi@1': index('indices.ndmi', (v) => (v < 0 ? 'low canopy water content (NDMI < 0)' : 'canopy water content not low')),
  'ndwi@1': index('indices.ndwi', (v) => (v > 0 ? 'open water (NDWI > 0)' : 'not open water')),
  'mndwi@1': index('indices.mndwi', (v) => (v > 0 ? 'open water (MNDWI > 0)' : 'not open water')),
  'ndbi@1': index('indices.ndbi', (v) => (v > 0 ? 'built-up or bare surface (NDBI > 0)' : 'not built-up')),
  'bsi@1': index('indices.bsi', (v) => (v > 0.1 ? 'exposed soil (BSI > 0.1)' : 'soil mostly covered')),
  'nbr@1': index('indices.nbr', (v) => (v < 0.1 ? 'low NBR: burnt, bare or sparse surface' : 'not low')),
  'ndsi_snow@1': (x) => {
    const v = x.num('indices.ndsi')!;
    return { value: v > 0.4, verdict: v > 0.4 ? `snow or ice (NDSI ${r3(v)} > 0.4)` : `no snow (NDSI ${r3(v)} ≤ 0.4)`, used: ['indices.ndsi'] };
  },
  'wildfire_burn_intensity_dnbr_finetune@1': (x) => {
    const v = x.num('indices.dnbr')!;
    return { value: r3(v), verdict: dnbrClass(v), used: ['indices.dnbr'] };
  },
  'spi_meteorological_drought@1': (x) => {
    const v = x.num('precip.spi_3m')!;
    return { value: r3(v), unit: 'z-score', verdict: spiClass(v), used: ['precip.spi_3m'] };
  },
  'who_aqg_exceedance@1': (x) => {
    const ratios: Record<string, number> = {};
    for (const [band, g] of Object.entries(WHO_AQG)) {
      const v = x.num(band);
      if (v !== undefined) ratios[band.replace('air.', '')] = r3(v / g);
    }
    const worst = Object.entries(ratios).sort((a, b) => b[1] - a[1])[0];
    return {
      value: ratios,
      unit: 'ratio to the WHO 2021 guideline',
      verdict: worst[1] > 1 ? `${worst[0]} exceeds its guideline (${worst[1]} times)` : 'all within the WHO 2021 guideline levels',
      used: Object.keys(WHO_AQG).filter((b) => x.num(b) !== undefined),
    };
  },
  'dew_point_magnus@1': (x) => {
    const t = x.num('weather.temperature_2m')!;
    const rh = x.num('weather.relative_humidity_2m')!;
    const a = 17.625;
    const b = 243.04;
    const g = Math.log(rh / 100) + (a * t) / (b + t);
    const td = (b * g) / (a - g);
    return {
      value: Math.round(td * 10) / 10,
      unit: 'degC',
      verdict: t - td < 2 ? 'near-saturated air: fog or dew likely' : `${Math.round((t - td) * 10) / 10} degrees below the air temperature`,
      used: ['weather.temperature_2m', 'weather.relative_humidity_2m'],
    };
  },
  'soc_stock_0_30@1': (x) => {
    const stock = x.num('soil.soc_0_30cm')! * x.num('soil.bdod_0_30cm')! * 30 * 0.1;
    return { value: Math.round(stock * 10) / 10, unit: 't C/ha', verdict: 'organic carbon stock of the top 30 cm (coarse fragments ignored)', used: ['soil.soc_0_30cm', 'soil.bdod_0_30cm'] };
  },
  'flood_extent_sar_threshold@1': (x) => {
    const vv = x.num('s1.vv_db')!;
    const occ = x.num('water.gsw_occurrence')!;
    if (occ >= 50) return { value: false, verdict: `permanent water (occurrence ${occ} % ≥ 50): excluded from flood extent`, used: ['s1.vv_db', 'water.gsw_occurrence'] };
    return { value: vv < -15, verdict: vv < -15 ? `flooded: VV ${r3(vv)} dB < -15 outside permanent water` : `not flooded: VV ${r3(vv)} dB ≥ -15`, used: ['s1.vv_db', 'water.gsw_occurrence'] };
  },
  'algal_bloom_chlorophyll_ndci@1': (x) => {
    const m = x.num('indices.mndwi')!;
    const n = x.num('indices.ndci')!;
    if (m <= 0) return { value: r3(n), verdict: 'not open water (MNDWI ≤ 0): NDCI not evaluated for blooms', used: ['indices.mndwi', 'indices.ndci'] };
    return { value: r3(n), verdict: n > 0.2 ? 'likely bloom (NDCI > 0.2 over open water)' : n < 0 ? 'clear water (NDCI < 0)' : 'no bloom signal', used: ['indices.ndci', 'indices.mndwi'] };
  },
  'water_turbidity_red_band@1': (x) => {
    const m = x.num('indices.mndwi')!;
    const t = x.num('indices.turbidity_red')!;
    if (m <= 0) return { value: r3(t), unit: 'FNU', verdict: 'not open water (MNDWI ≤ 0): turbidity not evaluated', used: ['indices.mndwi', 'indices.turbidity_red'] };
    return { value: r3(t), unit: 'FNU', verdict: t > 50 ? 'sediment plume (> 50 FNU)' : t < 5 ? 'clear water (< 5 FNU)' : 'moderately turbid', used: ['indices.turbidity_red', 'indices.mndwi'] };
  },
  'crop_stress_score@1': (x) => {
    const lc = x.num('landcover.esa_worldcover_2021')!;
    const ndvi = x.num('indices.ndvi')!;
    const ndmi = x.num('indices.ndmi')!;
    if (lc !== 40) return { value: 'not cropland', verdict: `WorldCover class ${lc} is not cropland (40): the score applies to cropland only`, used: ['landcover.esa_worldcover_2021'] };
    const s = 0.5 * (1 - clamp(ndvi, 0, 1)) + 0.5 * (1 - clamp((ndmi + 1) / 2, 0, 1));
    return {
      value: r3(s),
      verdict: s > 0.6 && ndmi < 0 ? 'water-stressed cropland (S > 0.6, NDMI < 0)' : 'no strong stress signal',
      used: ['indices.ndvi', 'indices.ndmi', 'landcover.esa_worldcover_2021'],
    };
  },
  'sar_forest_disturbance_vv_drop@1': (x) => {
    const d = x.num('s1.vv_change_db')!;
    const tc = x.num('forest.treecover2000')!;
    const hit = d <= -3 && tc >= 30;
    return {
      value: hit,
      verdict: hit ? `disturbed: VV dropped ${r3(d)} dB under ${tc} % former canopy` : tc < 30 ? `tree cover 2000 ${tc} % < 30: not a forest pixel` : `no 3 dB drop (dVV ${r3(d)} dB)`,
      used: ['s1.vv_change_db', 'forest.treecover2000'],
    };
  },
};

/** What an algorithm needs beyond one cell, and the shortcut (docs/shortcuts.md) that computes it. */
const BEYOND_CELL: Record<string, { needs: string; computed_by?: string }> = {
  'terrain_slope_3x3@1': { needs: 'the 3x3 elevation neighbourhood', computed_by: '/v1/terrain' },
  'terrain_ruggedness_3x3@1': { needs: 'the 3x3 elevation neighbourhood', computed_by: '/v1/terrain' },
  'deforestation_alert_ndvi_drop@1': { needs: 'the NDVI of the same season in 2020', computed_by: '/v1/deforestation_alert' },
  'rice_ch4_ipcc2019_tier2@1': { needs: "a paddy area and the season's flooding record", computed_by: '/v1/rice_ch4' },
  'urban_heat_island_lst_canopy@1': { needs: 'the mean daytime LST of vegetated cells sampled around (an area)' },
  'methane_plume_swir_anomaly@1': { needs: 'the median SWIR ratio over a sampled region (an area)' },
  'soil_salinity_index@1': { needs: 'the 90th percentile of the index over a sampled region (an area)' },
  'landslide_post_event_sar_dnn@1': { needs: 'the radar change of the 8 neighbour cells and the slope' },
  'embedding_diversity@1': { needs: 'embeddings of several sampled cells (an area: POST /v1/embedding_diversity computes it)' },
  'neighborhood_consistency@1': { needs: 'the embeddings of the 8 neighbour cells (POST /v1/neighborhood_consistency computes it)' },
  'embedding_centroid@1': { needs: "the embeddings of a region's cells (POST /v1/embedding_centroid computes it)" },
  'embedding_change_cosine@1': { needs: 'the embeddings of one cell in two years (the what-changed intent computes it)' },
  'embedding_cosine_similarity@1': { needs: 'a second cell (the similar-places intent ranks by it)' },
  'embedding_hamming_bin128@1': { needs: "a second cell's binary code (find_similar mode hamming)" },
  'eudr_deforestation_free@1': { needs: 'plot polygons and the 2020 baseline (POST /v1/eudr_dds)' },
  'precip_total_30d@1': { needs: '30 stored daily CHIRPS totals (POST /v1/trajectory, or /v1/backfill to fill them)' },
};

/** The inputs of served facts: primary numeric or class values by band. */
function inputsOf(facts: readonly ServedFact[]): Inputs {
  const by = new Map<string, ServedFact>();
  for (const f of facts) if (f.kind === 'primary' && typeof f.band === 'string') by.set(f.band, f);
  return {
    num: (b) => {
      const v = by.get(b)?.value;
      return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
    },
    cid: (b) => by.get(b)!.fact_cid,
  };
}

/** One catalogue entry for the question, evaluated at the cell when its inputs are there. */
export function algorithmForQuestion(a: AlgorithmEntry, facts: readonly ServedFact[], haveCell: boolean): AlgorithmForQuestion {
  const out: AlgorithmForQuestion = { key: a.key, topic: a.topic, formula: a.formula };
  const beyond = BEYOND_CELL[a.key];
  if (beyond) {
    out.needs = beyond.needs;
    if (beyond.computed_by) out.computed_by = beyond.computed_by;
    return out;
  }
  if (!haveCell) return out;
  const x = inputsOf(facts);
  const evaluator = EVALUATORS[a.key];
  // who_aqg_exceedance works with any of its pollutants; the others need every input.
  const required = a.key === 'who_aqg_exceedance@1' ? [] : a.bands;
  const missing = a.bands.filter((b) => x.num(b) === undefined);
  if (missing.length > 0 && (required.length > 0 || missing.length === a.bands.length)) {
    out.missing_bands = missing;
    return out;
  }
  if (!evaluator) return out;
  const r = evaluator(x);
  out.output = { value: r.value, ...(r.unit ? { unit: r.unit } : {}), verdict: r.verdict, fact_cids: r.used.map((b) => x.cid(b)) };
  return out;
}

/** The algorithms of the routed topics, each evaluated where it can be (order: the topics' own order). */
export function algorithmsFor(reg: Registry, topics: readonly string[], facts: readonly ServedFact[], haveCell: boolean): AlgorithmForQuestion[] {
  const seen = new Set<string>();
  const out: AlgorithmForQuestion[] = [];
  for (const t of topics) {
    for (const key of reg.topics.get(t)?.algorithms ?? []) {
      const a = reg.algorithms.get(key);
      if (!a || seen.has(key)) continue;
      seen.add(key);
      out.push(algorithmForQuestion(a, facts, haveCell));
    }
  }
  return out;
}
