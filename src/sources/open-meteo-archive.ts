/**
 * Open-Meteo historical weather API (ECMWF ERA5) → past days of the `weather.*` bands:
 * `GET /v1/archive?latitude&longitude&start_date&end_date&daily=…&timezone=UTC`, one fact per
 * day (fast tempo: one tslot = one UTC day). A range of days is one request (`fetchRange`, used
 * by backfill); the five weather bands of one cell and day share one request.
 *
 * Daily aggregates: mean for temperature, relative humidity, cloud cover and wind speed, sum for
 * precipitation. Wind uses the daily *mean* (`wind_speed_10m_mean`), not the daily maximum: the
 * band is a representative wind speed, and a maximum would bias the series against the present
 * value. The aggregate is recorded in the fact's derivation args.
 *
 * A day the archive has not published yet answers null: that is an error outcome ("not yet
 * published", skipped, retryable later), never an absence and never a zero.
 */
import { cellCenter } from '../protocol/cell64.js';
import type { BandEntry } from '../registry/registry.js';
import type { MaterializeOutcome, MaterializeRequest, ConnectorDeps } from './contract.js';
import {
  arrayAt,
  coord,
  dayOfTslot,
  failureOutcome,
  FormatMismatch,
  formatMismatch,
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

export const ARCHIVE_SOURCE = 'open_meteo_archive';
export const ARCHIVE_VERSION = 'era5';
const SOURCE = ARCHIVE_SOURCE;
const VERSION = ARCHIVE_VERSION;
const DAY_S = 86_400;

/** Band → ERA5 daily variable and how the day is aggregated. */
export const ARCHIVE_DAILY: Readonly<Record<string, { variable: string; aggregation: 'mean' | 'sum' }>> = {
  'weather.temperature_2m': { variable: 'temperature_2m_mean', aggregation: 'mean' },
  'weather.precipitation': { variable: 'precipitation_sum', aggregation: 'sum' },
  'weather.wind_speed_10m': { variable: 'wind_speed_10m_mean', aggregation: 'mean' },
  'weather.relative_humidity_2m': { variable: 'relative_humidity_2m_mean', aggregation: 'mean' },
  'weather.cloud_cover': { variable: 'cloud_cover_mean', aggregation: 'mean' },
};
const DAILY_LIST = Object.values(ARCHIVE_DAILY)
  .map((d) => d.variable)
  .join(',');

/** A parsed daily answer: per variable, the values by day, and the unit labels. */
export interface DailySeries {
  url: string;
  byDay: Map<string, number>;
  values: Record<string, unknown[]>;
  units: Record<string, unknown>;
}

export function parseDaily(data: unknown, url: string): DailySeries {
  const body = objectAt(data, 'body');
  const daily = objectAt(body.daily, 'daily');
  const time = arrayAt(daily.time, 'daily.time').map((t, i) => stringAt(t, `daily.time[${i}]`));
  const units = body.daily_units === undefined ? {} : objectAt(body.daily_units, 'daily_units');
  const values: Record<string, unknown[]> = {};
  for (const { variable } of Object.values(ARCHIVE_DAILY)) {
    if (daily[variable] === undefined) continue; // checked per band: one missing variable spoils only its band
    const arr = arrayAt(daily[variable], `daily.${variable}`);
    if (arr.length !== time.length) throw new FormatMismatch(`daily.${variable} has ${arr.length} values for ${time.length} days`);
    values[variable] = arr;
  }
  return { url, byDay: new Map(time.map((t, i) => [t, i])), values, units };
}

/** The outcome for one band and day out of a parsed daily series. */
function dayOutcome(band: BandEntry, s: DailySeries, tslot: number): MaterializeOutcome {
  const spec = ARCHIVE_DAILY[band.key];
  if (!spec) return { status: 'error', reason: `${SOURCE}: ${band.key} is not an archive band` };
  const day = dayOfTslot(tslot);
  try {
    const i = s.byDay.get(day);
    if (i === undefined) throw new FormatMismatch(`daily.time lacks ${day}`);
    const series = s.values[spec.variable];
    if (!series) throw new FormatMismatch(`daily.${spec.variable} is missing`);
    const raw = measurementAt(series[i], `daily.${spec.variable}[${i}]`);
    if (raw === null) return { status: 'error', reason: `${SOURCE}: ERA5 ${spec.variable} for ${day} is not yet published (null); retry later` };
    const unitLabel = stringAt(s.units[spec.variable], `daily_units.${spec.variable}`);
    const convert = unitConverter(unitLabel, band.unit);
    if (!convert) throw new FormatMismatch(`daily_units.${spec.variable} is ${JSON.stringify(unitLabel)}, not convertible to ${band.unit}`);
    return {
      status: 'value',
      value: roundTo(convert(raw), 3),
      unit: band.unit,
      provenance: { source: SOURCE, ref: refOf(s.url), captured_at: `${day}T00:00:00Z`, version: VERSION },
      fn: band.function,
      args: { variable: spec.variable, aggregation: spec.aggregation, day, upstream_unit: unitLabel },
      tslot,
    };
  } catch (e) {
    return e instanceof FormatMismatch ? formatMismatch(SOURCE, e.message) : failureOutcome(SOURCE, e);
  }
}

/** Factory of the ERA5 archive connector (history only: today's value comes from the forecast). */
export function openMeteoArchive(deps: ConnectorDeps): RangeMaterializer {
  const base = deps.baseUrl(SOURCE);
  const flights = new SingleFlight<DailySeries>();

  const fetchDays = (lat: string, lng: string, start: string, end: string, opts: RangeOptions): Promise<DailySeries> => {
    const url = `${base}/v1/archive?latitude=${lat}&longitude=${lng}&start_date=${start}&end_date=${end}&daily=${DAILY_LIST}&wind_speed_unit=ms&timezone=UTC`;
    return flights.run(url, opts.signal, async (signal) => {
      const { data, res } = await deps.client.json(withOpenMeteoKey(url, deps.config), { deadline: opts.deadline, signal, acceptStatus: [400] });
      const refusal = openMeteoRefusal(res.status, data);
      if (refusal) throw new Error(refusal);
      return parseDaily(data, url);
    });
  };

  const today = () => Math.floor(Date.now() / 1000 / DAY_S);

  return {
    key: SOURCE,
    bands: Object.keys(ARCHIVE_DAILY),
    history: true,
    async materialize(req: MaterializeRequest): Promise<MaterializeOutcome> {
      if (req.tslot >= today()) return { status: 'error', reason: `${SOURCE}: the archive holds past days only; today's value comes from the forecast connector` };
      const day = dayOfTslot(req.tslot);
      try {
        const s = await fetchDays(coord(req.center.lat), coord(req.center.lng), day, day, req);
        return dayOutcome(req.band, s, req.tslot);
      } catch (e) {
        return failureOutcome(SOURCE, e);
      }
    },
    async fetchRange(cell, band, startTslot, endTslot, opts): Promise<RangeStep[]> {
      const last = Math.min(endTslot, today() - 1);
      const steps: RangeStep[] = [];
      if (last < startTslot) return steps;
      const c = cellCenter(cell);
      let s: DailySeries | undefined;
      let failure: MaterializeOutcome | undefined;
      try {
        s = await fetchDays(coord(c.lat), coord(c.lng), dayOfTslot(startTslot), dayOfTslot(last), opts);
      } catch (e) {
        failure = failureOutcome(SOURCE, e);
      }
      for (let t = startTslot; t <= last; t++) steps.push({ tslot: t, outcome: failure ?? dayOutcome(band, s!, t) });
      return steps;
    },
  };
}
