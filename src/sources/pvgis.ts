/**
 * JRC PVGIS 5.3 → `solar.pv_yield_kwh_per_kwp` (static): the yearly energy of a 1 kWp fixed
 * free-standing crystalline-silicon system at the cell centre, tilted and oriented at the angles
 * PVGIS finds optimal there, with 14 % system losses:
 * `GET <base>/PVcalc?lat&lon&peakpower=1&loss=14&optimalangles=1&outputformat=json`, value
 * `outputs.totals.fixed.E_y` (kWh/year, which for 1 kWp is kWh/kWp/year).
 *
 * PVGIS computes it from hourly satellite irradiance of its default database for the point
 * (PVGIS-SARAH3, about 5 km, over Europe, Africa and much of Asia; ERA5 elsewhere) over the years
 * its answer names, with the local horizon from a DEM. Chosen slope, azimuth, database and years
 * go into the derivation args.
 *
 * Outside its databases (open sea, high latitudes) PVGIS answers HTTP 400 with a JSON `message`
 * such as "Location over the sea": that is a signed absence `outside_coverage`. Any other 400 is a
 * refusal of the request, an error (nothing is signed).
 */
import type { MaterializeOutcome, Materializer, MaterializeRequest, ConnectorDeps, Provenance } from './contract.js';
import { coord, failureOutcome, FormatMismatch, measurementAt, objectAt, refOf, roundTo, SingleFlight, stringAt } from './json-helpers.js';

export const PVGIS_SOURCE = 'jrc_pvgis';
const SOURCE = PVGIS_SOURCE;
export const PVGIS_BAND = 'solar.pv_yield_kwh_per_kwp';
/** PVGIS messages that mean "no data for this location", not "bad request". */
const OUTSIDE = /over the sea|outside|not covered|no (?:radiation |meteo |pvgis )?(?:data|database)/i;

interface PvgisAnswer {
  url: string;
  status: number;
  data: unknown;
}

function pvgisOutcome(req: MaterializeRequest, got: PvgisAnswer): MaterializeOutcome {
  const provenance: Provenance = { source: SOURCE, ref: refOf(got.url), version: 'pvgis-5.3' };
  const fn = req.band.function;
  const body = objectAt(got.data, 'body');
  if (got.status === 400) {
    const message = typeof body.message === 'string' ? body.message : '';
    if (OUTSIDE.test(message)) {
      return { status: 'absence', reason: 'outside_coverage', provenance, fn, tslot: 0, detail: `PVGIS has no irradiance database for this point: ${message.slice(0, 160)}` };
    }
    return { status: 'error', reason: `${SOURCE}: refused the request (HTTP 400): ${message.slice(0, 160) || 'no message given'}`, format_mismatch: false };
  }
  const fixed = objectAt(objectAt(objectAt(body.outputs, 'outputs').totals, 'outputs.totals').fixed, 'outputs.totals.fixed');
  const ey = measurementAt(fixed.E_y, 'outputs.totals.fixed.E_y');
  if (ey === null) return { status: 'absence', reason: 'outside_coverage', provenance, fn, tslot: 0, detail: 'PVGIS answered no yearly energy (E_y) for this point' };
  const inputs = objectAt(body.inputs, 'inputs');
  const meteo = objectAt(inputs.meteo_data, 'inputs.meteo_data');
  const mounting = objectAt(objectAt(inputs.mounting_system, 'inputs.mounting_system').fixed, 'inputs.mounting_system.fixed');
  const angle = (k: 'slope' | 'azimuth') => measurementAt(objectAt(mounting[k], `inputs.mounting_system.fixed.${k}`).value, `inputs.mounting_system.fixed.${k}.value`);
  const module = objectAt(inputs.pv_module, 'inputs.pv_module');
  const peak = measurementAt(module.peak_power, 'inputs.pv_module.peak_power');
  if (peak === null || peak <= 0) throw new FormatMismatch('inputs.pv_module.peak_power is not a positive number');
  const radiationDb = stringAt(meteo.radiation_db, 'inputs.meteo_data.radiation_db');
  return {
    status: 'value',
    // E_y is for the answer's own peak power; asked 1 kWp, so this divides by 1, but says so.
    value: roundTo(ey / peak, 2),
    unit: req.band.unit,
    provenance: { ...provenance, version: `pvgis-5.3/${radiationDb}` },
    fn,
    tslot: 0,
    args: {
      peak_power_kwp: peak,
      system_loss_percent: measurementAt(module.system_loss, 'inputs.pv_module.system_loss'),
      slope_deg: angle('slope'),
      azimuth_deg: angle('azimuth'),
      radiation_db: radiationDb,
      year_min: measurementAt(meteo.year_min, 'inputs.meteo_data.year_min'),
      year_max: measurementAt(meteo.year_max, 'inputs.meteo_data.year_max'),
    },
  };
}

/** Factory of the PVGIS connector. */
export function pvgis(deps: ConnectorDeps): Materializer {
  const base = deps.baseUrl(SOURCE);
  const flights = new SingleFlight<PvgisAnswer>();
  return {
    key: SOURCE,
    bands: [PVGIS_BAND],
    history: false,
    async materialize(req: MaterializeRequest): Promise<MaterializeOutcome> {
      const url = `${base}/PVcalc?lat=${coord(req.center.lat)}&lon=${coord(req.center.lng)}&peakpower=1&loss=14&optimalangles=1&outputformat=json`;
      try {
        const got = await flights.run(url, req.signal, async (signal) => {
          const { data, res } = await deps.client.json(url, { deadline: req.deadline, signal, acceptStatus: [400] });
          return { url, status: res.status, data };
        });
        return pvgisOutcome(req, got);
      } catch (e) {
        return failureOutcome(SOURCE, e);
      }
    },
  };
}
