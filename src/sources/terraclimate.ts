/**
 * TerraClimate 1991-2020 climate normals (Climatology Lab, University of California Merced; served
 * by the Northwest Knowledge Network THREDDS) → static `climate.normal_*` bands, read through the
 * NetCDF Subset Service as a grid-as-point CSV:
 * `GET <base>/TerraClimate19912020_<var>.nc?var=<var>&latitude&longitude&temporal=all&accept=csv`
 * (without `temporal=all` NCSS answers only the time step nearest to now). The answer has a header
 * naming each column and its unit (`ppt[unit="mm"]`) and one row per month (12 rows).
 *
 * - `climate.normal_tmax_annual`, `climate.normal_tmin_annual` (°C): the unweighted mean of the 12
 *   monthly normals of `tmax` / `tmin` (mean daily maximum / minimum temperature of the month);
 * - `climate.normal_precip_annual` (mm per year): the sum of the 12 monthly precipitation normals.
 *
 * Values are for the 1/24 degree (about 4 km) grid cell holding the point. The files store packed
 * integers with `scale_factor`/`add_offset`; NCSS unpacks them before writing the CSV, so the
 * numbers are used as written and never scaled again (a value outside the physical range, as a
 * second scaling would give, is a format mismatch, not a value). A month written as NaN has no
 * data: all 12 (sea, outside the land grid) is a signed absence `outside_coverage`; some of them
 * is `unavailable_capability`.
 */
import type { MaterializeOutcome, Materializer, MaterializeRequest, ConnectorDeps, Provenance } from './contract.js';
import { coord, failureOutcome, FormatMismatch, refOf, roundTo, SingleFlight } from './json-helpers.js';
import { UpstreamError } from './http.js';

export const TERRACLIMATE_SOURCE = 'terraclimate';
const SOURCE = TERRACLIMATE_SOURCE;
const VERSION = 'terraclimate-normals-1991-2020';

/** Band → TerraClimate variable, how the 12 months combine, and the plausible range of one month. */
export const TERRACLIMATE_BANDS: Readonly<Record<string, { variable: 'tmax' | 'tmin' | 'ppt'; combine: 'mean' | 'sum'; monthRange: [number, number] }>> = {
  'climate.normal_precip_annual': { variable: 'ppt', combine: 'sum', monthRange: [0, 3000] },
  'climate.normal_tmax_annual': { variable: 'tmax', combine: 'mean', monthRange: [-90, 70] },
  'climate.normal_tmin_annual': { variable: 'tmin', combine: 'mean', monthRange: [-90, 70] },
};

/** Unit labels accepted per variable (the CSV header's `[unit="…"]`). */
const UNITS: Record<string, readonly string[]> = {
  ppt: ['mm'],
  tmax: ['degc', '°c', 'c', 'celsius', 'deg_c'],
  tmin: ['degc', '°c', 'c', 'celsius', 'deg_c'],
};

/** One variable's 12 monthly values from the NCSS CSV. */
export interface MonthlyNormals {
  url: string;
  times: string[];
  values: Array<number | null>;
  unit: string;
}

/** Parses an NCSS grid-as-point CSV answer for `variable`; a wrong shape is FormatMismatch. */
export function parseNcssCsv(text: string, variable: string, url: string): MonthlyNormals {
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '');
  if (lines.length < 2) throw new FormatMismatch('the CSV has no data rows');
  const header = lines[0].split(',').map((h) => h.trim());
  const name = (h: string) => h.replace(/\[.*$/, '').trim();
  // The time column is `time` (older servers: `date`); only the variable's column is required.
  const timeCol = header.findIndex((h) => name(h) === 'time' || name(h) === 'date');
  const varCol = header.findIndex((h) => name(h) === variable);
  if (varCol < 0) throw new FormatMismatch(`the CSV header has no ${variable} column (got ${JSON.stringify(lines[0].slice(0, 120))})`);
  const unit = /\[unit="([^"]*)"\]/.exec(header[varCol])?.[1];
  if (unit === undefined) throw new FormatMismatch(`the CSV header gives no unit for ${variable}`);
  const rows = lines.slice(1).map((l) => l.split(','));
  if (rows.length !== 12) throw new FormatMismatch(`expected 12 monthly rows, got ${rows.length}`);
  const times: string[] = [];
  const values = rows.map((r, i) => {
    if (r.length !== header.length) throw new FormatMismatch(`row ${i + 1} has ${r.length} fields for ${header.length} columns`);
    if (timeCol >= 0) times.push(r[timeCol].trim());
    const cell = r[varCol].trim();
    if (cell === '' || /^nan$/i.test(cell)) return null;
    const v = Number(cell);
    if (!Number.isFinite(v)) throw new FormatMismatch(`row ${i + 1}: ${variable} is not a number (got ${JSON.stringify(cell.slice(0, 40))})`);
    return v;
  });
  return { url, times, values, unit };
}

