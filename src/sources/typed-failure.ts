/**
 * One mapping of a thrown failure to a typed outcome for the connectors that mix JSON or CSV
 * parsing with the shared HTTP client: a wrong shape (FormatMismatch, or the client's `format`
 * errors) is `source_format_mismatch: <source>: …`, a transport or HTTP failure
 * `source_fetch_failed: <source>: …`, a timeout a timeout outcome. Nothing is ever signed for them.
 */
import type { MaterializeOutcome } from './contract.js';
import { failureOutcome } from './cog/outcome.js';
import { FormatMismatch, formatMismatch } from './json-helpers.js';

/** The outcome for a failure of `source`. */
export function typedFailure(source: string, e: unknown): MaterializeOutcome {
  if (e instanceof FormatMismatch) return formatMismatch(source, e.message);
  return failureOutcome(e, source);
}
