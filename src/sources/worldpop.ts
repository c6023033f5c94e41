/**
 * WorldPop 100 m total population (source worldpop) through the keyless Esri-hosted ArcGIS
 * ImageServer `WorldPop_Total_Population_100m` → `population.worldpop_100m` (people in the
 * 3 arc-second pixel holding the cell centre) and `population.count_1km` (people in the 1 km ×
 * 1 km square centred on the cell centre), both on the slow tempo, one map per year 2000–2020.
 *
 * - pixel: `GET <base>/identify?geometry={"x":lng,"y":lat,"spatialReference":{"wkid":4326}}
 *   &geometryType=esriGeometryPoint&sr=4326&returnGeometry=false&returnCatalogItems=false
 *   &time=<ms of 1 January of the year>&f=json`; the answer's `value` is the pixel as text, or
 *   "NoData" (water, outside the mapped countries) → an `outside_coverage` absence.
 * - 1 km: `GET <base>/computeStatisticsHistograms?geometry=<envelope ±500 m>&geometryType=
 *   esriGeometryEnvelope&time=…&f=json`; people = `statistics[0].sum` (or mean × count when the
 *   server leaves `sum` out) over the valid pixels; no valid pixel → `outside_coverage` absence.
 *
 * A slot after 2020 reads the 2020 map, attributed to the slot asked (captured_at says 2020); a
 * year before 2000 is an absence. ArcGIS reports its own failures as HTTP 200 with an `error`
 * object: that is `source_fetch_failed`, a body of another shape `source_format_mismatch`.
 */
import type { ConnectorDeps, MaterializeOutcome, Materializer, MaterializeRequest, Provenance } from './contract.js';
import { annualMapFor, endOfYearIso } from './annual.js';
import { UpstreamError } from './http.js';
import { arrayAt, coord, FormatMismatch, objectAt, refOf, roundTo, SingleFlight } from './json-helpers.js';
import { typedFailure } from './typed-failure.js';
import { metresPerDegree } from './footprint.js';

const SOURCE = 'worldpop';
const VERSION = 'WorldPop Global 100m (ArcGIS ImageServer)';
/** The years the image service holds. */
export const WORLDPOP_YEARS: readonly number[] = Array.from({ length: 21 }, (_, i) => 2000 + i);
/** Side of the population-count square, metres. */
export const POPULATION_WINDOW_M = 1000;

/** The ArcGIS error object carried by an HTTP 200 answer, as an UpstreamError (or null). */
function arcgisError(body: Record<string, unknown>): UpstreamError | null {
  if (body.error === undefined) return null;
  const e = typeof body.error === 'object' && body.error !== null ? (body.error as Record<string, unknown>) : {};
  const code = typeof e.code === 'number' ? e.code : undefined;
  const details = Array.isArray(e.details) ? e.details.filter((d) => typeof d === 'string').join('; ') : '';
  return new UpstreamError('http', `ArcGIS error ${code ?? '(no code)'}: ${String(e.message ?? 'no message')}${details ? ` (${details})` : ''}`, code);
}

/** The pixel of an identify answer: a number, or null for "NoData". */
export function identifyValue(data: unknown): number | null {
  const body = objectAt(data, 'body');
  const err = arcgisError(body);
  if (err) throw err;
  const v = body.value;
  if (typeof v !== 'string' && typeof v !== 'number') throw new FormatMismatch('identify answer has no value');
  const text = String(v).trim();
  if (text.toLowerCase() === 'nodata') return null;
  const n = Number(text);
  if (text === '' || !Number.isFinite(n)) throw new FormatMismatch(`identify value ${JSON.stringify(text.slice(0, 40))} is neither a number nor NoData`);
  if (n < 0) throw new FormatMismatch(`identify value ${n} is a negative population`);
  return n;
}

