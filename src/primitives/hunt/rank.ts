/**
 * Ranking of hunt candidates by the primary band only, in the algorithm's declared direction.
 * Ties break on cell64 so that two calls over the same samples return the same order. The
 * comparator lives in the protocol module, so a verifier checks hotspot order with the very
 * rule that produced it.
 */
import { compareRanked, type Ranked } from '../../protocol/hunt-ranking.js';
import type { HuntRank } from '../../registry/registry.js';

export { directionText } from '../../protocol/hunt-ranking.js';
export type Candidate = Ranked;

/** Candidates best first. */
export function rankCandidates<T extends Candidate>(list: readonly T[], direction: HuntRank): T[] {
  return [...list].sort((a, b) => compareRanked(a, b, direction));
}