function normalOutcome(req: MaterializeRequest, m: MonthlyNormals): MaterializeOutcome {
  const spec = TERRACLIMATE_BANDS[req.band.key];
  const provenance: Provenance = { source: SOURCE, ref: refOf(m.url), version: VERSION };
  const fn = req.band.function;
  if (!UNITS[spec.variable].includes(m.unit.replace(/\s+/g, '').toLowerCase())) {
    throw new FormatMismatch(`the ${spec.variable} column is in ${JSON.stringify(m.unit)}, not ${req.band.unit}`);
  }
  const missing = m.values.filter((v) => v === null).length;
  if (missing === 12) return { status: 'absence', reason: 'outside_coverage', provenance, fn, tslot: 0, detail: `TerraClimate has no ${spec.variable} normal here (sea or outside the land grid)` };
  if (missing > 0)
    return { status: 'absence', reason: 'unavailable_capability', provenance, fn, tslot: 0, detail: `TerraClimate has ${spec.variable} normals for only ${12 - missing} of 12 months here` };
  const months = m.values as number[];
  const [lo, hi] = spec.monthRange;
  const odd = months.find((v) => v < lo || v > hi);
  if (odd !== undefined) throw new FormatMismatch(`a monthly ${spec.variable} of ${odd} ${m.unit} is outside ${lo}..${hi} (packed or scaled twice?)`);
  const total = months.reduce((a, b) => a + b, 0);
  const value = spec.combine === 'sum' ? total : total / 12;
  return {
    status: 'value',
    value: roundTo(value, 2),
    unit: req.band.unit,
    provenance,
    fn,
    tslot: 0,
    args: { variable: spec.variable, combine: spec.combine, monthly: months.map((v) => roundTo(v, 2)), period: '1991-2020', upstream_unit: m.unit, footprint: 'TerraClimate grid cell, 1/24 degree' },
  };
}

/** Factory of the TerraClimate normals connector. */
export function terraclimate(deps: ConnectorDeps): Materializer {
  const base = deps.baseUrl(SOURCE);
  const flights = new SingleFlight<MonthlyNormals>();
  return {
    key: SOURCE,
    bands: Object.keys(TERRACLIMATE_BANDS),
    history: false,
    async materialize(req: MaterializeRequest): Promise<MaterializeOutcome> {
      const spec = TERRACLIMATE_BANDS[req.band.key];
      if (!spec) return { status: 'error', reason: `${SOURCE}: ${req.band.key} is not a TerraClimate band` };
      const v = spec.variable;
      const url = `${base}/TerraClimate19912020_${v}.nc?var=${v}&latitude=${coord(req.center.lat)}&longitude=${coord(req.center.lng)}&temporal=all&accept=csv`;
      try {
        const m = await flights.run(url, req.signal, async (signal) => {
          const res = await deps.client.request(url, { deadline: req.deadline, signal, headers: { accept: 'text/csv, text/plain;q=0.9' }, maxBytes: 1 << 20 });
          let text: string;
          try {
            text = new TextDecoder('utf-8', { fatal: true }).decode(res.body);
          } catch {
            throw new UpstreamError('format', `upstream ${new URL(url).host} sent bytes that are not UTF-8 text`);
          }
          return parseNcssCsv(text, v, url);
        });
        return normalOutcome(req, m);
      } catch (e) {
        return failureOutcome(SOURCE, e);
      }
    },
  };
}
