/**
 * Failure outcomes shared by the raster connectors (docs/reads.md, "Materialization on a miss"): a
 * timeout or an upstream error is never an absence and never a value; wrong bytes are
 * `source_format_mismatch`.
 */
import type { MaterializeOutcome } from '../contract.js';
import { UpstreamError } from '../http.js';

/** The outcome for a thrown failure: UpstreamError kinds map to timeout / error. */
export function failureOutcome(e: unknown, what: string): MaterializeOutcome {
  if (e instanceof UpstreamError) {
    if (e.kind === 'timeout') return { status: 'timeout', reason: `${what}: ${e.message}` };
    if (e.kind === 'format') return { status: 'error', reason: `source_format_mismatch: ${what}: ${e.message}`, format_mismatch: true };
    return { status: 'error', reason: `source_fetch_failed: ${what}: ${e.message}` };
  }
  if (e instanceof Error && e.name === 'AbortError') return { status: 'timeout', reason: `${what}: aborted` };
  // Anything else is a bug here, not an upstream answer: still nothing is signed.
  return { status: 'error', reason: `internal: ${what}: ${e instanceof Error ? e.message : String(e)}` };
}

/** Rounds to `digits` decimals so that responders computing in a different order sign equal bytes. */
export function round(x: number, digits: number): number {
  const f = 10 ** digits;
  const r = Math.round(x * f) / f;
  return Object.is(r, -0) ? 0 : r;
}

/** The shortest decimal that reads back as the same float32 (a float32 sample shown as it was stored). */
export function float32Text(x: number): number {
  const f = Math.fround(x);
  for (let p = 1; p <= 9; p++) {
    const y = Number(f.toPrecision(p));
    if (Math.fround(y) === f) return y;
  }
  return f;
}

/** ISO 8601 UTC with second precision. */
export function isoSecond(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
