/**
 * Shared shapes of the whole-response checks beyond single facts: what a response shows against
 * what its receipts bind (bound_not_shown), memory search results, hunt hotspots and ask
 * answers. Each check reads the cid-checked fact bodies and the receipt covering the part it
 * checks, and reports coded failures; none throws on malformed input.
 */
import type { ReceiptFailure } from './receipt.js';

/** Closed set of reasons a response fails beyond its receipts' own. */
export type ResponseFailure =
  | ReceiptFailure
  | 'no_receipt'
  | 'cid_mismatch'
  | 'unbound_fact'
  | 'cell_not_in_receipt'
  | 'cell_mismatch'
  | 'unbound_reference'
  | 'reference_mismatch'
  | 'bound_not_shown'
  | 'result_mismatch'
  | 'rank_mismatch'
  | 'score_inconsistent'
  | 'hotspot_mismatch'
  | 'answer_mismatch'
  | 'field_mismatch';

export type Json = Record<string, unknown>;
export const isObject = (x: unknown): x is Json => typeof x === 'object' && x !== null && !Array.isArray(x);

/** One check over a part of the response (a receipt's list, search results, hotspots, an answer). */
export interface CheckReport {
  path: string;
  check: 'bound_shown' | 'search_results' | 'hotspots' | 'answer' | 'field_boundaries';
  ok: boolean;
  failures: ResponseFailure[];
  errors: string[];
}

/** What a shape check sees of the verified response. */
export interface CheckInput {
  /** The part being checked and where it sits. */
  node: Json;
  path: string;
  /** The receipt nearest above the part (it covers it), when that receipt verified. */
  receipt: Json | undefined;
  /** Fact bodies of the response whose fact_cid recomputes, by fact_cid. */
  facts: ReadonlyMap<string, Json>;
}

/** A fresh, passing report. */
export function newCheck(check: CheckReport['check'], path: string): CheckReport {
  return { path, check, ok: true, failures: [], errors: [] };
}

/** Record a failure on a report. */
export function fail(r: CheckReport, f: ResponseFailure, msg: string): void {
  if (!r.failures.includes(f)) r.failures.push(f);
  r.errors.push(`${f}: ${msg}`);
  r.ok = false;
}

/** Canonical JSON for comparing two shown values (key order ignored). */
export function sameJson(a: unknown, b: unknown): boolean {
  const canon = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(canon);
    if (isObject(x))
      return Object.fromEntries(
        Object.keys(x)
          .sort()
          .map((k) => [k, canon(x[k])]),
      );
    return x;
  };
  return JSON.stringify(canon(a)) === JSON.stringify(canon(b));
}
