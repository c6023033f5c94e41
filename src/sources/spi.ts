/**
 * `precip.spi_3m` from ERA5 daily precipitation (Open-Meteo historical weather API): the
 * 3-month Standardized Precipitation Index of McKee, Doesken and Kleist (1993), computed at the
 * cell centre from one archive request that covers the 1991-2020 baseline and the slot's window.
 *
 * Method (docs/shortcuts.md, "SPI from ERA5"): the 90-day precipitation total ending at the
 * slot's last day (for the present slot: at the last day the archive has published, today − 6)
 * is set against the totals of the same calendar window in each baseline year 1991-2020; a gamma
 * distribution is fitted by maximum likelihood (Thom) over the non-zero baseline totals, the
 * zero share q is mixed in, and H(x) = q + (1 − q) G(x) is mapped to a standard normal deviate.
 * A baseline year whose window has a missing day is skipped; fewer than 20 usable years is a
 * signed absence (`unavailable_capability`). Days of the slot's own window not yet published are
 * an error outcome (skipped, retryable), never an absence.
 */
import { TEMPO_UNIT_S, type Tempo } from '../protocol/tslot.js';
import type { MaterializeOutcome, Materializer, MaterializeRequest, Provenance, ConnectorDeps } from './contract.js';
import { coord, failureOutcome, FormatMismatch, measurementAt, openMeteoRefusal, refOf, roundTo, SingleFlight, stringAt, unitConverter } from './json-helpers.js';
import { withOpenMeteoKey } from './open-meteo-key.js';
import { ARCHIVE_SOURCE, ARCHIVE_VERSION, parseDaily, type DailySeries } from './open-meteo-archive.js';
import { fitGamma, spiOf, SPI_CLIP } from './stats/spi-stats.js';

export const SPI_BAND = 'precip.spi_3m';
/** Length of the accumulation window (3 months of 30 days, the medium tempo unit). */
export const WINDOW_DAYS = 90;
export const BASELINE_FIRST_YEAR = 1991;
export const BASELINE_LAST_YEAR = 2020;
/** Baseline years with a complete window needed before a gamma fit is trusted. */
export const MIN_BASELINE_YEARS = 20;
/** Days the ERA5 archive trails today (Open-Meteo documents about 5 days). */
export const ARCHIVE_LAG_DAYS = 6;
const VARIABLE = 'precipitation_sum';
const DAY_MS = 86_400_000;

const iso = (day: number) => new Date(day * DAY_MS).toISOString().slice(0, 10);

export interface DayWindow {
  /** First and last day (days since the Unix epoch, inclusive). */
  start: number;
  end: number;
}

/** The slot's window and the same calendar window of each baseline year. */
export interface SpiWindows {
  target: DayWindow;
  baseline: Array<DayWindow & { year: number }>;
}

/**
 * Windows of a slot: the target ends at the slot's last day, capped at `latestDay` (the last day
 * the archive can have published); each baseline year's window ends on the same month and day
 * (29 February → 28 February in common years).
 */
export function spiWindows(tslot: number, tempo: Tempo, latestDay: number): SpiWindows {
  const unitDays = TEMPO_UNIT_S[tempo] / 86_400;
  const end = Math.min((tslot + 1) * unitDays - 1, latestDay);
  const d = new Date(end * DAY_MS);
  const [m, dd] = [d.getUTCMonth(), d.getUTCDate()];
  const baseline: SpiWindows['baseline'] = [];
  for (let y = BASELINE_FIRST_YEAR; y <= BASELINE_LAST_YEAR; y++) {
    const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
    const e = Date.UTC(y, m, m === 1 && dd === 29 && !leap ? 28 : dd) / DAY_MS;
    baseline.push({ year: y, start: e - WINDOW_DAYS + 1, end: e });
  }
  return { target: { start: end - WINDOW_DAYS + 1, end }, baseline };
}

/** Total precipitation (mm) of a window, or null when a day is missing or not published. */
function windowTotal(s: DailySeries, w: DayWindow, toMm: (v: number) => number): number | null {
  const series = s.values[VARIABLE];
  if (!series) throw new FormatMismatch(`daily.${VARIABLE} is missing`);
  let sum = 0;
  for (let day = w.start; day <= w.end; day++) {
    const i = s.byDay.get(iso(day));
    if (i === undefined) return null;
    const v = measurementAt(series[i], `daily.${VARIABLE}[${i}]`);
    if (v === null) return null;
    sum += toMm(v);
  }
  return sum;
}

