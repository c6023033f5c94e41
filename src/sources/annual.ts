/**
 * Annual maps served on the slow tempo (365-day tslots): which calendar year a slot stands for,
 * and which published map answers it. Shared by the connectors of yearly products (ESA CCI
 * Biomass, WorldPop).
 *
 * A slow slot is 365 days long, so its start drifts a day every four years against 1 January;
 * its midpoint stays in June or July for every year from 1970 to beyond 2100, so the year of
 * the midpoint names the slot's year without ambiguity.
 */
import { TEMPO_UNIT_S } from '../protocol/tslot.js';

const SLOW_S = TEMPO_UNIT_S.slow;

/** The calendar year (UTC) a slow tslot stands for: the year of its midpoint. */
export function yearOfSlowTslot(tslot: number): number {
  return new Date((tslot * SLOW_S + SLOW_S / 2) * 1000).getUTCFullYear();
}

/** The slow tslot standing for calendar year `year` (the inverse of yearOfSlowTslot). */
export function slowTslotOfYear(year: number): number {
  const first = Math.floor(Date.UTC(year, 0, 1) / 1000 / SLOW_S);
  return yearOfSlowTslot(first) === year ? first : first + 1;
}

/** Which map answers a slot: a published year, or why none does. */
export type AnnualPick = { year: number /** The slot is after the newest map, which answers it (captured_at says its year). */; newest: boolean } | { absent: string };

/**
 * The map for slow `tslot` among the published `years` (ascending): the slot's own year when a
 * map exists for it; the newest map for a slot after the newest year (a map not yet published
 * is not a hole in the data: the latest estimate stands, attributed to the slot asked, as the
 * MODIS present slot does); nothing for a year between or before the published ones.
 */
export function annualMapFor(tslot: number, years: readonly number[]): AnnualPick {
  const year = yearOfSlowTslot(tslot);
  const last = years[years.length - 1]!;
  if (years.includes(year)) return { year, newest: false };
  if (year > last) return { year: last, newest: true };
  return { absent: `no map for ${year} (maps exist for ${describeYears(years)})` };
}

/** `2010, 2015-2022` for [2010, 2015, 2016, ..., 2022]. */
export function describeYears(years: readonly number[]): string {
  const runs: string[] = [];
  for (let i = 0; i < years.length; ) {
    let j = i;
    while (j + 1 < years.length && years[j + 1] === years[j]! + 1) j++;
    runs.push(j > i ? `${years[i]}-${years[j]}` : String(years[i]));
    i = j + 1;
  }
  return runs.join(', ');
}

/** The last second of `year` in ISO form: the captured_at of an annual map. */
export function endOfYearIso(year: number): string {
  return `${year}-12-31T23:59:59Z`;
}
