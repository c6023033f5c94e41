/**
 * The event threshold of each hunt algorithm, on the primary band: a ranked cell is a hotspot
 * only when its value flags the event (NDCI > 0.2 for a bloom, dNBR >= 0.27 for a burn), so a
 * region without the event answers "no hotspots" instead of its least-unremarkable cells.
 * Numbers come from each algorithm's registered `output` text. Some rules are relative to the
 * region (a heat island is hotter than its surroundings), computed over the samples with values.
 */

export interface Threshold {
  /** The rule in words, with the region statistic filled in when it is relative. */
  rule: string;
  flags(value: number): boolean;
}

type Maker = (values: readonly number[]) => Threshold;

const mean = (v: readonly number[]) => v.reduce((s, x) => s + x, 0) / v.length;
function quantile(v: readonly number[], q: number): number {
  const s = [...v].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
}
const r3 = (x: number) => Math.round(x * 1000) / 1000;

const fixed =
  (rule: string, flags: (v: number) => boolean): Maker =>
  () => ({ rule, flags });

const MAKERS: Readonly<Record<string, Maker>> = {
  algal_bloom: fixed('NDCI > 0.2 (likely bloom)', (v) => v > 0.2),
  water_turbidity: fixed('turbidity > 50 FNU (sediment plume)', (v) => v > 50),
  flood_extent: fixed('VV < -15 dB (open water outside permanent water)', (v) => v < -15),
  wildfire: fixed('dNBR >= 0.27 (burn of at least moderate-low severity)', (v) => v >= 0.27),
  drought: fixed('SPI-3 <= -1 (moderate drought or worse)', (v) => v <= -1),
  landslide: fixed('|dVV| >= 3 dB', (v) => Math.abs(v) >= 3),
  crop_stress: fixed('NDMI < 0 (water-stressed cropland)', (v) => v < 0),
  // Deforestation needs the 2020 NDVI to form dNDVI; without it, NDVI below 0.3 on a 2020 forest cell is what is flagged.
  deforestation: fixed('NDVI < 0.3 on a 2020 forest cell', (v) => v < 0.3),
  urban_heat_island: (values) => {
    const m = mean(values);
    return { rule: `LST more than 2 degC above the sampled mean (${r3(m)} degC)`, flags: (v) => v - m > 2 };
  },
  methane_plume: (values) => {
    const med = quantile(values, 0.5);
    return { rule: `B12/B11 ratio more than 5 % below the sampled median (${r3(med)})`, flags: (v) => med > 0 && v / med - 1 < -0.05 };
  },
  soil_salinity: (values) => {
    const p90 = quantile(values, 0.9);
    return { rule: `SI above the sampled 90th percentile (${r3(p90)})`, flags: (v) => v > p90 };
  },
};

/** The threshold of `event` over the region's sampled values (every event with an algorithm has one). */
export function thresholdFor(event: string, values: readonly number[]): Threshold {
  const make = MAKERS[event];
  if (!make) return { rule: 'none registered: every gated value ranks', flags: () => true };
  return values.length === 0 ? fixed('no values sampled', () => false)([]) : make(values);
}
