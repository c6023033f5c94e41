/**
 * Strict RFC 3339 date-time (section 5.6) for timestamps a client sends. Date.parse is not a
 * validator: it takes "1" (year 2001), rolls "2026-02-31" over to March 3, and reads expanded
 * years such as "+010000-01-01T00:00Z" whose normalised text is no longer RFC 3339. A timestamp
 * that reaches a signed body or a receipt must be one, so this accepts only
 *   YYYY-MM-DD "T" hh:mm:ss [.fraction] ("Z" | ±hh:mm)
 * with a real calendar day, T and Z in either case (RFC 3339 5.6, note), and an instant that is
 * itself inside 0000-01-01T00:00:00Z..9999-12-31T23:59:59.999Z, so its UTC text has four-digit
 * years too. A leap second (ss = 60) is valid RFC 3339 but has no Unix time: refused rather than
 * silently moved. Fractions finer than a millisecond are truncated.
 * Pure and browser-safe, like everything in protocol/.
 */

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

/** 0000-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z in Unix milliseconds. */
const MIN_MS = -62_167_219_200_000;
const MAX_MS = 253_402_300_799_999;

/** Proleptic Gregorian month lengths (RFC 3339 appendix C): leap years by 4, not 100, but 400. */
function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/**
 * Unix milliseconds of a strict RFC 3339 date-time, or NaN for anything else (Date.parse's
 * contract, so it can replace Date.parse at a call site that already checks Number.isFinite).
 */
export function parseRfc3339(text: unknown): number {
  if (typeof text !== 'string') return NaN;
  const m = DATE_TIME.exec(text);
  if (!m) return NaN;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return NaN;
  if (hour > 23 || minute > 59 || second > 59) return NaN;
  let offsetMinutes = 0;
  if (m[8] !== undefined) {
    const [oh, om] = [Number(m[9]), Number(m[10])];
    if (oh > 23 || om > 59) return NaN;
    offsetMinutes = (m[8] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  // Digits, not float arithmetic: "0.29" * 1000 is not exactly 290.
  const millis = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, '0'));
  // setUTCFullYear, not Date.UTC: Date.UTC maps years 0..99 to 1900..1999.
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, millis);
  const ms = d.getTime() - offsetMinutes * 60_000;
  return ms >= MIN_MS && ms <= MAX_MS ? ms : NaN;
}

/** True when `text` is a strict RFC 3339 date-time (see parseRfc3339). */
export function isRfc3339(text: unknown): text is string {
  return Number.isFinite(parseRfc3339(text));
}
