/**
 * Open-Meteo flood API (GloFAS v4, 0.05 degrees, 1984 to the 7-month forecast) → river discharge.
 * The API answers for the largest river inside about 5 km of the point asked (GloFAS routes
 * water on a 0.05 degree river network), not for the 10 m cell itself: a cell on a small stream
 * next to a large river reads the large river.
 *
 * - `river.discharge` (m³/s, fast: one tslot = one UTC day): `daily=river_discharge` for that
 *   day (`start_date=end_date`), the seamless GloFAS v4 series (consolidated reanalysis, then the
 *   forecast; today's value is forecast day 0). A tslot after today is refused (a forecast is not
 *   signed as the present). A span of days is one request (`fetchRange`, used by backfill).
 * - `river.discharge_mean_1991_2020` and `river.discharge_max_1991_2020` (m³/s, static): the mean
 *   and the largest of the 10 958 daily values 1991-01-01..2020-12-31 at the same river point, from
 *   one request that both bands share. The API's own `river_discharge_mean` / `_max` are not used:
 *   they are statistics over the forecast's 50 ensemble members, published for forecast days only.
 *
 * A null discharge is a signed absence `outside_coverage` (no GloFAS river within reach of the
 * point); a discharge of 0 is a real value (a dry channel). Normals need at least 90 % of the days.
 */
import { cellCenter } from '../protocol/cell64.js';
import type { BandEntry } from '../registry/registry.js';
import type { MaterializeOutcome, MaterializeRequest, ConnectorDeps, Provenance } from './contract.js';
import {
  arrayAt,
  coord,
  dayOfTslot,
  failureOutcome,
  FormatMismatch,
  measurementAt,
  objectAt,
  openMeteoRefusal,
  refOf,
  roundTo,
  SingleFlight,
  stringAt,
  unitConverter,
  type RangeMaterializer,
  type RangeOptions,
  type RangeStep,
} from './json-helpers.js';
import { withOpenMeteoKey } from './open-meteo-key.js';

export const FLOOD_SOURCE = 'open_meteo_flood';
const SOURCE = FLOOD_SOURCE;
const VERSION = 'glofas-v4-seamless';
const VARIABLE = 'river_discharge';
const DAY_MS = 86_400_000;
/** First day of the GloFAS v4 reanalysis. */
export const FLOOD_FIRST_DAY = '1984-01-01';
export const DAILY_BAND = 'river.discharge';
/** Static normals: band → statistic over the daily values of the normal period. */
export const NORMAL_BANDS: Readonly<Record<string, 'mean' | 'max'>> = {
  'river.discharge_mean_1991_2020': 'mean',
  'river.discharge_max_1991_2020': 'max',
};
export const NORMAL_PERIOD = { start: '1991-01-01', end: '2020-12-31' } as const;
/** Share of the period's days that must have a value for a normal. */
const NORMAL_MIN_SHARE = 0.9;

/** One variable's daily series as the API returns it. */
interface DailyDischarge {
  url: string;
  time: string[];
  values: unknown[];
  unit: string;
}

function parseDischarge(data: unknown, url: string): DailyDischarge {
  const body = objectAt(data, 'body');
  const daily = objectAt(body.daily, 'daily');
  const time = arrayAt(daily.time, 'daily.time').map((t, i) => stringAt(t, `daily.time[${i}]`));
  const values = arrayAt(daily[VARIABLE], `daily.${VARIABLE}`);
  if (values.length !== time.length) throw new FormatMismatch(`daily.${VARIABLE} has ${values.length} values for ${time.length} days`);
  const unit = stringAt(objectAt(body.daily_units, 'daily_units')[VARIABLE], `daily_units.${VARIABLE}`);
  return { url, time, values, unit };
}

function converter(s: DailyDischarge, band: BandEntry): (v: number) => number {
  const convert = unitConverter(s.unit, band.unit);
  if (!convert) throw new FormatMismatch(`daily_units.${VARIABLE} is ${JSON.stringify(s.unit)}, not convertible to ${band.unit}`);
  return convert;
}

/** The outcome of `river.discharge` for one day out of a parsed series. */
function dayOutcome(band: BandEntry, s: DailyDischarge, tslot: number): MaterializeOutcome {
  const day = dayOfTslot(tslot);
  const provenance: Provenance = { source: SOURCE, ref: refOf(s.url), captured_at: `${day}T00:00:00Z`, version: VERSION };
  try {
    const i = s.time.indexOf(day);
    if (i < 0) throw new FormatMismatch(`daily.time lacks ${day}`);
    const raw = measurementAt(s.values[i], `daily.${VARIABLE}[${i}]`);
    if (raw === null) {
      return {
        status: 'absence',
        reason: 'outside_coverage',
        provenance,
        fn: band.function,
        tslot,
        detail: `GloFAS has no river within about 5 km of this point (river_discharge is null for ${day})`,
      };
    }
    return {
      status: 'value',
      value: roundTo(converter(s, band)(raw), 3),
      unit: band.unit,
      provenance,
      fn: band.function,
      tslot,
      args: { variable: VARIABLE, day, upstream_unit: s.unit, footprint: 'largest GloFAS river within about 5 km' },
    };
  } catch (e) {
    return failureOutcome(SOURCE, e);
  }
}

