/**
 * The /v1/ask router (docs/ask.md, "Routing"): deterministic, lexical and explainable. A question's
 * tokens (place and time words masked; words of 5 letters or more one typo from a keyword word
 * corrected first) are matched against the topic keywords, longest first: phrase patterns and
 * multi-word keywords, then single words by stem, then synonyms. Each match adds its weight to its
 * topic and is listed in `matched_keywords`, so the answer says why it was routed. Intents (hunt,
 * similar places, what changed, corpus) come from cue phrases; questions without an
 * Earth-observation topic, or with a plainly off-topic request, are out of scope.
 */
import { ARITHMETIC_FILLERS, ARITHMETIC_VERBS, ARITHMETIC_WORDS, AREA_WORDS, HUNT_CUES, NEGATIONS, OFF_TOPIC, STOP_WORDS, SYNONYMS } from './lexicon.js';
import { findPattern, type Pattern } from './patterns.js';
import { WEIGHTS, typoFix, type EventTerm, type FrameIndex, type RouterIndex, type Term } from './router-index.js';
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
  /**
   * A composite question (lexicon.ts, COMPOSITE_FRAMES): the frame that matched and the other
   * topics it asks about besides the routed one (the answer lists them as next steps).
   */
  composite: { frame: string; cue: string; topics: string[] } | null;
}

