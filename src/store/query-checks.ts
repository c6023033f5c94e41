/**
 * The checks both drivers make on a query before turning it into SQL, written once. Primitives
 * pass values the operation schemas already checked; these guard the store contract itself
 * (a caller inside the service, a test), so a bad value is a typed error, never a failed statement.
 */
import { invalidArgument } from '../protocol/errors.js';
import { isoSeconds } from '../protocol/receipt.js';

/** The most rows one memory-index query returns, whatever the caller asks. */
export const MAX_QUERY_LIMIT = 1000;

/** A row limit: a non-negative integer, capped at MAX_QUERY_LIMIT. */
export function limitOf(n: unknown): number {
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) throw new RangeError('limit: expected a non-negative integer');
  return Math.min(n, MAX_QUERY_LIMIT);
}

/**
 * A transaction-time bound (as_of, recorded_at, as_of_signed_at …) as ISO seconds, the form
 * accepted_at is stored and compared in; anything else is invalid_argument naming the field.
 */
export function isoBound(field: string, v: unknown): string {
  try {
    if (typeof v !== 'string') throw new TypeError();
    return isoSeconds(v);
  } catch {
    throw invalidArgument(field, `${JSON.stringify(v)} is not an RFC 3339 time`);
  }
}

export function finite(field: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new RangeError(`${field}: expected a finite number`);
  return v;
}

/** Distinct strings of a list filter. */
export function distinctStrings(field: string, v: unknown): string[] {
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw new TypeError(`${field}: expected an array of strings`);
  return [...new Set(v as string[])];
}

/** Candidates per term at most (NoteSearch.per_term), on every driver. */
export const MAX_PER_TERM = 4000;
/** Terms a candidate search takes at most. */
const MAX_TERMS = 64;

/**
 * NoteSearch's terms with each one's candidate bound (`per_term`: one bound for all, or one per
 * term in order; default `limit`), validated, distinct (a repeated term keeps its first bound).
 */
export function termBounds(terms: unknown, perTerm: unknown, limit: number): Array<[string, number]> {
  if (terms === undefined) return [];
  if (!Array.isArray(terms) || !terms.every((x) => typeof x === 'string')) throw new TypeError('terms: expected an array of strings');
  if (Array.isArray(perTerm) && perTerm.length !== terms.length) throw new RangeError('per_term: expected one bound per term');
  const out = new Map<string, number>();
  terms.forEach((t: string, i) => {
    const raw = Array.isArray(perTerm) ? perTerm[i] : (perTerm ?? limit);
    if (!out.has(t)) out.set(t, Math.max(1, Math.min(MAX_PER_TERM, Math.floor(finite('per_term', raw)))));
  });
  return [...out.entries()].slice(0, MAX_TERMS);
}
