/**
 * NASA POWER climatology API → long-term solar resource at the cell (static bands):
 * `GET <base>/api/temporal/climatology/point?parameters=ALLSKY_SFC_SW_DWN,CLRSKY_SFC_SW_DWN&community=RE&longitude&latitude&format=JSON`.
 * One call answers 12 monthly means and the annual mean (`ANN`) of both parameters, so the three
 * bands of a cell share it:
 *
 * - `solar.ghi_annual_mean`: `ALLSKY_SFC_SW_DWN.ANN`, all-sky global horizontal irradiation;
 * - `solar.clearsky_ghi_annual_mean`: `CLRSKY_SFC_SW_DWN.ANN`, the same under clear skies;
 * - `solar.ghi_lowest_month_mean`: the lowest of the 12 monthly all-sky means (the month an
 *   off-grid system must be sized for); which month it is goes into the derivation args.
 *
 * All in kWh/m²/day, over POWER's solar grid cell (CERES, 1 degree, about 110 km), for the
 * climatology period the answer's `header.range` names (2001-2020 at the time of writing). The
 * 12 monthly values are not signed as a vector: only the annual means and the lowest month are.
 *
 * The fill value (`header.fill_value`, -999) is a signed absence `unavailable_capability`, never
 * a number.
 */
import type { MaterializeOutcome, Materializer, MaterializeRequest, ConnectorDeps, Provenance } from './contract.js';
import { coord, failureOutcome, FormatMismatch, measurementAt, objectAt, refOf, roundTo, SingleFlight, stringAt } from './json-helpers.js';

export const POWER_SOURCE = 'nasa_power';
const SOURCE = POWER_SOURCE;
const ALLSKY = 'ALLSKY_SFC_SW_DWN';
const CLRSKY = 'CLRSKY_SFC_SW_DWN';
export const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'] as const;

/** Band → the parameter and what is read of its 13 values. */
export const POWER_BANDS: Readonly<Record<string, { parameter: string; read: 'annual' | 'lowest_month' }>> = {
  'solar.ghi_annual_mean': { parameter: ALLSKY, read: 'annual' },
  'solar.clearsky_ghi_annual_mean': { parameter: CLRSKY, read: 'annual' },
  'solar.ghi_lowest_month_mean': { parameter: ALLSKY, read: 'lowest_month' },
};
const PARAMETERS = [ALLSKY, CLRSKY].join(',');

/** Upstream unit label → factor to kWh/m²/day (null: unknown, a format mismatch). */
function toKwhM2Day(label: string): number | null {
  const u = label.replace(/\s+/g, '').toLowerCase();
  if (u === 'kw-hr/m^2/day' || u === 'kwh/m^2/day' || u === 'kwh/m2/day' || u === 'kwh/m²/day') return 1;
  if (u === 'mj/m^2/day' || u === 'mj/m2/day' || u === 'mj/m²/day') return 1 / 3.6;
  return null;
}

interface PowerAnswer {
  url: string;
  data: unknown;
}

function powerOutcome(req: MaterializeRequest, got: PowerAnswer): MaterializeOutcome {
  const spec = POWER_BANDS[req.band.key];
  if (!spec) return { status: 'error', reason: `${SOURCE}: ${req.band.key} is not a POWER band` };
  const body = objectAt(got.data, 'body');
  const header = objectAt(body.header, 'header');
  const fill = measurementAt(header.fill_value, 'header.fill_value');
  const range = header.range === undefined ? undefined : stringAt(header.range, 'header.range');
  const api = header.api === undefined ? undefined : objectAt(header.api, 'header.api');
  const apiVersion = api?.version === undefined ? undefined : stringAt(api.version, 'header.api.version');
  const provenance: Provenance = { source: SOURCE, ref: refOf(got.url), version: `power-climatology${apiVersion ? `-${apiVersion}` : ''}` };
  const fn = req.band.function;
  const values = objectAt(objectAt(objectAt(body.properties, 'properties').parameter, 'properties.parameter')[spec.parameter], `properties.parameter.${spec.parameter}`);
  const meta = objectAt(objectAt(body.parameters, 'parameters')[spec.parameter], `parameters.${spec.parameter}`);
  const unit = stringAt(meta.units, `parameters.${spec.parameter}.units`);
  const factor = toKwhM2Day(unit);
  if (factor === null) throw new FormatMismatch(`parameters.${spec.parameter}.units is ${JSON.stringify(unit)}, not convertible to ${req.band.unit}`);
  const read = (k: string): number | null => {
    const v = measurementAt(values[k], `properties.parameter.${spec.parameter}.${k}`);
    return v === null || v === fill || v === -999 ? null : v;
  };
  const absent = (what: string): MaterializeOutcome => ({
    status: 'absence',
    reason: 'unavailable_capability',
    provenance,
    fn,
    tslot: 0,
    detail: `POWER answers its fill value for ${spec.parameter} ${what} here`,
  });
  const common = { parameter: spec.parameter, upstream_unit: unit, ...(range ? { period: range } : {}), footprint: 'POWER solar grid cell, 1 degree' };
  if (spec.read === 'annual') {
    const v = read('ANN');
    if (v === null) return absent('ANN');
    return { status: 'value', value: roundTo(v * factor, 3), unit: req.band.unit, provenance, fn, tslot: 0, args: { ...common, statistic: 'ANN' } };
  }
  const monthly = MONTHS.map((m) => read(m));
  if (monthly.some((v) => v === null)) return absent('in at least one month');
  const lowest = Math.min(...(monthly as number[]));
  const month = MONTHS[monthly.indexOf(lowest)];
  return { status: 'value', value: roundTo(lowest * factor, 3), unit: req.band.unit, provenance, fn, tslot: 0, args: { ...common, statistic: 'lowest monthly mean', month } };
}

/** Factory of the NASA POWER climatology connector. */
export function nasaPower(deps: ConnectorDeps): Materializer {
  const base = deps.baseUrl(SOURCE);
  const flights = new SingleFlight<PowerAnswer>();
  return {
    key: SOURCE,
    bands: Object.keys(POWER_BANDS),
    history: false,
    async materialize(req: MaterializeRequest): Promise<MaterializeOutcome> {
      const url = `${base}/api/temporal/climatology/point?parameters=${PARAMETERS}&community=RE&longitude=${coord(req.center.lng)}&latitude=${coord(req.center.lat)}&format=JSON`;
      try {
        const got = await flights.run(url, req.signal, async (signal) => ({ url, data: (await deps.client.json(url, { deadline: req.deadline, signal })).data }));
        return powerOutcome(req, got);
      } catch (e) {
        return failureOutcome(SOURCE, e);
      }
    },
  };
}
