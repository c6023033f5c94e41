/**
 * /v1/rice_ch4: rice-paddy methane by the IPCC 2019 Refinement, Vol. 4 Ch. 5.5, Tier 2.
 * A calculator, not an observation: area, season length and management come from the caller;
 * the only facts read are the land cover at the cell (when a location is given), which the
 * receipt signs so a reader can see whether the map agrees the field is cropland.
 */
import type { ServiceContext } from '../context/context.js';
import { round } from '../reads/common.js';
import { Evidence, parsePlaceOptional, type DerivedEnvelope, type DerivedOpts } from './evidence.js';
import type { PlaceInput } from './place.js';

const CH = 'IPCC (2019) 2019 Refinement to the 2006 IPCC Guidelines for National Greenhouse Gas Inventories, Vol. 4, Ch. 5 (Cropland), section 5.5';

/** Table 5.11: baseline EF for continuously flooded fields without organic amendment, global default. */
export const EF_C_GLOBAL = 1.19;

/** Table 5.12 (disaggregated case): SF_w, water regime during the cultivation period. */
export const SF_W = {
  continuously_flooded: 1.0,
  single_drainage: 0.71,
  multiple_drainage: 0.55,
  regular_rainfed: 0.54,
  drought_prone: 0.16,
  deep_water: 0.06,
  upland: 0,
} as const;

/** Table 5.13 (disaggregated case): SF_p, water regime in the pre-season before cultivation. */
export const SF_P = {
  non_flooded_lt_180d: 1.0,
  non_flooded_gt_180d: 0.89,
  flooded_gt_30d: 2.41,
  non_flooded_gt_365d: 0.59,
} as const;

/** Table 5.14: CFOA, conversion factor of each organic amendment relative to straw applied shortly before. */
export const CFOA = {
  straw_short: 1.0,
  straw_long: 0.19,
  compost: 0.17,
  farmyard_manure: 0.21,
  green_manure: 0.45,
} as const;

/** Eq. 5.3 exponent of the organic-amendment scaling factor. */
export const SF_O_EXPONENT = 0.59;

export type WaterRegime = keyof typeof SF_W;
export type PreSeason = keyof typeof SF_P;
export type Amendment = keyof typeof CFOA;

/**
 * A rice_ch4 request, as the schema admits it (types, ranges and table keys checked). No schema
 * defaults: every default applied here is stated in defaults_used.
 */
export interface RiceInput extends PlaceInput {
  area_ha: number;
  cultivation_days: number;
  water_regime?: WaterRegime;
  pre_season_water_regime?: PreSeason;
  organic_amendment?: AmendmentInput | AmendmentInput[];
  ef_c?: number;
}

export interface AmendmentInput {
  type: Amendment;
  rate_t_ha: number;
}

export interface RiceCalc {
  ef_c: number;
  sf_w: number;
  sf_p: number;
  sf_o: number;
  ef_kg_ch4_ha_d: number;
  kg_ch4_per_ha: number;
  kg_ch4: number;
  t_ch4: number;
  gg_ch4: number;
}

/** Eq. 5.1 for one sub-unit with Eq. 5.2 and 5.3: pure arithmetic, no defaults. */
export function riceCh4(p: { area_ha: number; days: number; ef_c: number; sf_w: number; sf_p: number; amendments: ReadonlyArray<{ rate_t_ha: number; cfoa: number }> }): RiceCalc {
  const sf_o = (1 + p.amendments.reduce((s, a) => s + a.rate_t_ha * a.cfoa, 0)) ** SF_O_EXPONENT;
  const ef = p.ef_c * p.sf_w * p.sf_p * sf_o;
  const kg = ef * p.days * p.area_ha;
  return {
    ef_c: p.ef_c,
    sf_w: p.sf_w,
    sf_p: p.sf_p,
    sf_o: round(sf_o, 12),
    ef_kg_ch4_ha_d: round(ef, 12),
    kg_ch4_per_ha: round(ef * p.days, 12),
    kg_ch4: round(kg, 12),
    t_ch4: round(kg / 1e3, 12),
    gg_ch4: round(kg * 1e-6, 12),
  };
}

/** The given table key, or the default, stated in defaults_used. */
function orDefault<T extends string>(v: T | undefined, field: string, table: Record<T, number>, def: T, defaults: RiceResult['defaults_used'], what: string, cite: string): T {
  if (v !== undefined) return v;
  defaults.push({ parameter: field, value: def, factor: table[def], source: `${cite} (default: ${what})` });
  return def;
}

function amendments(v: RiceInput['organic_amendment']): Array<{ type: Amendment; rate_t_ha: number; cfoa: number }> {
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : [v]).map((a) => ({ type: a.type, rate_t_ha: a.rate_t_ha, cfoa: CFOA[a.type] }));
}

