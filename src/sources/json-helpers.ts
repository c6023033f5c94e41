/**
 * The helpers the JSON-speaking connectors (Open-Meteo, SoilGrids, ORNL DAAC MODIS) share:
 * failure → outcome mapping, strict field reads that turn a wrong shape into
 * `source_format_mismatch`, single-flight of identical upstream calls, upstream-unit
 * conversion, and the optional ranged-history hook backfill uses.
 *
 * Kept apart from json-connectors.ts (which lists the connectors) so that connector files can
 * import these without importing the list that imports them.
 */
import type { MaterializeOutcome, Materializer, MaterializeRequest } from './contract.js';
import { UpstreamError } from './http.js';

/** One day (or slot) of a ranged history fetch. */
export interface RangeStep {
  tslot: number;
  outcome: MaterializeOutcome;
}

/** Timing a ranged fetch works within. */
export interface RangeOptions {
  deadline: number;
  signal?: AbortSignal;
}

/** A connector that can fetch a span of past tslots of one band in one upstream request. */
export interface RangeMaterializer extends Materializer {
  /** Outcomes for every tslot in [startTslot, endTslot] (inclusive), oldest first. */
  fetchRange(cell: string, band: MaterializeRequest['band'], startTslot: number, endTslot: number, opts: RangeOptions): Promise<RangeStep[]>;
}

/** Whether a connector offers ranged history (backfill then makes one request per range). */
export function hasFetchRange(m: Materializer | undefined): m is RangeMaterializer {
  return m !== undefined && typeof (m as Partial<RangeMaterializer>).fetchRange === 'function';
}

/** A response whose shape is not the provider's documented one; becomes `source_format_mismatch`. */
export class FormatMismatch extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FormatMismatch';
  }
}

/** The outcome for a failed exchange: timeouts are `timeout`, the rest `error` (format flagged). */
export function failureOutcome(source: string, e: unknown): MaterializeOutcome {
  if (e instanceof FormatMismatch) return formatMismatch(source, e.message);
  if (e instanceof UpstreamError) {
    if (e.kind === 'timeout') return { status: 'timeout', reason: `${source}: ${e.message}` };
    if (e.kind === 'format') return formatMismatch(source, e.message);
    return { status: 'error', reason: `${source}: ${e.message}`, format_mismatch: false };
  }
  return { status: 'error', reason: `${source}: ${(e as Error)?.message ?? String(e)}`, format_mismatch: false };
}

/** The outcome for bytes that parse but do not have the documented shape. */
export function formatMismatch(source: string, why: string): MaterializeOutcome {
  return { status: 'error', reason: `source_format_mismatch: ${source}: ${why}`, format_mismatch: true };
}

/** An object field, or FormatMismatch naming the path. */
export function objectAt(x: unknown, path: string): Record<string, unknown> {
  if (typeof x !== 'object' || x === null || Array.isArray(x)) throw new FormatMismatch(`${path} is not an object`);
  return x as Record<string, unknown>;
}

/** An array field, or FormatMismatch naming the path. */
export function arrayAt(x: unknown, path: string): unknown[] {
  if (!Array.isArray(x)) throw new FormatMismatch(`${path} is not an array`);
  return x;
}

/** A string field, or FormatMismatch naming the path. */
export function stringAt(x: unknown, path: string): string {
  if (typeof x !== 'string') throw new FormatMismatch(`${path} is not a string`);
  return x;
}

/**
 * A measurement: a finite number, or null where the provider says "no value" (JSON has no NaN;
 * some encoders still write it as a string, which we read as null too). Anything else is a
 * wrong shape, never a zero.
 */
export function measurementAt(x: unknown, path: string): number | null {
  if (x === null || x === 'NaN' || x === 'nan') return null;
  if (typeof x === 'number' && Number.isFinite(x)) return x;
  throw new FormatMismatch(`${path} is not a number or null (got ${JSON.stringify(x)?.slice(0, 40)})`);
}

/** Open-Meteo's 400 body `{"error":true,"reason":"…"}`: the provider refusing the question. */
export function openMeteoRefusal(status: number, data: unknown): string | null {
  if (status !== 400) return null;
  const reason = typeof data === 'object' && data !== null ? (data as Record<string, unknown>).reason : undefined;
  return `refused the request (HTTP 400): ${typeof reason === 'string' ? reason : 'no reason given'}`;
}

/** Decimal text of a coordinate, 6 places (≈0.1 m): same centre, same URL, on every responder. */
export function coord(x: number): string {
  return String(Number(x.toFixed(6)));
}

