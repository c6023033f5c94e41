/**
 * MET Norway Locationforecast 2.0 (compact) → `metno.air_temperature` (°C, fast tempo):
 * `GET <base>/compact?lat&lon` with coordinates rounded to 4 decimals (the service's terms: more
 * decimals only defeat its cache) and the service's identifying User-Agent (its terms refuse
 * anonymous clients). The value is `data.instant.details.air_temperature` (2 m above ground) of
 * the timeseries step for the current hour: the latest step at or before now, or, when the answer
 * starts a little ahead, its first step if that lies within the hour and on the same UTC day.
 * The model grid is MET Nordic (1 km) over the Nordic countries and ECMWF (about 9 km) elsewhere.
 *
 * A missing air temperature in that step is a signed absence `unavailable_capability`. Only the
 * present is served: a past tslot is an error (the service keeps no history).
 */
import { tslotOf } from '../protocol/tslot.js';
import type { MaterializeOutcome, Materializer, MaterializeRequest, ConnectorDeps, Provenance } from './contract.js';
import { arrayAt, failureOutcome, FormatMismatch, measurementAt, objectAt, refOf, roundTo, SingleFlight, stringAt, unitConverter } from './json-helpers.js';

export const METNO_SOURCE = 'metno_locationforecast';
const SOURCE = METNO_SOURCE;
export const METNO_BAND = 'metno.air_temperature';
const VARIABLE = 'air_temperature';
const HOUR_MS = 3_600_000;

/** Coordinates as the service asks for them: at most 4 decimals. */
export function coord4(x: number): string {
  return String(Number(x.toFixed(4)));
}

interface Forecast {
  url: string;
  data: unknown;
}

function forecastOutcome(req: MaterializeRequest, got: Forecast, nowMs: number): MaterializeOutcome {
  const props = objectAt(objectAt(got.data, 'body').properties, 'properties');
  const meta = objectAt(props.meta, 'properties.meta');
  const updatedAt = stringAt(meta.updated_at, 'properties.meta.updated_at');
  const unit = stringAt(objectAt(meta.units, 'properties.meta.units')[VARIABLE], `properties.meta.units.${VARIABLE}`);
  const steps = arrayAt(props.timeseries, 'properties.timeseries').map((s, i) => {
    const step = objectAt(s, `properties.timeseries[${i}]`);
    const time = stringAt(step.time, `properties.timeseries[${i}].time`);
    const ms = Date.parse(time);
    if (!Number.isFinite(ms)) throw new FormatMismatch(`properties.timeseries[${i}].time is not a date-time`);
    return { i, time, ms, step };
  });
  if (steps.length === 0) throw new FormatMismatch('properties.timeseries is empty');
  const past = steps.filter((s) => s.ms <= nowMs).at(-1);
  const first = steps[0];
  const sameDay = (a: number, b: number) => Math.floor(a / 86_400_000) === Math.floor(b / 86_400_000);
  const pick = past ?? (first.ms - nowMs < HOUR_MS && sameDay(first.ms, nowMs) ? first : undefined);
  if (!pick) return { status: 'error', reason: `${SOURCE}: the forecast has no step for the present hour (first step ${first.time})` };
  const tslot = tslotOf(Math.floor(pick.ms / 1000), req.band.tempo);
  const provenance: Provenance = { source: SOURCE, ref: refOf(got.url), captured_at: new Date(pick.ms).toISOString().replace('.000Z', 'Z'), version: `locationforecast-2.0/${updatedAt}` };
  const instant = objectAt(objectAt(objectAt(pick.step.data, `timeseries[${pick.i}].data`).instant, `timeseries[${pick.i}].data.instant`).details, `timeseries[${pick.i}].data.instant.details`);
  const raw = instant[VARIABLE] === undefined ? null : measurementAt(instant[VARIABLE], `timeseries[${pick.i}].data.instant.details.${VARIABLE}`);
  if (raw === null) {
    return { status: 'absence', reason: 'unavailable_capability', provenance, fn: req.band.function, tslot, detail: `the forecast step ${pick.time} has no ${VARIABLE}` };
  }
  const convert = unitConverter(unit, req.band.unit);
  if (!convert) throw new FormatMismatch(`properties.meta.units.${VARIABLE} is ${JSON.stringify(unit)}, not convertible to ${req.band.unit}`);
  return {
    status: 'value',
    value: roundTo(convert(raw), 2),
    unit: req.band.unit,
    provenance,
    fn: req.band.function,
    tslot,
    args: { variable: VARIABLE, step_time: pick.time, updated_at: updatedAt, upstream_unit: unit },
  };
}

/** Factory of the MET Norway Locationforecast connector. */
export function metno(deps: ConnectorDeps): Materializer {
  const base = deps.baseUrl(SOURCE);
  const flights = new SingleFlight<Forecast>();
  return {
    key: SOURCE,
    bands: [METNO_BAND],
    history: false,
    async materialize(req: MaterializeRequest): Promise<MaterializeOutcome> {
      const now = Date.now();
      const today = Math.floor(now / 86_400_000);
      if (req.tslot !== today) return { status: 'error', reason: `${SOURCE}: only the present is served (tslot ${today}); tslot ${req.tslot} cannot be fetched` };
      const url = `${base}/compact?lat=${coord4(req.center.lat)}&lon=${coord4(req.center.lng)}`;
      try {
        const got = await flights.run(url, req.signal, async (signal) => ({ url, data: (await deps.client.json(url, { deadline: req.deadline, signal })).data }));
        return forecastOutcome(req, got, now);
      } catch (e) {
        return failureOutcome(SOURCE, e);
      }
    },
  };
}
