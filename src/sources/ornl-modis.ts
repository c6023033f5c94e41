/**
 * ORNL DAAC MODIS subset REST API, MOD11A2 v061 (8-day land-surface temperature, 1 km) →
 * `lst.day_8day`, `lst.night_8day` (degC, medium tempo):
 * `GET <base>/MOD11A2/subset?latitude&longitude&band=LST_Day_1km&startDate=AYYYYDDD&endDate=AYYYYDDD&kmAboveBelow=0&kmLeftRight=0`
 * where <base> is the source's configured URL (its default already ends in `/rst/api/v1`).
 *
 * The pixel of the latest composite in the window is read with its QC band (QC_Day/QC_Night,
 * fetched in parallel): value × scale (0.02 K) − 273.15 → °C. Fill value 0, or a QC word saying
 * "not produced" (bits 0–1 = 2 or 3) or an LST error above 2 K (bits 6–7 ≥ 2), is a signed
 * absence with the registry's reason for these bands (`unavailable_capability`).
 *
 * Window: a past tslot is its own 30-day slot. The present slot looks back 24 days rather than
 * only inside the slot: composites appear about a week after their 8-day period, so the newest
 * published one may start ~20 days back, before the slot began. That composite is attributed to
 * the present slot (captured_at says when it was observed); nothing published in the lookback
 * is an error outcome (nothing signed), never a value from further back.
 */
import { TEMPO_UNIT_S, tslotOf } from '../protocol/tslot.js';
import type { MaterializeOutcome, Materializer, MaterializeRequest, ConnectorDeps } from './contract.js';
import { arrayAt, coord, failureOutcome, FormatMismatch, measurementAt, objectAt, refOf, roundTo, SingleFlight, stringAt } from './json-helpers.js';

const SOURCE = 'ornl_modis';
const VERSION = 'MOD11A2.061';
const PRODUCT = 'MOD11A2';
const DAY_MS = 86_400_000;
/** Lookback of the present slot (see the header). */
export const PRESENT_LOOKBACK_DAYS = 24;
/** The product's documented LST scale factor, used when an answer omits `scale`. */
const DEFAULT_SCALE = 0.02;

/** Band → MODIS science dataset and its QC dataset. */
export const MODIS_BANDS: Readonly<Record<string, { lst: string; qc: string }>> = {
  'lst.day_8day': { lst: 'LST_Day_1km', qc: 'QC_Day' },
  'lst.night_8day': { lst: 'LST_Night_1km', qc: 'QC_Night' },
};

/** MODIS date text `AYYYYDDD` (year and day of year, UTC) of a time in ms. */
export function modisDate(ms: number): string {
  const d = new Date(ms);
  const y = d.getUTCFullYear();
  const doy = Math.floor((Date.UTC(y, d.getUTCMonth(), d.getUTCDate()) - Date.UTC(y, 0, 1)) / DAY_MS) + 1;
  return `A${y}${String(doy).padStart(3, '0')}`;
}

/** Calendar day (YYYY-MM-DD) of a MODIS date text. */
function calendarOf(modis: string): string {
  const y = Number(modis.slice(1, 5));
  return new Date(Date.UTC(y, 0, 1) + (Number(modis.slice(5)) - 1) * DAY_MS).toISOString().slice(0, 10);
}

interface Composite {
  modis_date: string;
  calendar_date: string;
  value: number | null;
  scale: number;
}

/** The composites of one subset answer, newest first. */
function parseSubset(data: unknown, dataset: string, scaled: boolean): Composite[] {
  const body = objectAt(data, 'body');
  const topScale = body.scale;
  return arrayAt(body.subset, 'subset')
    .map((raw, i) => {
      const s = objectAt(raw, `subset[${i}]`);
      const modis = stringAt(s.modis_date, `subset[${i}].modis_date`);
      if (!/^A\d{7}$/.test(modis)) throw new FormatMismatch(`subset[${i}].modis_date is not AYYYYDDD`);
      if (s.band !== undefined && s.band !== dataset) throw new FormatMismatch(`subset[${i}].band is ${JSON.stringify(s.band)}, asked ${dataset}`);
      const pixels = arrayAt(s.data, `subset[${i}].data`);
      if (pixels.length < 1) throw new FormatMismatch(`subset[${i}].data is empty`);
      // QC words are bit fields: their `scale` (if any) means nothing.
      const scaleText = scaled ? (s.scale ?? topScale) : undefined;
      const scale = scaleText === undefined ? DEFAULT_SCALE : Number(scaleText);
      if (!Number.isFinite(scale) || scale <= 0) throw new FormatMismatch(`subset[${i}].scale is not a positive number`);
      const calendar = typeof s.calendar_date === 'string' ? s.calendar_date : calendarOf(modis);
      return { modis_date: modis, calendar_date: calendar, value: measurementAt(pixels[0], `subset[${i}].data[0]`), scale };
    })
    .sort((a, b) => (a.modis_date < b.modis_date ? 1 : a.modis_date > b.modis_date ? -1 : 0));
}

