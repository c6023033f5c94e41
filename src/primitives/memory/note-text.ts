/**
 * The text half of a note search: candidates and statistics from the store, scored by
 * note-rank.ts, with one round of pseudo-relevance feedback (docs/memory.md, "How search ranks").
 * The store is asked the same questions whatever its driver, so the result is the same.
 */
import type { MemoryReader, NoteCandidate, NoteSearch } from '../../store/memory.js';
import { unpackDocument, type NoteDocument } from '../../store/note-terms.js';
import { feedbackCandidates, feedbackTerms, maxScore, RANKING, scoreDocument, type ScopeStats, type WeightedTerm } from './note-rank.js';

/**
 * Candidates a text search takes: this budget shared by its terms, rarest first, each taking all
 * its matches or an even share of what is left, and at least MIN_PER_TERM.
 */
export const CANDIDATE_BUDGET = 600;
const MIN_PER_TERM = 60;
/** A time window's own candidates: its notes latest in valid time, at most this many. */
const WINDOW_CANDIDATES = 500;
/** Candidates a feedback term adds at most. */
const FEEDBACK_PER_TERM = 200;

export interface TextHit {
  /** The note's log position (memory.ts NoteHit.seq): `notesAt` reads the note. */
  seq: number;
  doc: NoteDocument;
  /** Raw BM25F score (the scope's statistics). */
  score: number;
  /** Whether the note was observed inside the query's time window (absent: no window). */
  inWindow?: boolean;
}

/** The score a hit is ordered by: its own, × the time boost inside the query's window. */
export const boosted = (h: TextHit): number => (h.inWindow ? h.score * RANKING.time_boost : h.score);

export interface TextRanking {
  /** Scored candidates, best first (ties: newest first); score 0 for none of the terms. */
  hits: TextHit[];
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
  opts: { window?: { from: number; to: number }; feedback: boolean; need?: number; yieldTurn: () => Promise<void> },
): Promise<TextRanking> {
  const stats = await statsFor(reader, base, own);
  const hits = new Map<number, TextHit>();
  const add = (c: NoteCandidate, doc = unpackDocument(c.doc)) => {
    if (hits.has(c.seq)) return;
    const w = opts.window;
    const inWindow = w ? c.observed_at !== null && c.observed_at >= w.from && c.observed_at <= w.to : undefined;
    hits.set(c.seq, { seq: c.seq, doc, score: 0, ...(inWindow !== undefined ? { inWindow } : {}) });
  };
  const fetch = async (terms: readonly string[], caps: readonly number[]) => {
    const hint = { df: terms.map((t) => stats.df.get(t) ?? 0), notes: stats.notes };
    for (const c of await reader.noteCandidates({ ...base, terms: [...terms], per_term: [...caps], hint, limit: 1 })) add(c);
    await opts.yieldTurn();
  };
  if (opts.window) {
    // The window's own notes (latest valid time first, bounded) holding any of the terms: a
    // note inside it is then a candidate however far down a common term's newest matches.
    const ownSet = new Set(own);
    const inside = await reader.noteCandidates({ ...base, observed_from: opts.window.from, observed_to: opts.window.to, limit: WINDOW_CANDIDATES });
    for (const c of inside) {
      const doc = unpackDocument(c.doc);
      if (doc.text.some((t) => ownSet.has(t)) || doc.speaker.some((t) => ownSet.has(t)) || doc.tags.some((t) => ownSet.has(t))) add(c, doc);
    }
    await opts.yieldTurn();
  }
  let terms: WeightedTerm[] = own.map((term) => ({ term, weight: 1, own: true }));
  const score = () => {
    for (const h of hits.values()) h.score = scoreDocument(terms, h.doc, stats);
  };
  // The query's own terms, rarest first: those whose every match fits their bound in one
  // call, then the common ones one at a time; once the `need`-th best score so far beats the
  // most a note holding none of the terms fetched could score (note-rank.ts `maxScore`), the
  // rest are not fetched: they could only add notes ranked below it.
  const caps = termCaps(own, stats, CANDIDATE_BUDGET, MIN_PER_TERM);
  const order = own.map((term, i) => ({ term, cap: caps[i], df: stats.df.get(term) ?? 0 })).filter((x) => x.cap > 0);
  order.sort((a, b) => a.df - b.df);
  let first = 0;
  while (first < order.length && order[first].df <= order[first].cap) first++;
  if (first > 0) {
    await fetch(
      order.slice(0, first).map((x) => x.term),
      order.slice(0, first).map((x) => x.cap),
    );
  }
  for (let k = first; k < order.length; k++) {
    if (k > 0 && opts.need !== undefined) {
      score();
      const kth = [...hits.values()].map(boosted).sort((a, b) => b - a)[opts.need - 1];
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
  return { hits: [...hits.values()].sort(byScore), expanded };
}

/** Best first (the time boost applied); ties to the newer note (seq order is the log's on every store). */
export function byScore(a: TextHit, b: TextHit): number {
  return boosted(b) - boosted(a) || b.seq - a.seq;
}