/** Factory of the ERA5 SPI connector (key: the archive source it reads). */
export function spiEra5(deps: ConnectorDeps): Materializer {
  const base = deps.baseUrl(ARCHIVE_SOURCE);
  const flights = new SingleFlight<DailySeries>();
  const today = () => Math.floor(Date.now() / DAY_MS);

  return {
    key: ARCHIVE_SOURCE,
    bands: [SPI_BAND],
    history: true,
    async materialize(req: MaterializeRequest): Promise<MaterializeOutcome> {
      const band = req.band;
      if (band.key !== SPI_BAND) return { status: 'error', reason: `${ARCHIVE_SOURCE}: ${band.key} is not served by the SPI connector` };
      if (band.tempo === 'static') return { status: 'error', reason: `${ARCHIVE_SOURCE}: ${band.key} has no time window` };
      const w = spiWindows(req.tslot, band.tempo, today() - ARCHIVE_LAG_DAYS);
      const start = Math.min(w.target.start, w.baseline[0].start);
      const end = Math.max(w.target.end, w.baseline.at(-1)!.end);
      const url = `${base}/v1/archive?latitude=${coord(req.center.lat)}&longitude=${coord(req.center.lng)}&start_date=${iso(start)}&end_date=${iso(end)}&daily=${VARIABLE}&timezone=UTC`;
      const provenance: Provenance = { source: ARCHIVE_SOURCE, ref: refOf(url), captured_at: `${iso(w.target.end)}T00:00:00Z`, version: ARCHIVE_VERSION };
      try {
        const s = await flights.run(url, req.signal, async (signal) => {
          const { data, res } = await deps.client.json(withOpenMeteoKey(url, deps.config), { deadline: req.deadline, signal, acceptStatus: [400] });
          const refusal = openMeteoRefusal(res.status, data);
          if (refusal) throw new Error(refusal);
          return parseDaily(data, url);
        });
        const unitLabel = stringAt(s.units[VARIABLE], `daily_units.${VARIABLE}`);
        const toMm = unitConverter(unitLabel, 'mm');
        if (!toMm) throw new FormatMismatch(`daily_units.${VARIABLE} is ${JSON.stringify(unitLabel)}, not convertible to mm`);

        const total = windowTotal(s, w.target, toMm);
        if (total === null) return { status: 'error', reason: `${ARCHIVE_SOURCE}: ERA5 ${VARIABLE} is not yet published for every day of ${iso(w.target.start)}..${iso(w.target.end)}; retry later` };
        const used: Array<{ year: number; total: number }> = [];
        for (const b of w.baseline) {
          const t = windowTotal(s, b, toMm);
          if (t !== null) used.push({ year: b.year, total: t });
        }
        const window = `${iso(w.target.start)}..${iso(w.target.end)}`;
        if (used.length < MIN_BASELINE_YEARS) {
          return {
            status: 'absence',
            reason: 'unavailable_capability',
            provenance,
            fn: band.function,
            tslot: req.tslot,
            detail: `only ${used.length} of ${w.baseline.length} baseline years (${BASELINE_FIRST_YEAR}-${BASELINE_LAST_YEAR}) have a complete ${WINDOW_DAYS}-day window ending ${iso(w.target.end).slice(5)}; at least ${MIN_BASELINE_YEARS} are needed for the gamma fit (target window ${window})`,
          };
        }
        const fit = fitGamma(used.map((u) => u.total));
        if (!fit) {
          return {
            status: 'absence',
            reason: 'unavailable_capability',
            provenance,
            fn: band.function,
            tslot: req.tslot,
            detail: `the ${used.length} baseline totals admit no gamma fit (fewer than 2 non-zero totals, or all equal)`,
          };
        }
        const first = w.baseline.find((b) => b.year === used[0].year)!;
        const last = w.baseline.find((b) => b.year === used.at(-1)!.year)!;
        return {
          status: 'value',
          value: roundTo(spiOf(total, fit), 3),
          unit: band.unit,
          provenance,
          fn: band.function,
          args: {
            variable: VARIABLE,
            window_days: WINDOW_DAYS,
            window_start: iso(w.target.start),
            window_end: iso(w.target.end),
            total_mm: roundTo(total, 3),
            baseline_from: iso(first.start),
            baseline_to: iso(last.end),
            n_years: used.length,
            alpha: roundTo(fit.alpha, 6),
            beta: roundTo(fit.beta, 6),
            q: roundTo(fit.q, 6),
            clip: SPI_CLIP,
          },
          tslot: req.tslot,
        };
      } catch (e) {
        return failureOutcome(ARCHIVE_SOURCE, e);
      }
    },
  };
}