/** Factory of the ORNL DAAC MOD11A2 connector. */
export function ornlModis(deps: ConnectorDeps): Materializer {
  const base = deps.baseUrl(SOURCE);
  const flights = new SingleFlight<{ data: unknown; url: string }>();

  const subset = (req: MaterializeRequest, dataset: string, start: string, end: string) => {
    const url = `${base}/${PRODUCT}/subset?latitude=${coord(req.center.lat)}&longitude=${coord(req.center.lng)}&band=${dataset}&startDate=${start}&endDate=${end}&kmAboveBelow=0&kmLeftRight=0`;
    return flights.run(url, req.signal, async (signal) => ({ data: (await deps.client.json(url, { deadline: req.deadline, signal })).data, url }));
  };

  return {
    key: SOURCE,
    bands: Object.keys(MODIS_BANDS),
    history: true,
    async materialize(req: MaterializeRequest): Promise<MaterializeOutcome> {
      const spec = MODIS_BANDS[req.band.key];
      const unit = TEMPO_UNIT_S[req.band.tempo] * 1000;
      const now = Date.now();
      const present = tslotOf(now / 1000, req.band.tempo);
      if (req.tslot > present) return { status: 'error', reason: `${SOURCE}: tslot ${req.tslot} is after the present slot ${present}` };
      const startMs = req.tslot === present ? Math.min(req.tslot * unit, now - PRESENT_LOOKBACK_DAYS * DAY_MS) : req.tslot * unit;
      const endMs = req.tslot === present ? now : (req.tslot + 1) * unit - DAY_MS;
      const [start, end] = [modisDate(startMs), modisDate(endMs)];
      const fn = req.band.function;
      try {
        // Both datasets at once; a QC failure only matters when the pixel is not fill.
        const [lst, qc] = await Promise.all([
          subset(req, spec.lst, start, end),
          subset(req, spec.qc, start, end).then(
            (r) => ({ ok: true as const, r }),
            (e: unknown) => ({ ok: false as const, e }),
          ),
        ]);
        const composites = parseSubset(lst.data, spec.lst, true);
        const latest = composites[0];
        if (!latest) return { status: 'error', reason: `${SOURCE}: no ${PRODUCT} composite published between ${start} and ${end} yet` };
        const provenance = { source: SOURCE, ref: refOf(lst.url), captured_at: `${latest.calendar_date}T00:00:00Z`, version: VERSION };
        const args = { dataset: spec.lst, modis_date: latest.modis_date, raw: latest.value, scale: latest.scale };
        if (latest.value === null || latest.value === 0) {
          return { status: 'absence', reason: 'unavailable_capability', provenance, fn, tslot: req.tslot, detail: `${spec.lst} is fill (no retrieval) in composite ${latest.modis_date}` };
        }
        if (!qc.ok) return failureOutcome(SOURCE, qc.e);
        const qcWord = parseSubset(qc.r.data, spec.qc, false).find((c) => c.modis_date === latest.modis_date)?.value;
        if (qcWord === undefined || qcWord === null) throw new FormatMismatch(`${spec.qc} has no pixel for ${latest.modis_date}`);
        const mandatory = qcWord & 0b11;
        const lstError = (qcWord >> 6) & 0b11;
        if (mandatory >= 2 || lstError >= 2) {
          const why = mandatory >= 2 ? `not produced (${mandatory === 2 ? 'cloud' : 'other reasons'})` : 'LST error above 2 K';
          return { status: 'absence', reason: 'unavailable_capability', provenance, fn, tslot: req.tslot, detail: `${spec.qc} rejects composite ${latest.modis_date}: ${why}` };
        }
        return {
          status: 'value',
          value: roundTo(latest.value * latest.scale - 273.15, 2),
          unit: req.band.unit,
          provenance,
          fn,
          args: { ...args, qc: qcWord },
          tslot: req.tslot,
        };
      } catch (e) {
        return failureOutcome(SOURCE, e);
      }
    },
  };
}
