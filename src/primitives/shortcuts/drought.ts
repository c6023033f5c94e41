/**
 * /v1/spi: meteorological drought at a cell. First choice is the signed `precip.spi_3m` fact (a
 * gamma-fitted 3-month SPI, McKee et al. 1993). Without it, a transparent standardized anomaly
 * of the stored CHIRPS daily history is computed, and labelled as what it is: not an SPI. With too
 * little history the answer is `inconclusive` with the count observed, never a guessed index.
 */
import type { ServiceContext } from '../context/context.js';
import { round } from '../reads/common.js';
import { Evidence, derivedPlace, numericValue, pointValue, type DerivedEnvelope, type DerivedOpts } from './evidence.js';
import type { PlaceInput } from './place.js';

export const SPI_BAND = 'precip.spi_3m';
export const CHIRPS_BAND = 'precip.chirps_daily_mm';
/** Stored daily values needed before the fallback computes anything. */
export const MIN_HISTORY = 30;
/** The recent window of the fallback, in days (CHIRPS is daily, so one fast tslot per day). */
export const RECENT_DAYS = 30;
/** Two-sided 5 % level of the fallback's signal (independence assumed; see the caveat). */
export const Z_SIGNAL = 1.96;

/** SPI classes of McKee, Doesken and Kleist (1993). */
export function spiClass(spi: number): string {
  if (spi >= 2) return 'extremely_wet';
  if (spi >= 1.5) return 'very_wet';
  if (spi >= 1) return 'moderately_wet';
  if (spi > -1) return 'near_normal';
  if (spi > -1.5) return 'moderately_dry';
  if (spi > -2) return 'severely_dry';
  return 'extremely_dry';
}

export type AnomalyResult =
  | {
      status: 'ok';
      z: number;
      signal: 'drier_than_baseline' | 'wetter_than_baseline' | 'no_clear_difference';
      recent_mean_mm: number;
      baseline_mean_mm: number;
      baseline_sd_mm: number;
      n_recent: number;
      n_baseline: number;
      recent_tslots: [number, number];
    }
  | { status: 'inconclusive'; reason: string; observed: number };

function mean(xs: readonly number[]): number {
  return xs.reduce((s, x) => s + x, 0) / xs.length;
}

/**
 * Standardized anomaly of the recent window's mean daily rainfall against the stored days before
 * it: z = (mean_recent − mean_baseline) / (sd_baseline / √n_recent), sd with n − 1.
 */
export function recentAnomaly(points: ReadonlyArray<{ tslot: number; value: number }>, windowDays = RECENT_DAYS, minValues = MIN_HISTORY): AnomalyResult {
  if (points.length < minValues)
    return {
      status: 'inconclusive',
      reason: `only ${points.length} stored ${CHIRPS_BAND} values at the cell; at least ${minValues} are needed (use /v1/backfill to fill history)`,
      observed: points.length,
    };
  const tmax = Math.max(...points.map((p) => p.tslot));
  const recent = points.filter((p) => p.tslot > tmax - windowDays).map((p) => p.value);
  const base = points.filter((p) => p.tslot <= tmax - windowDays).map((p) => p.value);
  if (base.length < 2)
    return {
      status: 'inconclusive',
      reason: `the ${points.length} stored values fall almost entirely in the last ${windowDays} days: there is no baseline before the window`,
      observed: points.length,
    };
  const mb = mean(base);
  const sd = Math.sqrt(base.reduce((s, x) => s + (x - mb) ** 2, 0) / (base.length - 1));
  if (sd === 0) return { status: 'inconclusive', reason: 'the baseline days have no variance (all equal): a z-score is undefined', observed: points.length };
  const mr = mean(recent);
  const z = (mr - mb) / (sd / Math.sqrt(recent.length));
  return {
    status: 'ok',
    z: round(z, 10),
    signal: z <= -Z_SIGNAL ? 'drier_than_baseline' : z >= Z_SIGNAL ? 'wetter_than_baseline' : 'no_clear_difference',
    recent_mean_mm: round(mr, 10),
    baseline_mean_mm: round(mb, 10),
    baseline_sd_mm: round(sd, 10),
    n_recent: recent.length,
    n_baseline: base.length,
    recent_tslots: [tmax - windowDays + 1, tmax],
  };
}

export interface SpiResult extends DerivedEnvelope {
  status: 'ok' | 'inconclusive';
  source: typeof SPI_BAND | 'chirps_daily_anomaly' | null;
  spi: number | null;
  spi_class: string | null;
  /** McKee et al.: a drought event is SPI ≤ −1; null when no SPI was available. */
  drought: boolean | null;
  anomaly?: AnomalyResult;
  observed_values?: number;
  method: string;
  reason?: string;
}

/** Meteorological drought at a place's cell. */
export async function spi(ctx: ServiceContext, input: PlaceInput, opts: DerivedOpts = {}): Promise<SpiResult> {
  const place = await derivedPlace(ctx, input, opts);
  const cell = place.loc.cell64;
  const ev = new Evidence(ctx, 'spi', opts);
  const fact = await ev.read(cell, SPI_BAND);
  const v = numericValue(fact);
  if (v !== undefined) {
    const env = await ev.envelope(place, cell);
    const cls = spiClass(v);
    return {
      ...env,
      status: 'ok',
      source: SPI_BAND,
      spi: v,
      spi_class: cls,
      drought: v <= -1,
      method: `signed ${SPI_BAND} fact: 3-month CHIRPS totals fitted to a gamma distribution and mapped to a standard normal deviate; classes per McKee, Doesken and Kleist (1993)`,
    };
  }
  if (fact?.kind === 'absence') ev.caveat(`${SPI_BAND} is a signed absence here (${String(fact.absence_reason ?? 'no reason')}); falling back to the stored daily rainfall.`);

  const points = (await ev.history(cell, CHIRPS_BAND)).filter((p) => pointValue(p) !== undefined);
  const anomaly = recentAnomaly(points.map((p) => ({ tslot: p.tslot, value: pointValue(p)! })));
  const method = `fallback when no ${SPI_BAND} fact is available: standardized anomaly of the stored ${CHIRPS_BAND} history at the cell, z = (mean of the last ${RECENT_DAYS} days − mean of the earlier days) / (sample sd of the earlier days / √n_recent); needs at least ${MIN_HISTORY} stored daily values and 2 before the window; |z| ≥ ${Z_SIGNAL} is reported as a signal. Not a gamma-fitted SPI.`;
  // The points are signed either way: they back the computed z or the count behind "inconclusive".
  ev.use(CHIRPS_BAND, points, cell);
  if (anomaly.status === 'inconclusive') {
    const env = await ev.envelope(place, cell);
    return { ...env, status: 'inconclusive', source: null, spi: null, spi_class: null, drought: null, anomaly, observed_values: anomaly.observed, method, reason: anomaly.reason };
  }
  ev.caveat(
    'The fallback z-score treats days as independent; daily rainfall is skewed and autocorrelated, so |z| overstates the evidence compared with a gamma-fitted SPI, and McKee classes are not applied to it.',
  );
  const env = await ev.envelope(place, cell);
  return { ...env, status: 'ok', source: 'chirps_daily_anomaly', spi: null, spi_class: null, drought: null, anomaly, observed_values: points.length, method };
}
