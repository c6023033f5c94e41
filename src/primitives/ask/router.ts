/**
 * The /v1/ask router (docs/ask.md, "Routing"): deterministic, lexical and explainable. A question's
 * tokens (place and time words masked; words of 5 letters or more one typo from a keyword word
 * corrected first) are matched against the topic keywords, longest first: phrase patterns and
 * multi-word keywords, then single words by stem, then synonyms. Each match adds its weight to its
 * topic and is listed in `matched_keywords`, so the answer says why it was routed. Intents (hunt,
 * similar places, what changed, corpus) come from cue phrases; questions without an
 * Earth-observation topic, or with a plainly off-topic request, are out of scope.
 */
import { AREA_WORDS, HUNT_CUES, NEGATIONS, OFF_TOPIC, STOP_WORDS, SYNONYMS } from './lexicon.js';
import { findPattern, type Pattern } from './patterns.js';
import { WEIGHTS, typoFix, type EventTerm, type RouterIndex, type Term } from './router-index.js';
import { stemsOf, type Token } from './text.js';

export type Intent = 'topical' | 'hunt' | 'similar' | 'change' | 'corpus' | 'out_of_scope';

/** Why a topic scored: one matched keyword or pattern. */
export interface MatchedKeyword {
  topic: string;
  keyword: string;
  /** The words of the question that matched. */
  matched: string;
  how: 'exact' | 'stem' | 'phrase' | 'pattern' | 'synonym' | 'typo';
  weight: number;
  /** A negation stands within three words before the match ("not flooded"): still routed. */
  negated?: boolean;
}

export interface RouteResult {
  intent: Intent;
  /** Top-1 topic; null when out of scope or when no topic applies (a corpus question). */
  topic: string | null;
  matched_topics: string[];
  matched_keywords: MatchedKeyword[];
  scores: Array<{ topic: string; score: number }>;
  out_of_scope: boolean;
  /** The words that made the question off topic, when that was the reason. */
  off_topic: string | null;
  negated: boolean;
  hunt: { event: string; term: string; algorithm: string | null; topic: string } | null;
  /** Intent cue phrases that matched. */
  cues: string[];
}

/** Below this total a question has no Earth-observation topic. */
export const SCORE_THRESHOLD = 0.6;
/** An "unless strong" off-topic word is overridden only by this much topic evidence. */
export const STRONG_SCORE = 2;
const NEGATION_WINDOW = 3;
const NONE: ReadonlySet<number> = new Set();

const round3 = (x: number) => Math.round(x * 1000) / 1000;
const CJK = /[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]/;
const CJK_SYNONYMS = Object.entries(SYNONYMS)
  .filter(([k]) => CJK.test(k))
  .sort((a, b) => b[0].length - a[0].length);

const synonymCache = new WeakMap<RouterIndex, Map<string, readonly Term[]>>();

/** The keyword terms a synonym's target names (stemmed once per index). */
function synonymTerms(ix: RouterIndex, target: string): readonly Term[] {
  let cache = synonymCache.get(ix);
  if (!cache) synonymCache.set(ix, (cache = new Map()));
  let terms = cache.get(target);
  if (!terms) cache.set(target, (terms = ix.byKeyword.get(stemsOf(target).join(' ')) ?? []));
  return terms;
}

function negatedAt(tokens: readonly Token[], start: number): boolean {
  for (let i = Math.max(0, start - NEGATION_WINDOW); i < start; i++) if (NEGATIONS.has(tokens[i].norm)) return true;
  return false;
}

function surface(tokens: readonly Token[], from: number, to: number): string {
  return tokens
    .slice(from, to + 1)
    .map((t) => t.raw)
    .join(' ');
}