export interface RiceResult extends DerivedEnvelope {
  kind: 'calculation';
  inputs: {
    area_ha: number;
    cultivation_days: number;
    water_regime: WaterRegime;
    pre_season_water_regime: PreSeason;
    organic_amendment: Array<{ type: Amendment; rate_t_ha: number; cfoa: number }>;
    ef_c: number;
  };
  defaults_used: Array<{ parameter: string; value: unknown; factor?: number; source: string }>;
  result: RiceCalc;
  landcover: { class: unknown; label: string | null; is_cropland: boolean | null; fact_cid: string | null } | null;
  formula: Record<string, string>;
  citation: string;
}

/** Seasonal CH4 of a rice field by IPCC 2019 Tier 2 Eq. 5.1 (caller-supplied inputs, every default stated). */
export async function riceCh4Op(ctx: ServiceContext, input: RiceInput, opts: DerivedOpts = {}): Promise<RiceResult> {
  const area = input.area_ha;
  const days = input.cultivation_days;
  const defaults: RiceResult['defaults_used'] = [];
  const water = orDefault(input.water_regime, 'water_regime', SF_W, 'continuously_flooded', defaults, 'continuously flooded, SF_w = 1.00', `${CH}, Table 5.12`);
  const pre = orDefault(
    input.pre_season_water_regime,
    'pre_season_water_regime',
    SF_P,
    'non_flooded_lt_180d',
    defaults,
    'non-flooded pre-season shorter than 180 days, SF_p = 1.00',
    `${CH}, Table 5.13`,
  );
  const amend = amendments(input.organic_amendment);
  if (amend.length === 0) defaults.push({ parameter: 'organic_amendment', value: [], factor: 1, source: `${CH}, Eq. 5.3 (default: no organic amendment, SF_o = 1)` });
  let efc = EF_C_GLOBAL;
  if (input.ef_c !== undefined) efc = input.ef_c;
  else defaults.push({ parameter: 'ef_c', value: EF_C_GLOBAL, source: `${CH}, Table 5.11 (global default baseline emission factor, kg CH4 ha⁻¹ d⁻¹)` });

  const place = await parsePlaceOptional(ctx, input, opts);
  const ev = new Evidence(ctx, 'rice_ch4', opts);
  let landcover: RiceResult['landcover'] = null;
  if (place) {
    const f = await ev.read(place.loc.cell64, 'landcover.esa_worldcover_2021');
    const labels = ctx.registry.bands.get('landcover.esa_worldcover_2021')?.classes ?? {};
    const cls = f && f.kind !== 'absence' ? f.value : null;
    landcover = { class: cls, label: cls === null ? null : (labels[String(cls)] ?? null), is_cropland: cls === null ? null : Number(cls) === 40, fact_cid: f?.fact_cid ?? null };
    if (landcover.is_cropland === false)
      ev.caveat(`The land cover at ${place.loc.cell64} is ${landcover.label ?? `class ${String(cls)}`} (ESA WorldCover 2021), not cropland: check that the location is the paddy.`);
    if (landcover.is_cropland === null) ev.caveat('No land-cover class at the cell: the map neither confirms nor contradicts cropland.');
  }
  ev.caveat("A calculation over caller-supplied inputs, not an observation: the receipt signs the land-cover fact read (if any), not the area, season or management, which are the caller's claims.");
  ev.caveat(
    'IPCC default factors carry wide uncertainty ranges (see the tables cited); prefer country-specific EF_c (Tier 2) or measurements (Tier 3) where they exist. Soil type and cultivar scaling (SF_s,r) are not applied (taken as 1).',
  );

  const result = riceCh4({ area_ha: area, days, ef_c: efc, sf_w: SF_W[water], sf_p: SF_P[pre], amendments: amend });
  const env = await ev.envelope(place, place?.loc.cell64);
  return {
    ...env,
    kind: 'calculation',
    inputs: { area_ha: area, cultivation_days: days, water_regime: water, pre_season_water_regime: pre, organic_amendment: amend, ef_c: efc },
    defaults_used: defaults,
    result,
    landcover,
    formula: {
      'Eq. 5.1': 'CH4_rice = Σ_i (EF_i × t_i × A_i × 10⁻⁶), Gg CH4 per season (EF in kg CH4 ha⁻¹ d⁻¹, t in days, A in ha)',
      'Eq. 5.2': 'EF_i = EF_c × SF_w × SF_p × SF_o (SF_s,r not applied)',
      'Eq. 5.3': `SF_o = (1 + Σ_i ROA_i × CFOA_i)^${SF_O_EXPONENT}, ROA in t ha⁻¹ (dry weight for straw, fresh weight for other amendments)`,
    },
    citation: `${CH}: Eq. 5.1-5.3, Tables 5.11-5.14.`,
  };
}
