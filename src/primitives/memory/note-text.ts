/**
 * The text half of a note search: candidates and statistics from the store, scored by
 * note-rank.ts, with one round of pseudo-relevance feedback (docs/memory.md, "How search ranks").
 * The store is asked the same questions whatever its driver, so the result is the same.
 */
import type { MemoryReader, NoteHit, NoteSearch } from '../../store/memory.js';
import { unpackDocument, type NoteDocument } from '../../store/note-terms.js';
import { feedbackCandidates, feedbackTerms, maxScore, RANKING, scoreDocument, type ScopeStats, type WeightedTerm } from './note-rank.js';

/**
 * Candidates a text search takes: this budget shared by its terms, rarest first, each taking all
 * its matches or an even share of what is left, and at least MIN_PER_TERM.
 */
export const CANDIDATE_BUDGET = 1000;
const MIN_PER_TERM = 100;
/** Candidates a feedback term adds at most. */
const FEEDBACK_PER_TERM = 200;

export interface TextHit {
  hit: NoteHit;
  doc: NoteDocument;
  /** Raw BM25F score (the scope's statistics). */
  score: number;
}

export interface TextRanking {
  hits: Map<string, TextHit>;
  /** Feedback terms that entered the ranking, with their weights. */
  expanded: Array<{ term: string; weight: number }>;
}

/**
 * Each term's bound: rarest first, all of its matches while they fit an even share of the budget
 * left, else that share (at least `least`). A term no note lists gets 0 (not asked at all). The
 * rare terms, which decide a ranking, are thereby exact; common ones bring their newest matches.
 */
export function termCaps(terms: readonly string[], stats: ScopeStats, budget: number, least: number): number[] {
  const caps = terms.map(() => 0);
  const order = terms.map((t, i) => ({ i, df: stats.df.get(t) ?? 0 })).filter((x) => x.df > 0);
  order.sort((a, b) => a.df - b.df || a.i - b.i);
  let left = budget;
  order.forEach(({ i, df }, k) => {
    const share = Math.floor(left / (order.length - k));
    caps[i] = Math.max(least, Math.min(df, share));
    left = Math.max(0, left - Math.min(df, caps[i]));
  });
  return caps;
}

async function statsFor(reader: MemoryReader, base: Omit<NoteSearch, 'limit'>, terms: readonly string[], into?: ScopeStats): Promise<ScopeStats> {
  const got = await reader.noteStats({ scope: base.scope, terms: [...terms] });
  const stats = into ?? { notes: got.notes, tokens: got.tokens, df: new Map<string, number>() };
  terms.forEach((t, i) => stats.df.set(t, got.df[i]));
  return stats;
}

/**
 * Text candidates of `terms` under the filters (and, for a time window, the window's own
 * candidates too, so an older note inside it is not cut by the newest-first bound), scored.
 */
export async function rankText(
  reader: MemoryReader,
  base: Omit<NoteSearch, 'limit'>,
  own: readonly string[],
  /** need: how many of the best must be exact (absent: every candidate is wanted, as a blend with vectors needs). */
  opts: { vectors: boolean; window?: { from: number; to: number }; feedback: boolean; need?: number; yieldTurn: () => Promise<void> },
): Promise<TextRanking> {
  const stats = await statsFor(reader, base, own);
  const hits = new Map<string, TextHit>();
  const fetch = async (terms: readonly string[], caps: readonly number[]) => {
    const asks: NoteSearch[] = [{ ...base, terms: [...terms], per_term: [...caps], vectors: opts.vectors, limit: 1000 }];
    if (opts.window) asks.push({ ...asks[0], observed_from: opts.window.from, observed_to: opts.window.to });
    for (const ask of asks) {
      for (const h of await reader.searchNotes(ask)) {
        if (!hits.has(h.fact_cid) && h.doc !== null) hits.set(h.fact_cid, { hit: h, doc: unpackDocument(h.doc), score: 0 });
      }
      await opts.yieldTurn();
    }
  };
  let terms: WeightedTerm[] = own.map((term) => ({ term, weight: 1, own: true }));
  const score = () => {
    for (const h of hits.values()) h.score = scoreDocument(terms, h.doc, stats);
  };
  // The query's own terms, rarest first, one at a time; once the `need`-th best score so far
  // beats the most a note holding none of the terms fetched could score (note-rank.ts
  // `maxScore`), the rest are not fetched: they could only add notes ranked below it.
  const caps = termCaps(own, stats, CANDIDATE_BUDGET, MIN_PER_TERM);
  const order = own.map((term, i) => ({ term, cap: caps[i], df: stats.df.get(term) ?? 0 })).filter((x) => x.cap > 0);
  order.sort((a, b) => a.df - b.df);
  for (let k = 0; k < order.length; k++) {
    if (k > 0 && opts.need !== undefined) {
      score();
      const kth = [...hits.values()].map((h) => h.score).sort((a, b) => b - a)[opts.need - 1];
      const rest = order.slice(k).map((x) => x.term);
      if (kth !== undefined && kth > maxScore(rest, stats) * (opts.window ? RANKING.time_boost : 1)) break;
    }
    await fetch([order[k].term], [order[k].cap]);
  }
  score();
  let expanded: TextRanking['expanded'] = [];
  if (opts.feedback) {
    const top = [...hits.values()]
      .filter((h) => h.score > 0)
      .sort(byScore)
      .slice(0, RANKING.feedback.docs);
    const candidates = feedbackCandidates(top, new Set(own), RANKING.feedback.terms * 3);
    if (candidates.length > 0) {
      await statsFor(
        reader,
        base,
        candidates.map((c) => c.term),
        stats,
      );
      const extra = feedbackTerms(candidates, stats);
      if (extra.length > 0) {
        await fetch(
          extra.map((t) => t.term),
          extra.map(() => FEEDBACK_PER_TERM),
        );
        terms = [...terms, ...extra];
        expanded = extra.map((t) => ({ term: t.term, weight: Number(t.weight.toFixed(6)) }));
        score();
      }
    }
  }
  return { hits, expanded };
}

/** Best first; ties by fact_cid, so both stores order equal scores alike. */
export function byScore(a: { score: number; hit: { fact_cid: string } }, b: { score: number; hit: { fact_cid: string } }): number {
  return b.score - a.score || (a.hit.fact_cid < b.hit.fact_cid ? -1 : a.hit.fact_cid > b.hit.fact_cid ? 1 : 0);
}
