/**
 * What one reading means, in a few words, from the thresholds the algorithm catalogue states
 * (algorithms.json `output`: NDVI > 0.6 dense vegetation, MNDWI > 0 open water, NDSI > 0.4 snow,
 * the WHO 2021 guideline levels, the dNBR and SPI classes …). A band without a stated threshold
 * gets no interpretation: the answer then gives the value alone rather than invent one.
 */

type Reading = (v: number) => string | undefined;

/** WHO 2021 air-quality guideline levels (who_aqg_exceedance@1). */
export const WHO_AQG: Readonly<Record<string, number>> = { 'air.pm2_5': 15, 'air.nitrogen_dioxide': 25, 'air.ozone': 100 };

const who =
  (band: string): Reading =>
  (v) => {
    const r = v / WHO_AQG[band];
    return r > 1 ? `${r.toFixed(1)} times the WHO 2021 guideline level` : `${Math.round(r * 100)} % of the WHO 2021 guideline level`;
  };

/** dNBR severity classes (wildfire_burn_intensity_dnbr_finetune@1). */
export function dnbrClass(v: number): string {
  if (v < -0.25) return 'high post-fire regrowth';
  if (v < -0.1) return 'low post-fire regrowth';
  if (v < 0.1) return 'unburned';
  if (v < 0.27) return 'low burn severity';
  if (v < 0.44) return 'moderate-low burn severity';
  if (v < 0.66) return 'moderate-high burn severity';
  return 'high burn severity';
}

/** SPI classes (spi_meteorological_drought@1, McKee 1993). */
export function spiClass(v: number): string {
  if (v <= -2) return 'extreme drought';
  if (v <= -1.5) return 'severe drought';
  if (v <= -1) return 'moderate drought';
  if (v < 1) return 'near normal';
  return 'wetter than normal';
}

const READINGS: Record<string, Reading> = {
  'indices.ndvi': (v) => (v > 0.6 ? 'dense, healthy vegetation' : v > 0.2 ? 'sparse vegetation or crops' : v >= 0.1 ? 'very sparse vegetation' : 'bare ground, water or built-up'),
  'indices.evi': (v) => (v >= 0.4 ? 'dense canopy' : v >= 0.2 ? 'moderate vegetation' : 'little vegetation'),
  'indices.ndmi': (v) => (v < 0 ? 'low canopy water content (possible water stress)' : 'canopy water content not low'),
  'indices.ndwi': (v) => (v > 0 ? 'open water' : 'no open water'),
  'indices.mndwi': (v) => (v > 0 ? 'open water' : 'no open water'),
  'indices.ndsi': (v) => (v > 0.4 ? 'snow or ice cover' : 'no snow or ice'),
  'indices.ndbi': (v) => (v > 0 ? 'built-up or bare surface' : 'not built-up'),
  'indices.bsi': (v) => (v > 0.1 ? 'exposed soil' : 'soil mostly covered'),
  'indices.nbr': (v) => (v < 0.1 ? 'low: burnt, bare or sparse surface' : undefined),
  'indices.dnbr': dnbrClass,
  'indices.ndci': (v) => (v > 0.2 ? 'high chlorophyll (a likely bloom, if this is open water)' : v < 0 ? 'low chlorophyll (clear water, if this is open water)' : 'moderate chlorophyll'),
  'indices.turbidity_red': (v) => (v > 50 ? 'very turbid (a sediment plume, if this is open water)' : v < 5 ? 'clear water' : 'moderately turbid'),
  'precip.spi_3m': spiClass,
  'air.pm2_5': who('air.pm2_5'),
  'air.nitrogen_dioxide': who('air.nitrogen_dioxide'),
  'air.ozone': who('air.ozone'),
  'forest.lossyear': (v) => (v === 0 ? 'no tree-cover loss recorded since 2001' : `tree-cover loss recorded in ${v < 100 ? 2000 + v : v}`),
  'forest.treecover2000': (v) => (v >= 30 ? 'forest canopy in 2000' : 'little or no forest canopy in 2000'),
  'water.gsw_occurrence': (v) => (v >= 50 ? 'permanent water' : v > 0 ? 'water in some years or seasons' : 'no surface water seen since 1984'),
  'water.gsw_recurrence': (v) => (v >= 75 ? 'water returns nearly every year' : v > 0 ? 'water returns in some years' : undefined),
  'copdem30m.elevation_mean': (v) => (v < 0 ? 'below sea level (sea floor depth where offshore)' : undefined),
  's1.vv_db': (v) => (v < -15 ? 'very low radar backscatter: open water or a very smooth surface' : undefined),
  's1.vv_change_db': (v) => (v <= -3 ? 'a radar backscatter drop of 3 dB or more' : v >= 3 ? 'a radar backscatter rise of 3 dB or more' : 'little radar change'),
  'weather.relative_humidity_2m': (v) => (v >= 95 ? 'near saturation' : undefined),
};

/** A short reading of a scalar value of `band`, or undefined when the catalogue gives no threshold. */
export function interpret(band: string, value: number): string | undefined {
  return READINGS[band]?.(value);
}
