/**
 * A plot's verdict from its sampled cells (docs/eudr.md, "How a plot is decided"). Pure: the
 * cells' readings in, the numbers and the verdict out.
 *
 * - Forest at the cut-off: JRC GFC2020 class 1 (`jrc_gfc2020_v3`); or Hansen tree cover in 2000
 *   of at least 10 % with no loss recorded up to the cut-off year (`hansen_only`); `both` counts a
 *   cell as forest when either map says so, so no forest one map sees is missed.
 * - Loss after the cut-off: Hansen loss year after the cut-off's year (the loss year is annual:
 *   with a cut-off other than 31 December, a loss in the cut-off's own year counts too, since it
 *   may lie after it).
 * - Area: the forest share of the cells with a baseline reading times the plot's geodesic area;
 *   the 0.5 ha minimum mapping unit applies to that area, never to a count of cells times a cell
 *   area (sampled cells stand for equal shares of the plot, not for 100 m² each).
 * - insufficient_data when fewer than half of the sampled cells have a baseline reading, or
 *   fewer than half of the forest cells have a loss reading.
 */
import type { ForestBaseline, LossCell, PlotVerdict } from './types.js';

/** FAO's canopy threshold for forest, applied to Hansen tree cover 2000. */
export const HANSEN_FOREST_MIN_COVER = 10;
/** The minimum mapping unit, in hectares. */
export const MMU_HA = 0.5;

/** What was read at one sampled cell; a missing reading is undefined, never zero. */
export interface CellReading {
  cell: string;
  lat: number;
  lng: number;
  /** forest.jrc_gfc2020: 1 forest, 0 not. */
  jrc?: number;
  /** forest.treecover2000, percent. */
  treecover?: number;
  /** forest.lossyear: 0 no loss, 1..n = 2000 + n. */
  lossyear?: number;
  lossFactCid?: string;
}

export interface CutOff {
  year: number;
  /** True when the cut-off is 31 December of its year. */
  yearEnd: boolean;
}

export function cutOffOf(date: string): CutOff {
  const year = Number(date.slice(0, 4));
  return { year, yearEnd: date.slice(5, 10) === '12-31' };
}

/** Whether a Hansen loss year code falls after the cut-off (see the module note). */
export function lossAfter(code: number, cut: CutOff): boolean {
  if (!(code > 0)) return false;
  const year = 2000 + code;
  return cut.yearEnd ? year > cut.year : year >= cut.year;
}

/** Forest at the cut-off by the chosen baseline; undefined when the baseline cannot tell. */
export function forestAt(r: CellReading, baseline: ForestBaseline, cut: CutOff): boolean | undefined {
  const jrc = r.jrc === undefined ? undefined : r.jrc === 1;
  let hansen: boolean | undefined;
  if (r.treecover !== undefined) {
    // Loss recorded up to the cut-off means no forest there at the cut-off; an unknown loss year does not decide it.
    const lostBefore = r.lossyear !== undefined && r.lossyear > 0 && !lossAfter(r.lossyear, cut);
    hansen = r.treecover >= HANSEN_FOREST_MIN_COVER && !lostBefore;
  }
  if (baseline === 'jrc_gfc2020_v3') return jrc;
  if (baseline === 'hansen_only') return hansen;
  if (jrc === true || hansen === true) return true;
  return jrc === undefined || hansen === undefined ? undefined : false;
}

