/**
 * The text ranking of note search (docs/memory.md, "How search ranks"), pure: the stores hand
 * over candidates and their scope's statistics (src/store/memory.ts), this module scores them, so
 * SQLite and PostgreSQL rank alike to the last digit.
 *
 * Score of a note for weighted terms q (weight w_q):
 *   Σ_q w_q · idf(q) · f_q (k1 + 1) / (f_q + k1)             (BM25F)
 *   f_q = tf_text(q) / (1 − b + b · len / avg_len) + W_speaker · tf_speaker(q) + W_tags · tf_tags(q)
 *   idf(q) = ln(1 + (N − df_q + 0.5) / (df_q + 0.5))          N, df, avg_len: the scope's own
 * plus a proximity bonus for each pair of the query's own terms found near each other in the
 * text: P · min(idf_a, idf_b) / d, d ≤ PROXIMITY_WINDOW the least distance in words (1 =
 * adjacent). Feedback terms (`feedbackTerms`) enter with weights below 1 and no proximity.
 */
import type { NoteDocument } from '../../store/note-terms.js';
import { isStopTerm } from './note-query.js';

/** The ranking's parameters, fixed and served in every answer (`ranking_parameters`). */
export const RANKING = {
  k1: 1.2,
  /**
   * Length normalisation, lower than the usual 0.75: in a conversation the turns that tell
   * something are the long ones, and a strong norm ranks short chit-chat holding a query word
   * above them (evaluation set, dev part: recall@10 0.587 at 0.75, 0.625 at 0.25).
   */
  b: 0.25,
  /** Weight of a term in the note's speaker over one in its text: "what did Caroline say" meets notes Caroline spoke. */
  speaker: 1.5,
  /** Weight of a term in a tag. */
  tags: 1.0,
  /** Proximity bonus scale, and the largest distance (words) that earns one. */
  proximity: 0.25,
  proximity_window: 6,
  /**
   * Pseudo-relevance feedback (on request: it did not help on the evaluation set, docs/memory.md):
   * terms taken from the best `docs` notes of a first pass, at most `terms`, the best weighted `weight`.
   */
  feedback: { docs: 4, terms: 6, weight: 0.15, min_docs: 2 },
  /**
   * Multiplier of a note whose observed_at lies in the query's time expression: large enough
   * that such notes come first in practice, while the words still order them (a time question
   * names a period, and a note outside it rarely answers it).
   */
  time_boost: 10,
} as const;

export interface WeightedTerm {
  term: string;
  weight: number;
  /** The query's own term (proximity pairs are formed from these only). */
  own: boolean;
}

export interface ScopeStats {
  notes: number;
  tokens: number;
  df: Map<string, number>;
}

export function idf(stats: ScopeStats, term: string): number {
  const n = Math.max(stats.notes, 1);
  const df = Math.min(stats.df.get(term) ?? 0, n);
  return Math.log(1 + (n - df + 0.5) / (df + 0.5));
}

/** The BM25F score of one document (0 when it holds none of the terms). */
export function scoreDocument(terms: readonly WeightedTerm[], doc: NoteDocument, stats: ScopeStats): number {
  const avg = stats.notes > 0 && stats.tokens > 0 ? stats.tokens / stats.notes : Math.max(1, doc.text.length);
  const norm = 1 - RANKING.b + (RANKING.b * doc.text.length) / avg;
  const wanted = new Map<string, number>();
  terms.forEach((t, i) => wanted.set(t.term, i));
  const tfText = new Float64Array(terms.length);
  const positions: number[][] = terms.map(() => []);
  doc.text.forEach((term, pos) => {
    const i = wanted.get(term);
    if (i === undefined) return;
    tfText[i]++;
    if (terms[i].own && positions[i].length < 64) positions[i].push(pos);
  });
  const tfOther = new Float64Array(terms.length);
  for (const term of doc.speaker) {
    const i = wanted.get(term);
    if (i !== undefined) tfOther[i] += RANKING.speaker;
  }
  for (const term of doc.tags) {
    const i = wanted.get(term);
    if (i !== undefined) tfOther[i] += RANKING.tags;
  }
  let score = 0;
  const idfs = terms.map((t) => idf(stats, t.term));
  terms.forEach((t, i) => {
    const f = tfText[i] / norm + tfOther[i];
    if (f > 0) score += t.weight * idfs[i] * ((f * (RANKING.k1 + 1)) / (f + RANKING.k1));
  });
  for (let i = 0; i < terms.length; i++) {
    if (positions[i].length === 0) continue;
    for (let j = i + 1; j < terms.length; j++) {
      if (positions[j].length === 0) continue;
      const d = nearest(positions[i], positions[j]);
      if (d <= RANKING.proximity_window) score += (RANKING.proximity * Math.min(idfs[i], idfs[j])) / d;
    }
  }
  return score;
}

