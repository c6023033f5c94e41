/**
 * Numbers, units and dates for people (spec 4.5 answers): units spelled out, sensible rounding,
 * the observation date from the fact's own capture time or its tslot. Only for the answer text:
 * the exact values stay in `facts`.
 */
import { tslotRange, type Tempo } from '../../protocol/tslot.js';
import type { BandEntry, Registry } from '../../registry/registry.js';
import type { ServedFact } from '../facts-view.js';

/** Registry unit → how a sentence says it (prefix units such as pH go before the number). */
const UNIT_WORDS: Record<string, { words: string; prefix?: boolean }> = {
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

/** YYYY-MM-DD of an ISO time. */
export const isoDate = (t: string | number): string => new Date(typeof t === 'number' ? t * 1000 : t).toISOString().slice(0, 10);

/** When the reading was observed: the source's capture time, else the span of its tslot. */
export function observedOn(f: ServedFact, band: BandEntry | undefined): string {
  const d = f.derivation as { captured_at?: unknown } | undefined;
  if (typeof d?.captured_at === 'string' && Number.isFinite(Date.parse(d.captured_at))) return `observed ${isoDate(d.captured_at)}`;
  const tempo: Tempo = band?.tempo ?? 'static';
  if (tempo === 'static' || typeof f.tslot !== 'number') return 'static layer';
  const r = tslotRange(f.tslot, tempo);
  const end = r.end_unix === null ? undefined : r.end_unix - 1;
  return end === undefined || isoDate(r.start_unix) === isoDate(end) ? `for ${isoDate(r.start_unix)}` : `for the slot ${isoDate(r.start_unix)} to ${isoDate(end)}`;
}

/** The source's name as the registry gives it (the fact names the source key). */
export function sourceName(reg: Registry, f: ServedFact): string | undefined {
  const key = typeof f.provenance === 'string' ? f.provenance : undefined;
  if (!key) return undefined;
  return reg.sources.get(key)?.name ?? key;
}

/** Seconds as "about 30 days", "about 1 year" (cadences and tempo units). */
export function formatDuration(s: number): string {
  if (s <= 0) return 'static';
  const days = s / 86_400;
  if (days >= 360) return `about ${Math.round(days / 365)} year${Math.round(days / 365) === 1 ? '' : 's'}`;
  if (days >= 1) return `about ${Math.round(days)} day${Math.round(days) === 1 ? '' : 's'}`;
  return `about ${Math.round(s / 3600)} hours`;
}