/** Route a tokenized question; `masked` holds the token indices of the place and time words. */
export function route(ix: RouterIndex, input: readonly Token[], masked: ReadonlySet<number>, cjkMasked: readonly string[] = []): RouteResult {
  // Typos first, so a misspelt word still completes a phrase ("surface temprature").
  const typos = new Set<number>();
  const tokens = input.map((t) => {
    if (t.script !== 'latin' || masked.has(t.i) || STOP_WORDS.has(t.norm) || ix.knownStems.has(t.stem) || SYNONYMS[t.norm]) return t;
    const fix = typoFix(ix, t.norm);
    if (!fix) return t;
    typos.add(t.i);
    return { ...t, stem: fix.stem };
  });
  const stems = new Set(tokens.map((t) => t.stem));
  const matches: MatchedKeyword[] = [];
  const consumed = new Set<number>(masked);
  const add = (term: Pick<Term, 'topic' | 'keyword'>, how: MatchedKeyword['how'], weight: number, from: number, to: number, text?: string) => {
    let typo = false;
    for (let i = from; i <= to; i++) if (typos.has(i)) typo = true;
    const m: MatchedKeyword = { topic: term.topic, keyword: term.keyword, matched: text ?? surface(tokens, from, to), how: typo ? 'typo' : how, weight: round3(typo ? weight * WEIGHTS.typo : weight) };
    if (negatedAt(tokens, from)) m.negated = true;
    matches.push(m);
  };

  // 1. Multi-token evidence, longest first: words claimed by a longer match are not re-used.
  type Span = { from: number; to: number; literal: number[]; apply: () => void; size: number };
  const spans: Span[] = [];
  for (const p of ix.patterns) {
    const m = findPattern(p.pattern, tokens, masked, stems);
    // A pattern's size counts its content words: "is the air *" is one word ("air") plus its frame.
    const size = m ? m.literal.filter((i) => !STOP_WORDS.has(tokens[i].norm)).length + 0.5 : 0;
    if (m) spans.push({ from: m.start, to: m.end, literal: m.literal, size, apply: () => add({ topic: p.topic, keyword: p.pattern.text }, 'pattern', p.weight, m.start, m.end) });
  }
  for (const t of ix.multi) {
    if (!stems.has(t.stems[0]) || !stems.has(t.stems[t.stems.length - 1])) continue;
    for (let s = 0; s + t.stems.length <= tokens.length; s++) {
      let ok = true;
      for (let k = 0; k < t.stems.length && ok; k++) ok = !masked.has(s + k) && tokens[s + k].stem === t.stems[k];
      if (!ok) continue;
      const lit = t.stems.map((_, k) => s + k);
      spans.push({ from: s, to: s + t.stems.length - 1, literal: lit, size: t.stems.length, apply: () => add(t, 'phrase', t.weight, s, s + t.stems.length - 1) });
      break;
    }
  }
  spans.sort((a, b) => b.size - a.size || a.from - b.from);
  const owner = new Map<number, Span>();
  for (const sp of spans) {
    // Overlapping matches of one size all count (two readings of the same words); a smaller one does not.
    if (sp.literal.some((i) => (owner.get(i)?.size ?? 0) > sp.size)) continue;
    for (const i of sp.literal) if (!owner.has(i)) owner.set(i, sp);
    sp.apply();
  }
  for (const i of owner.keys()) consumed.add(i);

  // 2. Single words: by stem (a corrected typo included), then synonyms.
  for (const t of tokens) {
    if (consumed.has(t.i)) continue;
    const exact = ix.single.get(t.stem);
    if (exact && !(STOP_WORDS.has(t.norm) && t.norm.length < 4)) {
      for (const term of exact) add(term, term.stems[0] === t.norm || term.keyword === t.norm ? 'exact' : 'stem', term.weight, t.i, t.i);
      continue;
    }
    const syn = SYNONYMS[t.norm];
    if (syn) for (const term of synonymTerms(ix, syn)) add(term, 'synonym', term.weight * WEIGHTS.synonym, t.i, t.i);
  }
  // CJK runs have no spaces: their synonyms are found inside the run (place names taken out first).
  for (const t of tokens) {
    if (t.script !== 'cjk') continue;
    let text = t.raw;
    for (const p of cjkMasked) text = text.split(p).join(' ');
    for (const [word, target] of CJK_SYNONYMS) {
      if (!text.includes(word)) continue;
      text = text.split(word).join(' ');
      for (const term of synonymTerms(ix, target)) add(term, 'synonym', term.weight * WEIGHTS.synonym, t.i, t.i, word);
    }
  }

  const totals = new Map<string, number>();
  // Ties break by the topic with the strongest single piece of evidence, then by key: deterministic.
  const strongest = new Map<string, number>();
  for (const m of matches) {
    totals.set(m.topic, (totals.get(m.topic) ?? 0) + m.weight);
    strongest.set(m.topic, Math.max(strongest.get(m.topic) ?? 0, m.weight));
  }
  const scores = [...totals.entries()]
    .map(([topic, score]) => ({ topic, score: round3(score) }))
    .sort((a, b) => b.score - a.score || strongest.get(b.topic)! - strongest.get(a.topic)! || (a.topic < b.topic ? -1 : 1));

  return decide(ix, tokens, masked, matches, scores, stems);
}