export interface PlotNumbers {
  cells_with_baseline: number;
  forest_fraction: number | null;
  forest_area_ha: number | null;
  loss_cells: LossCell[];
  loss_fraction: number | null;
  loss_area_ha: number | null;
  verdict: PlotVerdict;
  reason: string;
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;
const r4 = (x: number) => Math.round(x * 10000) / 10000;

/** The verdict of a plot of `areaHa` (null: a point plot) from its cells' readings. */
export function decidePlot(readings: readonly CellReading[], areaHa: number | null, baseline: ForestBaseline, cutOffDate: string): PlotNumbers {
  const cut = cutOffOf(cutOffDate);
  const sampled = readings.length;
  const judged = readings.map((r) => ({ r, forest: forestAt(r, baseline, cut) }));
  const withBaseline = judged.filter((j) => j.forest !== undefined);
  const forestCells = withBaseline.filter((j) => j.forest === true);
  const lossKnown = forestCells.filter((j) => j.r.lossyear !== undefined);
  const loss: LossCell[] = lossKnown
    .filter((j) => lossAfter(j.r.lossyear!, cut))
    .map((j) => ({ cell: j.r.cell, lat: j.r.lat, lng: j.r.lng, loss_year: 2000 + j.r.lossyear!, fact_cid: j.r.lossFactCid ?? '' }));
  const base = { cells_with_baseline: withBaseline.length, loss_cells: loss };
  const mapName = baseline === 'jrc_gfc2020_v3' ? 'JRC GFC2020' : baseline === 'hansen_only' ? 'Hansen tree cover 2000 (≥ 10 %)' : 'JRC GFC2020 or Hansen tree cover 2000';
  if (sampled === 0 || withBaseline.length * 2 < sampled) {
    return {
      ...base,
      forest_fraction: null,
      forest_area_ha: null,
      loss_fraction: null,
      loss_area_ha: null,
      verdict: 'insufficient_data',
      reason: `${withBaseline.length} of ${sampled} sampled cells have a ${mapName} reading (at least half are needed)`,
    };
  }
  const forestFraction = forestCells.length / withBaseline.length;
  const forestArea = areaHa === null ? null : forestFraction * areaHa;
  const lossFraction = forestCells.length > 0 ? (lossKnown.length > 0 ? loss.length / lossKnown.length : null) : null;
  const lossArea = lossFraction !== null && forestArea !== null ? lossFraction * forestArea : null;
  const numbers = {
    ...base,
    forest_fraction: r4(forestFraction),
    forest_area_ha: forestArea === null ? null : r4(forestArea),
    loss_fraction: lossFraction === null ? null : r4(lossFraction),
    loss_area_ha: lossArea === null ? null : r4(lossArea),
  };
  const share = `${forestCells.length} of ${withBaseline.length} cells with a reading are forest by ${mapName} at the cut-off ${cutOffDate}`;
  const noForest = areaHa === null ? forestCells.length === 0 : forestArea! < MMU_HA;
  if (noForest) {
    const why = areaHa === null ? `the point's cell is not forest` : `forest area ${r3(forestArea!)} ha (${r3(forestFraction)} of ${r3(areaHa)} ha) is under the ${MMU_HA} ha minimum mapping unit`;
    return { ...numbers, loss_cells: [], loss_fraction: null, loss_area_ha: null, verdict: 'no_forest_at_baseline', reason: `${share}; ${why}` };
  }
  if (lossKnown.length * 2 < forestCells.length) {
    return {
      ...numbers,
      verdict: 'insufficient_data',
      reason: `${share}, but only ${lossKnown.length} of the ${forestCells.length} forest cells have a Hansen loss-year reading (at least half are needed)`,
    };
  }
  const areaWords = forestArea === null ? '' : `; forest area ${r3(forestArea)} ha of ${r3(areaHa!)} ha`;
  if (loss.length > 0) {
    const years = [...new Set(loss.map((l) => l.loss_year))].sort().join(', ');
    const lossWords = lossArea === null ? '' : `, about ${r3(lossArea)} ha`;
    return {
      ...numbers,
      verdict: 'deforestation_detected',
      reason: `${share}${areaWords}; ${loss.length} of ${lossKnown.length} forest cells lost their cover after the cut-off (loss year ${years})${lossWords}`,
    };
  }
  return { ...numbers, verdict: 'deforestation_free', reason: `${share}${areaWords}; none of the ${lossKnown.length} forest cells with a loss reading lost cover after the cut-off` };
}