/** What the caller knows beyond the tokens: the question text (for arithmetic signs) and whether a place is named. */
export interface RouteContext {
  text?: string;
  /** The question (or the request) names a place: a composite frame alone may then route it. */
  placeNamed?: boolean;
  /** Rivers and lakes named in the question: their first token reads as "river" or "lake" in phrase patterns only. */
  waterFeatures?: ReadonlyArray<{ token: number; word: string }>;
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
export function route(ix: RouterIndex, input: readonly Token[], masked: ReadonlySet<number>, cjkMasked: readonly string[] = [], context: RouteContext = {}): RouteResult {
  // Typos first, so a misspelt word still completes a phrase ("surface temprature").
  const typos = new Set<number>();
  const tokens = input.map((t) => {
    if (t.script !== 'latin' || masked.has(t.i) || STOP_WORDS.has(t.norm) || ix.knownStems.has(t.stem) || SYNONYMS[t.norm]) return t;
    const fix = typoFix(ix, t.norm);
    if (!fix) return t;
    typos.add(t.i);
    return { ...t, stem: fix.stem };
  });
  // A named river or lake stands for the word in phrases and multi-word keywords, never alone.
  let phraseMask = masked;
  if (context.waterFeatures?.length) {
    const open = new Set(masked);
    for (const f of context.waterFeatures) {
      if (!tokens[f.token]) continue;
      tokens[f.token] = { ...tokens[f.token], norm: f.word, stem: f.word, placeWord: true };
      open.delete(f.token);
    }
    phraseMask = open;
  }
  const stems = new Set(tokens.map((t) => t.stem));
  const matches: MatchedKeyword[] = [];
  const consumed = new Set<number>(masked);
  // Tokens some topic keyword, pattern or frame cue accounts for: an off-topic word among them is part of a topic phrase.
  const explained = new Set<number>();
  const add = (term: Pick<Term, 'topic' | 'keyword'>, how: MatchedKeyword['how'], weight: number, from: number, to: number, text?: string) => {
    let typo = false;
    for (let i = from; i <= to; i++) if (typos.has(i)) typo = true;
    // Words of multi-token matches are recorded by the literal words they claimed (below), not their gaps.
    if (from === to) explained.add(from);
    const m: MatchedKeyword = { topic: term.topic, keyword: term.keyword, matched: text ?? surface(tokens, from, to), how: typo ? 'typo' : how, weight: round3(typo ? weight * WEIGHTS.typo : weight) };
    if (negatedAt(tokens, from)) m.negated = true;
    matches.push(m);
  };

  // 1. Multi-token evidence, longest first: words claimed by a longer match are not re-used.
  type Span = { from: number; to: number; literal: number[]; apply: () => void; size: number; frame?: boolean };
  const spans: Span[] = [];
  for (const p of ix.patterns) {
    const m = findPattern(p.pattern, tokens, phraseMask, stems);
    // A pattern's size counts its content words: "is the air *" is one word ("air") plus its frame.
    const size = m ? m.literal.filter((i) => !STOP_WORDS.has(tokens[i].norm)).length + 0.5 : 0;
    if (m) spans.push({ from: m.start, to: m.end, literal: m.literal, size, apply: () => add({ topic: p.topic, keyword: p.pattern.text }, 'pattern', p.weight, m.start, m.end) });
  }
  // Composite frame cues compete for words with the topic phrases: "climate change risks" (a hazard
  // cue) takes the words from "climate change"; a cue of one word never takes a topic keyword's word.
  const frameHits: Array<{ frame: FrameIndex; cue: string; from: number; to: number; literal: number[] }> = [];
  for (const f of ix.frames) {
    for (const cue of f.cues) {
      const m = findPattern(cue, tokens, phraseMask, stems);
      if (!m) continue;
      const literal = m.literal.filter((i) => !STOP_WORDS.has(tokens[i].norm));
      const hit = { frame: f, cue: cue.text, from: m.start, to: m.end, literal: m.literal };
      spans.push({ from: m.start, to: m.end, literal: m.literal, size: literal.length, frame: true, apply: () => frameHits.push(hit) });
    }
  }
  for (const t of ix.multi) {
    if (!stems.has(t.stems[0]) || !stems.has(t.stems[t.stems.length - 1])) continue;
    for (let s = 0; s + t.stems.length <= tokens.length; s++) {
      let ok = true;
      for (let k = 0; k < t.stems.length && ok; k++) ok = !phraseMask.has(s + k) && tokens[s + k].stem === t.stems[k];
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
  for (const [i, sp] of owner) {
    if (sp.frame && sp.size < 2) continue;
    consumed.add(i);
    explained.add(i);
  }

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

  // The frame's evidence, then the final ranking.
  const composite = applyFrame(frameHits, matches, scores, tokens, context.placeNamed === true);
  for (const h of frameHits) for (const i of h.literal) explained.add(i);
  if (composite) {
    totals.clear();
    strongest.clear();
    for (const m of matches) {
      totals.set(m.topic, (totals.get(m.topic) ?? 0) + m.weight);
      strongest.set(m.topic, Math.max(strongest.get(m.topic) ?? 0, m.weight));
    }
    scores.length = 0;
    for (const [topic, score] of totals) scores.push({ topic, score: round3(score) });
    scores.sort((a, b) => b.score - a.score || strongest.get(b.topic)! - strongest.get(a.topic)! || (a.topic < b.topic ? -1 : 1));
  }

  return decide(ix, tokens, masked, matches, scores, stems, explained, context, composite);
}

/**
 * A composite frame adds a pattern's weight to the best-scoring of its topics; when none of them
 * scored, to its first topic, and only if no other topic scored and the question names a place
 * (a frame word alone — "healthy", "risk" — is not a question about a place). The frame that
 * applies is the first (lexicon order) among those whose cue kept its words.
 */
function applyFrame(
  hits: ReadonlyArray<{ frame: FrameIndex; cue: string; from: number; to: number }>,
  matches: MatchedKeyword[],
  scores: ReadonlyArray<{ topic: string; score: number }>,
  tokens: readonly Token[],
  placeNamed: boolean,
): { frame: string; cue: string; boosted: string } | null {
  if (hits.length === 0) return null;
  const byFrame = [...hits].sort((a, b) => a.frame.order - b.frame.order || a.from - b.from);
  for (const h of byFrame) {
    const inFrame = scores.filter((s) => h.frame.topics.includes(s.topic));
    let target: string | undefined;
    if (inFrame.length > 0) target = inFrame[0].topic;
    else if (!scores.some((s) => s.score >= SCORE_THRESHOLD) && placeNamed) target = h.frame.topics[0];
    if (!target) continue;
    const m: MatchedKeyword = { topic: target, keyword: `${h.frame.key} frame: ${h.cue}`, matched: surface(tokens, h.from, h.to), how: 'pattern', weight: WEIGHTS.pattern };
    if (negatedAt(tokens, h.from)) m.negated = true;
    matches.push(m);
    return { frame: h.frame.key, cue: h.cue, boosted: target };
  }
  return null;
}

/**
 * Arithmetic in a question (lexicon.ts, ARITHMETIC_WORDS): two numbers joined by an operator sign
 * or an arithmetic word, a percentage of a number, a square root, or a conversion of a number.
 * Returns the words that show it.
 */
export function arithmetic(tokens: readonly Token[], text = ''): string | undefined {
  // A minus sign is not read: dates ("2021-03-01"), ranges ("2019 - 2022") and coordinates use it.
  const sign = /\d\s*[+*×÷^=]\s*-?\d|\d\s+\/\s+\d|\d\s*%\s*of\s+\d|\bsquare root of\s+-?\d/i.exec(text);
  if (sign) return sign[0];
  const isNumber = (t: Token | undefined) => t?.script === 'digits';
  const numberNear = (i: number, step: 1 | -1) => {
    for (let j = i + step, n = 0; j >= 0 && j < tokens.length && n < 3; j += step, n++) {
      if (isNumber(tokens[j])) return true;
      if (!ARITHMETIC_FILLERS.has(tokens[j].norm)) return false;
    }
    return false;
  };
  for (const t of tokens) {
    if (!ARITHMETIC_WORDS.has(t.norm)) continue;
    const unary = t.norm === 'squared' || t.norm === 'cubed';
    if (numberNear(t.i, -1) && (unary || numberNear(t.i, 1))) return t.raw;
  }
  if (tokens.some((t) => ARITHMETIC_VERBS.has(t.norm)) && tokens.some(isNumber)) return tokens.find((t) => ARITHMETIC_VERBS.has(t.norm))!.raw;
  return undefined;
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

function offTopic(ix: RouterIndex, tokens: readonly Token[], masked: ReadonlySet<number>, stems: ReadonlySet<string>, explained: ReadonlySet<number>): { word: string; always: boolean } | undefined {
  const phrase = firstPattern(ix.offTopicPhrases, tokens, masked, stems);
  if (phrase) return { word: phrase, always: true };
  for (const t of tokens) if (!masked.has(t.i) && OFF_TOPIC.always.has(t.norm)) return { word: t.raw, always: true };
  // A word such as "stock" or "safe" inside a topic phrase ("carbon stock", "safe to breathe") is the topic's.
  for (const t of tokens) if (!masked.has(t.i) && !explained.has(t.i) && OFF_TOPIC.unless_strong.has(t.norm)) return { word: t.raw, always: false };
  return undefined;
}

/** "climate change" is not a what-changed question: its words are kept from the change patterns. */
function climateChange(tokens: readonly Token[]): Set<number> {
  const out = new Set<number>();
  for (let i = 0; i + 1 < tokens.length; i++) if (tokens[i].norm.startsWith('climat') && tokens[i + 1].stem === 'chang') out.add(i).add(i + 1);
  return out;
}

function decide(
  ix: RouterIndex,
  tokens: readonly Token[],
  masked: ReadonlySet<number>,
  matches: MatchedKeyword[],
  scores: RouteResult['scores'],
  stems: ReadonlySet<string>,
  explained: ReadonlySet<number>,
  context: RouteContext,
  frame: { frame: string; cue: string; boosted: string } | null,
): RouteResult {
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
    composite: null,
  };
  const ranked = (first?: string) => {
    const list = scores.filter((s) => top && s.score >= top.score * 0.5).map((s) => s.topic);
    const out = first ? [first, ...list.filter((t) => t !== first)] : list;
    return out.slice(0, 3);
  };
  const outOfScope = (why: string | null): RouteResult => ({ ...base, intent: 'out_of_scope', topic: null, matched_topics: [], out_of_scope: true, off_topic: why, hunt: null });

  // Arithmetic and plainly off-topic requests are refused whatever else the question says.
  const sums = arithmetic(tokens, context.text);
  if (sums) return outOfScope(sums);
  const off = offTopic(ix, tokens, masked, stems, explained);
  if (off && (off.always || !top || top.score < STRONG_SCORE)) return outOfScope(off.word);

  const corpus = firstPattern(ix.corpus, tokens, masked, stems);
  if (corpus) {
    const topic = top && top.score >= SCORE_THRESHOLD ? top.topic : null;
    return { ...base, intent: 'corpus', topic, matched_topics: topic ? ranked() : [], cues: [corpus] };
  }
  const similar = firstPattern(ix.similar, tokens, NONE, stems);
  if (similar) return { ...base, intent: 'similar', topic: 'similarity', matched_topics: ranked('similarity'), cues: [similar] };
  const change = firstPattern(ix.change, tokens, climateChange(tokens), stems);
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
  const matched_topics = ranked();
  if (!frame) return { ...base, matched_topics };
  // A composite question: the routed topic answers, the frame's other topics are listed.
  const fr = ix.frames.find((f) => f.key === frame.frame)!;
  const others = [...matched_topics.slice(1).filter((t) => fr.topics.includes(t)), ...fr.topics.filter((t) => t !== top.topic && !matched_topics.includes(t))].slice(0, 3);
  return { ...base, matched_topics, composite: { frame: frame.frame, cue: frame.cue, topics: others } };
}