function firstPattern(patterns: readonly Pattern[], tokens: readonly Token[], blocked: ReadonlySet<number>, stems: ReadonlySet<string>): string | undefined {
  for (const p of patterns) if (findPattern(p, tokens, blocked, stems)) return p.text;
  return undefined;
}

function findEvent(ix: RouterIndex, tokens: readonly Token[], masked: ReadonlySet<number>, stems: ReadonlySet<string>): EventTerm | undefined {
  for (const e of ix.events) {
    if (!e.stems.every((s) => stems.has(s))) continue;
    for (let s = 0; s + e.stems.length <= tokens.length; s++) {
      let ok = true;
      for (let k = 0; k < e.stems.length && ok; k++) ok = !masked.has(s + k) && tokens[s + k].stem === e.stems[k];
      if (ok) return e;
    }
  }
  return undefined;
}

function huntCue(tokens: readonly Token[], masked: ReadonlySet<number>): string | undefined {
  for (const t of tokens) {
    if (masked.has(t.i) || !HUNT_CUES.has(t.norm)) continue;
    if (t.norm === 'which') {
      const next = tokens[t.i + 1];
      if (next && AREA_WORDS.has(next.norm)) return `which ${next.norm}`;
      continue;
    }
    if (t.norm === 'spot' || t.norm === 'map') {
      // "spot" and "map" are cues as verbs at the start ("map the floods"), not as nouns.
      if (t.i === 0 || ['to', 'me', 'can', 'you', 'please'].includes(tokens[t.i - 1].norm)) return t.norm;
      continue;
    }
    return t.norm;
  }
  return undefined;
}

function offTopic(ix: RouterIndex, tokens: readonly Token[], masked: ReadonlySet<number>, stems: ReadonlySet<string>): { word: string; always: boolean } | undefined {
  const phrase = firstPattern(ix.offTopicPhrases, tokens, masked, stems);
  if (phrase) return { word: phrase, always: true };
  for (const t of tokens) if (!masked.has(t.i) && OFF_TOPIC.always.has(t.norm)) return { word: t.raw, always: true };
  for (const t of tokens) if (!masked.has(t.i) && OFF_TOPIC.unless_strong.has(t.norm)) return { word: t.raw, always: false };
  return undefined;
}

function decide(ix: RouterIndex, tokens: readonly Token[], masked: ReadonlySet<number>, matches: MatchedKeyword[], scores: RouteResult['scores'], stems: ReadonlySet<string>): RouteResult {
  const top = scores[0];
  const base: RouteResult = {
    intent: 'topical',
    topic: top?.topic ?? null,
    matched_topics: [],
    matched_keywords: matches,
    scores: scores.slice(0, 5),
    out_of_scope: false,
    off_topic: null,
    negated: matches.some((m) => m.negated),
    hunt: null,
    cues: [],
  };
  const ranked = (first?: string) => {
    const list = scores.filter((s) => top && s.score >= top.score * 0.5).map((s) => s.topic);
    const out = first ? [first, ...list.filter((t) => t !== first)] : list;
    return out.slice(0, 3);
  };
  const outOfScope = (why: string | null): RouteResult => ({ ...base, intent: 'out_of_scope', topic: null, matched_topics: [], out_of_scope: true, off_topic: why, hunt: null });

  const off = offTopic(ix, tokens, masked, stems);
  if (off && (off.always || !top || top.score < STRONG_SCORE)) return outOfScope(off.word);

  const corpus = firstPattern(ix.corpus, tokens, masked, stems);
  if (corpus) {
    const topic = top && top.score >= SCORE_THRESHOLD ? top.topic : null;
    return { ...base, intent: 'corpus', topic, matched_topics: topic ? ranked() : [], cues: [corpus] };
  }
  const similar = firstPattern(ix.similar, tokens, NONE, stems);
  if (similar) return { ...base, intent: 'similar', topic: 'similarity', matched_topics: ranked('similarity'), cues: [similar] };
  const change = firstPattern(ix.change, tokens, NONE, stems);
  if (change) return { ...base, intent: 'change', topic: 'change_detection', matched_topics: ranked('change_detection'), cues: [change] };

  const event = findEvent(ix, tokens, masked, stems);
  const cue = event ? huntCue(tokens, masked) : undefined;
  if (event && cue) {
    return {
      ...base,
      intent: 'hunt',
      topic: event.topic,
      matched_topics: ranked(event.topic),
      cues: [cue],
      hunt: { event: event.event, term: event.term, algorithm: event.algorithm, topic: event.topic },
    };
  }
  if (!top || top.score < SCORE_THRESHOLD) return outOfScope(null);
  return { ...base, matched_topics: ranked() };
}