/** People and valid pixels of a computeStatisticsHistograms answer (null when no pixel is valid). */
export function statisticsSum(data: unknown): { sum: number; pixels: number } | null {
  const body = objectAt(data, 'body');
  const err = arcgisError(body);
  if (err) throw err;
  const list = arrayAt(body.statistics, 'statistics');
  if (list.length === 0) return null;
  const s = objectAt(list[0], 'statistics[0]');
  const count = s.count;
  if (typeof count !== 'number' || !Number.isFinite(count) || count < 0) throw new FormatMismatch('statistics[0].count is not a non-negative number');
  if (count === 0) return null;
  let sum: number;
  if (typeof s.sum === 'number' && Number.isFinite(s.sum)) sum = s.sum;
  else if (typeof s.mean === 'number' && Number.isFinite(s.mean)) sum = s.mean * count;
  else throw new FormatMismatch('statistics[0] has neither sum nor mean');
  if (sum < 0) throw new FormatMismatch(`statistics[0] sums to ${sum}, a negative population`);
  return { sum, pixels: count };
}

/** Factory of the WorldPop connector. */
export function worldpopConnector(deps: ConnectorDeps): Materializer {
  const base = deps.baseUrl(SOURCE);
  const flights = new SingleFlight<unknown>();
  const get = (url: string, req: MaterializeRequest) => flights.run(url, req.signal, async (signal) => (await deps.client.json(url, { deadline: req.deadline, signal })).data);

  return {
    key: SOURCE,
    bands: ['population.count_1km', 'population.worldpop_100m'],
    history: true,
    async materialize(req: MaterializeRequest): Promise<MaterializeOutcome> {
      const fn = req.band.function;
      const pick = annualMapFor(req.tslot, WORLDPOP_YEARS);
      if ('absent' in pick) return { status: 'absence', reason: 'outside_coverage', provenance: { source: SOURCE, version: VERSION }, fn, detail: `WorldPop has ${pick.absent}` };
      const time = Date.UTC(pick.year, 0, 1);
      const { lat, lng } = req.center;
      const sr = { wkid: 4326 };
      let url: string;
      if (req.band.key === 'population.worldpop_100m') {
        const geometry = JSON.stringify({ x: Number(coord(lng)), y: Number(coord(lat)), spatialReference: sr });
        url = `${base}/identify?geometry=${encodeURIComponent(geometry)}&geometryType=esriGeometryPoint&sr=4326&returnGeometry=false&returnCatalogItems=false&time=${time}&f=json`;
      } else {
        const m = metresPerDegree(lat);
        const dLat = POPULATION_WINDOW_M / 2 / m.lat;
        const dLng = POPULATION_WINDOW_M / 2 / m.lng;
        const env = { xmin: Number(coord(lng - dLng)), ymin: Number(coord(lat - dLat)), xmax: Number(coord(lng + dLng)), ymax: Number(coord(lat + dLat)), spatialReference: sr };
        url = `${base}/computeStatisticsHistograms?geometry=${encodeURIComponent(JSON.stringify(env))}&geometryType=esriGeometryEnvelope&time=${time}&f=json`;
      }
      const provenance: Provenance = { source: SOURCE, ref: refOf(url), version: VERSION, captured_at: endOfYearIso(pick.year) };
      const args = { year: pick.year, ...(pick.newest ? { newest_map_for_later_slot: true } : {}) };
      try {
        const data = await get(url, req);
        if (req.band.key === 'population.worldpop_100m') {
          const v = identifyValue(data);
          if (v === null)
            return { status: 'absence', reason: 'outside_coverage', provenance, fn, tslot: req.tslot, detail: `WorldPop ${pick.year} has NoData at the cell (water or outside the mapped area)` };
          return { status: 'value', value: roundTo(v, 3), unit: req.band.unit, provenance, fn, tslot: req.tslot, args };
        }
        const s = statisticsSum(data);
        if (s === null)
          return {
            status: 'absence',
            reason: 'outside_coverage',
            provenance,
            fn,
            tslot: req.tslot,
            detail: `WorldPop ${pick.year} has no valid pixel in the 1 km square (water or outside the mapped area)`,
          };
        return { status: 'value', value: roundTo(s.sum, 1), unit: req.band.unit, provenance, fn, tslot: req.tslot, args: { ...args, window_m: POPULATION_WINDOW_M, valid_pixels: s.pixels } };
      } catch (e) {
        return typedFailure(SOURCE, e);
      }
    },
  };
}