/**
 * The most a note can score from `terms` (weight 1, the query's own) when it holds no other
 * query term: each term's idf × (k1 + 1), which f(k1 + 1)/(f + k1) never reaches, plus every
 * pair's largest proximity bonus.
 */
export function maxScore(terms: readonly string[], stats: ScopeStats): number {
  const idfs = terms.map((t) => idf(stats, t));
  let bound = idfs.reduce((a, x) => a + x * (RANKING.k1 + 1), 0);
  for (let i = 0; i < idfs.length; i++) for (let j = i + 1; j < idfs.length; j++) bound += RANKING.proximity * Math.min(idfs[i], idfs[j]);
  return bound;
}

/** Least distance between two ascending position lists. */
function nearest(a: readonly number[], b: readonly number[]): number {
  let i = 0;
  let j = 0;
  let best = Number.POSITIVE_INFINITY;
  while (i < a.length && j < b.length) {
    best = Math.min(best, Math.abs(a[i] - b[j]));
    if (a[i] < b[j]) i++;
    else j++;
  }
  return best;
}

/**
 * Candidate feedback terms from the best notes of a first pass: each text term's share of each
 * note's length, weighted by the note's score over the best, summed. Terms of the query, question
 * words, one-letter terms and terms found in fewer than `min_docs` of those notes are left out
 * (a term in one note only is that note's, not the topic's). Best first, at most `limit`.
 */
export function feedbackCandidates(top: ReadonlyArray<{ doc: NoteDocument; score: number }>, query: ReadonlySet<string>, limit: number): Array<{ term: string; mass: number }> {
  const best = top[0]?.score ?? 0;
  if (!(best > 0)) return [];
  const mass = new Map<string, number>();
  const docs = new Map<string, number>();
  for (const { doc, score } of top) {
    if (doc.text.length === 0) continue;
    const seen = new Set<string>();
    for (const term of doc.text) {
      if (query.has(term) || term.length < 2 || isStopTerm(term)) continue;
      mass.set(term, (mass.get(term) ?? 0) + score / best / doc.text.length);
      if (!seen.has(term)) {
        seen.add(term);
        docs.set(term, (docs.get(term) ?? 0) + 1);
      }
    }
  }
  return [...mass.entries()]
    .filter(([term]) => (docs.get(term) ?? 0) >= Math.min(RANKING.feedback.min_docs, top.length))
    .map(([term, m]) => ({ term, mass: m }))
    .sort((a, b) => b.mass - a.mass || (a.term < b.term ? -1 : 1))
    .slice(0, limit);
}

/** Feedback terms weighted: mass × idf, the best at RANKING.feedback.weight, at most RANKING.feedback.terms. */
export function feedbackTerms(candidates: ReadonlyArray<{ term: string; mass: number }>, stats: ScopeStats): WeightedTerm[] {
  const scored = candidates
    .map((c) => ({ term: c.term, s: c.mass * idf(stats, c.term) }))
    .filter((c) => c.s > 0)
    .sort((a, b) => b.s - a.s || (a.term < b.term ? -1 : 1))
    .slice(0, RANKING.feedback.terms);
  const top = scored[0]?.s ?? 0;
  return scored.map((c) => ({ term: c.term, weight: (RANKING.feedback.weight * c.s) / top, own: false }));
}
