/**
 * Ranking of hunt candidates by the primary band only, in the algorithm's declared direction.
 * Ties break on cell64 so that two calls over the same samples return the same order.
 */
import type { HuntRank } from '../../registry/registry.js';

export interface Candidate {
  cell64: string;
  value: number;
}

const score: Record<HuntRank, (v: number) => number> = {
  desc: (v) => v,
  asc: (v) => -v,
  abs_desc: (v) => Math.abs(v),
};

/** Candidates best first. */
export function rankCandidates<T extends Candidate>(list: readonly T[], direction: HuntRank): T[] {
  const s = score[direction];
  return [...list].sort((a, b) => s(b.value) - s(a.value) || (a.cell64 < b.cell64 ? -1 : a.cell64 > b.cell64 ? 1 : 0));
}

/** Words for the direction, for the answer and its caveats. */
export function directionText(direction: HuntRank): string {
  return direction === 'desc' ? 'highest first' : direction === 'asc' ? 'lowest first' : 'largest magnitude first';
}
