/**
 * Numbers, units and dates for people (docs/ask.md, "Answers"): units spelled out, sensible
 * rounding, the observation date from a fact's own capture time or its tslot. Pure, so that the
 * responder writing an answer and a verifier re-deriving it (offline, in a browser) print a reading
 * the same way, character for character.
 */
import { tslotRange, type Tempo, TEMPOS } from './tslot.js';

/** Registry unit → how a sentence says it (prefix units such as pH go before the number). */
export const UNIT_WORDS: Readonly<Record<string, { words: string; prefix?: boolean }>> = {
  degC: { words: 'degrees Celsius' },
  mm: { words: 'millimetres' },
  ug_m3: { words: 'micrograms per cubic metre' },
  m_msl: { words: 'metres above mean sea level' },
  m: { words: 'metres' },
  percent: { words: 'per cent' },
  m_s: { words: 'metres per second' },
  dB: { words: 'decibels' },
  FNU: { words: 'formazin nephelometric units' },
  g_kg: { words: 'grams per kilogram' },
  kg_dm3: { words: 'kilograms per cubic decimetre' },
  m3_s: { words: 'cubic metres per second' },
  mm_yr: { words: 'millimetres per year' },
  kWh_m2_day: { words: 'kilowatt-hours per square metre per day' },
  kWh_kWp_yr: { words: 'kilowatt-hours per kilowatt-peak per year' },
  pH: { words: 'pH', prefix: true },
  reflectance: { words: '(surface reflectance, 0 to 1)' },
  unitless: { words: '' },
  year_code: { words: '' },
  count: { words: '' },
  bit: { words: '' },
};

/** A number rounded for reading: indices to 2 decimals, large values to whole units. */
export function formatNumber(x: number, unit?: string): string {
  if (!Number.isFinite(x)) return String(x);
  const a = Math.abs(x);
  let digits: number;
  if (unit === 'unitless' || unit === 'reflectance') digits = a >= 10 ? 1 : a >= 0.1 || a === 0 ? 2 : 3;
  else if (unit === 'deg') digits = 5;
  else digits = a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 1 : 2;
  const s = x.toFixed(digits);
  return s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s;
}

/** "12.3 degrees Celsius", "pH 6.4", "0.62" — the value with its unit in words. */
export function formatValue(value: number, unit: string): string {
  const u = UNIT_WORDS[unit];
  const n = formatNumber(value, unit);
  if (!u) return `${n} ${unit.replace(/_/g, ' ')}`;
  if (u.prefix) return `${u.words} ${n}`;
  return u.words ? `${n} ${u.words}` : n;
}

/** YYYY-MM-DD of an ISO time or of Unix seconds. */
export const isoDate = (t: string | number): string => new Date(typeof t === 'number' ? t * 1000 : t).toISOString().slice(0, 10);

/**
 * When a reading was observed: the source's capture time recorded in the fact's derivation,
 * else the span of its tslot read at the band's tempo (static layers have no date).
 */
export function observedPhrase(f: Readonly<Record<string, unknown>>, tempo: string): string {
  const d = f.derivation as { captured_at?: unknown } | undefined;
  if (typeof d?.captured_at === 'string' && Number.isFinite(Date.parse(d.captured_at))) return `observed ${isoDate(d.captured_at)}`;
  const t: Tempo = (TEMPOS as readonly string[]).includes(tempo) ? (tempo as Tempo) : 'static';
  if (t === 'static' || typeof f.tslot !== 'number') return 'static layer';
  const r = tslotRange(f.tslot, t);
  const end = r.end_unix === null ? undefined : r.end_unix - 1;
  return end === undefined || isoDate(r.start_unix) === isoDate(end) ? `for ${isoDate(r.start_unix)}` : `for the slot ${isoDate(r.start_unix)} to ${isoDate(end)}`;
}

const READING_WORDS = [
  ...new Set(
    Object.values(UNIT_WORDS)
      .map((u) => u.words)
      .filter((w) => /^[a-z]/.test(w)),
  ),
].sort((a, b) => b.length - a.length);
const READING_IN_TEXT = new RegExp(`\\d[\\d.,]*\\s*(?:${READING_WORDS.join('|')})\\b|\\bpH\\s*-?\\d|\\b(?:observed|for) \\d{4}-\\d\\d-\\d\\d|for the slot \\d{4}`);

/**
 * A reading or an observation date written as plain words (a number followed by a unit in
 * words, "pH 6", "observed 2026-…"): an answer prints those only from a fact, so words around
 * the facts must not carry one of their own.
 */
export function readingInText(text: string): string | undefined {
  return READING_IN_TEXT.exec(text)?.[0];
}
