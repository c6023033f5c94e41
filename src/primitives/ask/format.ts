/**
 * Numbers, units and dates for people (docs/ask.md, "Answers"): units spelled out, sensible
 * rounding, the observation date from the fact's own capture time or its tslot. Only for the answer
 * text: the exact values stay in `facts`. The formatting itself is pure and lives in the protocol
 * module (a verifier re-renders answers with it); what needs the registry stays here.
 */
import { observedPhrase } from '../../protocol/answer-format.js';
import type { BandEntry, Registry } from '../../registry/registry.js';
import type { ServedFact } from '../facts/facts-view.js';

export { formatNumber, formatValue, isoDate } from '../../protocol/answer-format.js';

/** When the reading was observed: the source's capture time, else the span of its tslot. */
export function observedOn(f: ServedFact, band: BandEntry | undefined): string {
  return observedPhrase(f, band?.tempo ?? 'static');
}

/** The source's name as the registry gives it (the fact names the source key). */
export function sourceName(reg: Registry, f: ServedFact): string | undefined {
  const key = typeof f.provenance === 'string' ? f.provenance : undefined;
  if (!key) return undefined;
  return reg.sources.get(key)?.name ?? key;
}