/** The outcome of a normal band out of the 1991-2020 series. */
function normalOutcome(band: BandEntry, s: DailyDischarge): MaterializeOutcome {
  const stat = NORMAL_BANDS[band.key];
  const provenance: Provenance = { source: SOURCE, ref: refOf(s.url), version: VERSION };
  const convert = converter(s, band);
  const expected = Math.round((Date.parse(`${NORMAL_PERIOD.end}T00:00:00Z`) - Date.parse(`${NORMAL_PERIOD.start}T00:00:00Z`)) / DAY_MS) + 1;
  if (s.time.length !== expected || s.time[0] !== NORMAL_PERIOD.start || s.time.at(-1) !== NORMAL_PERIOD.end) {
    throw new FormatMismatch(`daily.time spans ${s.time[0]}..${s.time.at(-1)} (${s.time.length} days), not ${NORMAL_PERIOD.start}..${NORMAL_PERIOD.end} (${expected})`);
  }
  let n = 0;
  let sum = 0;
  let max = -Infinity;
  let maxDay = '';
  s.values.forEach((x, i) => {
    const v = measurementAt(x, `daily.${VARIABLE}[${i}]`);
    if (v === null) return;
    n++;
    sum += v;
    if (v > max) {
      max = v;
      maxDay = s.time[i];
    }
  });
  if (n === 0) {
    return {
      status: 'absence',
      reason: 'outside_coverage',
      provenance,
      fn: band.function,
      tslot: 0,
      detail: 'GloFAS has no river within about 5 km of this point (every daily river_discharge 1991-2020 is null)',
    };
  }
  if (n < expected * NORMAL_MIN_SHARE) {
    return {
      status: 'absence',
      reason: 'unavailable_capability',
      provenance,
      fn: band.function,
      tslot: 0,
      detail: `only ${n} of ${expected} days 1991-2020 have a discharge; a normal needs ${Math.ceil(expected * NORMAL_MIN_SHARE)}`,
    };
  }
  const value = stat === 'mean' ? sum / n : max;
  return {
    status: 'value',
    value: roundTo(convert(value), 3),
    unit: band.unit,
    provenance,
    fn: band.function,
    tslot: 0,
    args: {
      variable: VARIABLE,
      statistic: stat,
      period: `${NORMAL_PERIOD.start}..${NORMAL_PERIOD.end}`,
      days_used: n,
      days_total: expected,
      upstream_unit: s.unit,
      ...(stat === 'max' ? { max_day: maxDay } : {}),
      footprint: 'largest GloFAS river within about 5 km',
    },
  };
}

/** Factory of the GloFAS river-discharge connector. */
export function openMeteoFlood(deps: ConnectorDeps): RangeMaterializer {
  const base = deps.baseUrl(SOURCE);
  const flights = new SingleFlight<DailyDischarge>();
  const today = () => Math.floor(Date.now() / DAY_MS);

  const fetchDays = (lat: number, lng: number, start: string, end: string, opts: RangeOptions): Promise<DailyDischarge> => {
    const url = `${base}/v1/flood?latitude=${coord(lat)}&longitude=${coord(lng)}&daily=${VARIABLE}&start_date=${start}&end_date=${end}`;
    return flights.run(url, opts.signal, async (signal) => {
      const { data, res } = await deps.client.json(withOpenMeteoKey(url, deps.config), { deadline: opts.deadline, signal, acceptStatus: [400] });
      const refusal = openMeteoRefusal(res.status, data);
      if (refusal) throw new Error(refusal);
      return parseDischarge(data, url);
    });
  };

  return {
    key: SOURCE,
    bands: [DAILY_BAND, ...Object.keys(NORMAL_BANDS)],
    history: true,
    async materialize(req: MaterializeRequest): Promise<MaterializeOutcome> {
      try {
        if (NORMAL_BANDS[req.band.key]) {
          return normalOutcome(req.band, await fetchDays(req.center.lat, req.center.lng, NORMAL_PERIOD.start, NORMAL_PERIOD.end, req));
        }
        if (req.band.key !== DAILY_BAND) return { status: 'error', reason: `${SOURCE}: ${req.band.key} is not a river-discharge band` };
        if (req.tslot > today()) return { status: 'error', reason: `${SOURCE}: tslot ${req.tslot} is after today (${today()}); forecast days are not signed` };
        const day = dayOfTslot(req.tslot);
        if (day < FLOOD_FIRST_DAY) return { status: 'error', reason: `${SOURCE}: GloFAS v4 starts on ${FLOOD_FIRST_DAY}; ${day} cannot be fetched` };
        return dayOutcome(req.band, await fetchDays(req.center.lat, req.center.lng, day, day, req), req.tslot);
      } catch (e) {
        return failureOutcome(SOURCE, e);
      }
    },
    async fetchRange(cell, band, startTslot, endTslot, opts): Promise<RangeStep[]> {
      const first = Math.max(startTslot, Math.floor(Date.parse(`${FLOOD_FIRST_DAY}T00:00:00Z`) / DAY_MS));
      const last = Math.min(endTslot, today());
      const steps: RangeStep[] = [];
      if (band.key !== DAILY_BAND || last < first) return steps;
      const c = cellCenter(cell);
      let s: DailyDischarge | undefined;
      let failure: MaterializeOutcome | undefined;
      try {
        s = await fetchDays(c.lat, c.lng, dayOfTslot(first), dayOfTslot(last), opts);
      } catch (e) {
        failure = failureOutcome(SOURCE, e);
      }
      for (let t = first; t <= last; t++) steps.push({ tslot: t, outcome: failure ?? dayOutcome(band, s!, t) });
      return steps;
    },
  };
}
