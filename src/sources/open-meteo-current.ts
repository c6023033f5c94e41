/**
 * The `current=` block shared by the Open-Meteo forecast and air-quality APIs: one request per
 * cell fetches every variable of the connector (so the bands of one cell share one call), and
 * each band reads its own variable, converted from `current_units` to the band's unit.
 */
import { tslotOf } from '../protocol/tslot.js';
import type { BandEntry } from '../registry/registry.js';
import type { AbsenceReason, MaterializeOutcome, MaterializeRequest, ConnectorDeps } from './contract.js';
import { coord, failureOutcome, FormatMismatch, measurementAt, objectAt, openMeteoRefusal, refOf, roundTo, SingleFlight, stringAt, unitConverter, utcIso } from './json-helpers.js';
import { withOpenMeteoKey } from './open-meteo-key.js';

/** What distinguishes one `current=` connector from another. */
export interface CurrentSpec {
  /** Registry source key. */
  source: string;
  /** API path, e.g. `/v1/forecast`. */
  path: string;
  /** Upstream product version recorded in provenance. */
  version: string;
  /** Band key → Open-Meteo variable. */
  variables: Readonly<Record<string, string>>;
  /** Extra query parameters (units). */
  extraQuery: string;
  /** Absence reason when the API answers null for a variable (the band's registry rule). */
  nullReason: AbsenceReason;
}

interface CurrentBlock {
  url: string;
  current: Record<string, unknown>;
  units: Record<string, unknown>;
}

/** Fetch (single-flight per cell) and per-band extraction for one `current=` connector. */
export function currentReader(deps: ConnectorDeps, spec: CurrentSpec) {
  const base = deps.baseUrl(spec.source);
  const list = [...new Set(Object.values(spec.variables))].join(',');
  const flights = new SingleFlight<CurrentBlock>();

  const fetchBlock = (req: MaterializeRequest): Promise<CurrentBlock> => {
    const url = `${base}${spec.path}?latitude=${coord(req.center.lat)}&longitude=${coord(req.center.lng)}&current=${list}${spec.extraQuery}&timezone=UTC`;
    return flights.run(url, req.signal, async (signal) => {
      const { data, res } = await deps.client.json(withOpenMeteoKey(url, deps.config), { deadline: req.deadline, signal, acceptStatus: [400] });
      const refusal = openMeteoRefusal(res.status, data);
      if (refusal) throw new Error(refusal);
      const body = objectAt(data, 'body');
      return { url, current: objectAt(body.current, 'current'), units: body.current_units === undefined ? {} : objectAt(body.current_units, 'current_units') };
    });
  };

  const outcomeOf = (band: BandEntry, block: CurrentBlock): MaterializeOutcome => {
    const variable = spec.variables[band.key];
    const time = stringAt(block.current.time, 'current.time');
    const capturedAt = utcIso(time, 'current.time');
    const tslot = tslotOf(Date.parse(capturedAt) / 1000, band.tempo);
    const interval = block.current.interval;
    const provenance = { source: spec.source, ref: refOf(block.url), captured_at: capturedAt, version: spec.version };
    const raw = measurementAt(block.current[variable], `current.${variable}`);
    if (raw === null) {
      return { status: 'absence', reason: spec.nullReason, provenance, fn: band.function, tslot, detail: `${spec.source} has no ${variable} value for this point` };
    }
    const unitLabel = stringAt(block.units[variable], `current_units.${variable}`);
    const convert = unitConverter(unitLabel, band.unit);
    if (!convert) throw new FormatMismatch(`current_units.${variable} is ${JSON.stringify(unitLabel)}, not convertible to ${band.unit}`);
    return {
      status: 'value',
      value: roundTo(convert(raw), 3),
      unit: band.unit,
      provenance,
      fn: band.function,
      args: { variable, upstream_unit: unitLabel, ...(typeof interval === 'number' ? { interval_s: interval } : {}) },
      tslot,
    };
  };

  return {
    /** Bands this reader serves. */
    bands: Object.keys(spec.variables),
    /** The outcome for `req` from the present `current` block. */
    async present(req: MaterializeRequest): Promise<MaterializeOutcome> {
      try {
        return outcomeOf(req.band, await fetchBlock(req));
      } catch (e) {
        return failureOutcome(spec.source, e);
      }
    },
    /** Calls started (coalesced calls count once). */
    get started() {
      return flights.started;
    },
  };
}