/** Path and query of a URL (the provenance `ref`: what a verifier would call again). */
export function refOf(url: string): string {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
}

/** UTC ISO text with seconds of an Open-Meteo local time "YYYY-MM-DDTHH:MM" (timezone=UTC). */
export function utcIso(openMeteoTime: string, path: string): string {
  if (!/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2})?)?$/.test(openMeteoTime)) throw new FormatMismatch(`${path} is not an ISO date-time (got ${JSON.stringify(openMeteoTime)})`);
  const withTime = openMeteoTime.length === 10 ? `${openMeteoTime}T00:00:00` : openMeteoTime.length === 16 ? `${openMeteoTime}:00` : openMeteoTime;
  return `${withTime}Z`;
}

/** Calendar day (YYYY-MM-DD, UTC) of a day tslot (fast tempo: days since the Unix epoch). */
export function dayOfTslot(tslot: number): string {
  return new Date(tslot * 86_400_000).toISOString().slice(0, 10);
}

const ws = (s: string) => s.replace(/\s+/g, '').toLowerCase();

/**
 * A converter from an upstream unit label to a band's registry unit, or null when the pair is
 * unknown (the caller then reports a format mismatch rather than guess).
 */
export function unitConverter(upstream: string, bandUnit: string): ((v: number) => number) | null {
  const u = ws(upstream).replace(/µ/g, 'μ');
  const same = (v: number) => v;
  switch (bandUnit) {
    case 'degC':
      if (u === '°c' || u === 'degc' || u === 'celsius') return same;
      if (u === '°f' || u === 'degf' || u === 'fahrenheit') return (v) => ((v - 32) * 5) / 9;
      if (u === 'k' || u === 'kelvin') return (v) => v - 273.15;
      return null;
    case 'mm':
      if (u === 'mm') return same;
      if (u === 'inch' || u === 'in') return (v) => v * 25.4;
      return null;
    case 'm_s':
      if (u === 'm/s' || u === 'ms') return same;
      if (u === 'km/h' || u === 'kmh') return (v) => v / 3.6;
      if (u === 'mph') return (v) => v * 0.44704;
      if (u === 'kn' || u === 'kt' || u === 'knots') return (v) => (v * 1852) / 3600;
      return null;
    case 'percent':
      return u === '%' || u === 'percent' ? same : null;
    case 'ug_m3':
      return u === 'μg/m³' || u === 'μg/m3' || u === 'ug/m³' || u === 'ug/m3' ? same : null;
    case 'm':
      if (u === 'm' || u === 'metre' || u === 'meter') return same;
      if (u === 'ft' || u === 'feet') return (v) => v * 0.3048;
      return null;
    case 's':
      return u === 's' || u === 'sec' || u === 'seconds' ? same : null;
    case 'deg':
      return u === '°' || u === 'deg' || u === 'degrees' ? same : null;
    case 'm3_s':
      return u === 'm³/s' || u === 'm3/s' ? same : null;
    default:
      return null;
  }
}

/** Round to `places` decimals so float noise from unit conversion is not signed. */
export function roundTo(v: number, places: number): number {
  const f = 10 ** places;
  return Math.round(v * f) / f;
}

interface Flight<T> {
  promise: Promise<T>;
  ac: AbortController;
  live: number;
}

/**
 * Single-flight: callers asking the same key while a call is in flight share it. The shared
 * call is aborted only when every caller that joined it has given up, so one impatient caller
 * cannot fail the others.
 */
export class SingleFlight<T> {
  private flights = new Map<string, Flight<T>>();
  /** Calls actually started (tests read it). */
  started = 0;

  /** Join or start the call for `key`. */
  run(key: string, signal: AbortSignal | undefined, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    let f = this.flights.get(key);
    if (!f || f.ac.signal.aborted) {
      const ac = new AbortController();
      const flight: Flight<T> = { ac, live: 0, promise: Promise.resolve() as Promise<T> };
      this.started++;
      flight.promise = fn(ac.signal).finally(() => {
        if (this.flights.get(key) === flight) this.flights.delete(key);
      });
      this.flights.set(key, flight);
      f = flight;
    }
    const flight = f;
    flight.live++;
    let left = false;
    const leave = () => {
      if (left) return;
      left = true;
      if (--flight.live === 0) flight.ac.abort();
    };
    if (signal?.aborted) leave();
    else signal?.addEventListener('abort', leave, { once: true });
    return flight.promise.finally(() => signal?.removeEventListener('abort', leave));
  }
}
