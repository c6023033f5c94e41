/**
 * The router's index, built once per registry: every topic keyword as a stem sequence with its
 * weight, the topics' phrase patterns, the typo vocabulary, the hunt events (docs/hunt.md: event
 * names and aliases), and the intent cue patterns. Weights are shared out between the topics
 * that list the same keyword (a word two topics claim says less about either).
 */
import { editDistance } from '../../geo/normalize.js';
import type { Registry } from '../../registry/registry.js';
import { CHANGE_PATTERNS, COMPOSITE_FRAMES, CORPUS_PATTERNS, GENERIC_WORDS, NOT_TYPOS, OFF_TOPIC, SIMILAR_PATTERNS } from './lexicon.js';
import { compilePattern, type Pattern } from './patterns.js';
import { stemsOf } from './text.js';

/** One topic keyword. */
export interface Term {
  topic: string;
  keyword: string;
  stems: readonly string[];
  weight: number;
}

export interface TopicPattern {
  topic: string;
  pattern: Pattern;
  weight: number;
}

export interface EventTerm {
  event: string;
  /** The name or alias as registered (e.g. `ghg_leak`). */
  term: string;
  stems: readonly string[];
  topic: string;
  algorithm: string | null;
}

/** A composite frame (lexicon.ts) with its cue patterns compiled; only topics the registry has. */
export interface FrameIndex {
  key: string;
  /** Its position in the lexicon: when several frames match, the first applies. */
  order: number;
  cues: readonly Pattern[];
  topics: readonly string[];
}

export interface RouterIndex {
  /** Single-word keywords by stem. */
  single: ReadonlyMap<string, readonly Term[]>;
  /** Multi-word keywords, longest first. */
  multi: readonly Term[];
  /** Keywords by their written text (synonyms name keywords this way). */
  byKeyword: ReadonlyMap<string, readonly Term[]>;
  patterns: readonly TopicPattern[];
  /** Every keyword word of 5 letters or more (folded) with its stem, for typo matching. */
  typoVocab: ReadonlyMap<string, string>;
  /** Each such word and each of its one-letter deletions → the words it came from (symmetric delete). */
  typoDeletes: ReadonlyMap<string, readonly string[]>;
  /** Every stem a keyword or pattern uses: a word with one of these is not a typo. */
  knownStems: ReadonlySet<string>;
  events: readonly EventTerm[];
  corpus: readonly Pattern[];
  similar: readonly Pattern[];
  change: readonly Pattern[];
  offTopicPhrases: readonly Pattern[];
  /** Composite frames, in the order they apply. */
  frames: readonly FrameIndex[];
  topicKeys: readonly string[];
}

/** Base weights: a matched word, each further word of a multi-word keyword, a phrase pattern. */
export const WEIGHTS = { word: 1, extra_word: 0.75, pattern: 2, synonym: 0.9, typo: 0.8, generic: 0.7 } as const;

function push<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const l = m.get(k);
  if (l) l.push(v);
  else m.set(k, [v]);
}

/** The topic a hunt event routes to: its algorithm's topic, else the topic listing the event's words. */
function eventTopic(reg: Registry, event: string, aliases: readonly string[], algorithm: string | null): string {
  const a = algorithm ? reg.algorithms.get(algorithm) : undefined;
  if (a) return a.topic;
  const words = [event, ...aliases].map((w) => w.replace(/_/g, ' '));
  const t = reg.topicList.find((x) => x.keywords.some((k) => words.includes(k.replace(/_/g, ' '))));
  return t?.key ?? reg.topicList[0].key;
}

function build(reg: Registry): RouterIndex {
  const raw: Term[] = [];
  const patterns: TopicPattern[] = [];
  for (const t of reg.topicList) {
    for (const k of t.keywords) {
      const stems = stemsOf(k);
      if (stems.length > 0) raw.push({ topic: t.key, keyword: k, stems, weight: 0 });
    }
    for (const p of t.phrases ?? []) patterns.push({ topic: t.key, pattern: compilePattern(p), weight: WEIGHTS.pattern });
  }
  // How many topics claim each stem sequence ("flood_extent" and "flood extent" are one claim).
  const claims = new Map<string, Set<string>>();
  for (const r of raw) {
    const key = r.stems.join(' ');
    if (!claims.has(key)) claims.set(key, new Set());
    claims.get(key)!.add(r.topic);
  }
  const seen = new Set<string>();
  const terms: Term[] = [];
  for (const r of raw) {
    const key = r.stems.join(' ');
    if (seen.has(`${r.topic}|${key}`)) continue; // one topic listing two spellings counts once
    seen.add(`${r.topic}|${key}`);
    const base = WEIGHTS.word + WEIGHTS.extra_word * (r.stems.length - 1);
    terms.push({ ...r, weight: base / claims.get(key)!.size });
  }
  const single = new Map<string, Term[]>();
  const byKeyword = new Map<string, Term[]>();
  const typoVocab = new Map<string, string>();
  const knownStems = new Set<string>();
  const multi: Term[] = [];
  for (const t of terms) {
    // Everyday words some topics list ("field", "water", "change") say less than specific ones.
    if (t.stems.length === 1 && GENERIC_WORDS.has(t.keyword)) t.weight *= WEIGHTS.generic;
    push(byKeyword, t.stems.join(' '), t);
    if (t.stems.length === 1) push(single, t.stems[0], t);
    else multi.push(t);
    for (const s of t.stems) knownStems.add(s);
  }
  // Every spelling a topic lists, not only the first of its stem ("flooding" as well as "flood").
  for (const r of raw) for (const w of r.keyword.split(/[^a-z]+/)) if (w.length >= 5) typoVocab.set(w, stemsOf(w)[0]);
  for (const p of patterns) for (const part of p.pattern.parts) if (part.kind === 'word') knownStems.add(part.stem);
  const typoDeletes = new Map<string, string[]>();
  for (const w of typoVocab.keys()) for (const d of deletions(w)) push(typoDeletes, d, w);
  multi.sort((a, b) => b.stems.length - a.stems.length || a.keyword.localeCompare(b.keyword));

  const events: EventTerm[] = [];
  for (const e of reg.huntEventList) {
    const topic = eventTopic(reg, e.event, e.aliases, e.algorithm);
    for (const term of [e.event, ...e.aliases]) events.push({ event: e.event, term, stems: stemsOf(term.replace(/_/g, ' ')), topic, algorithm: e.algorithm });
  }
  events.sort((a, b) => b.stems.length - a.stems.length);

  return {
    single,
    multi,
    byKeyword,
    patterns,
    typoVocab,
    typoDeletes,
    knownStems,
    events,
    corpus: CORPUS_PATTERNS.map(compilePattern),
    similar: SIMILAR_PATTERNS.map(compilePattern),
    change: CHANGE_PATTERNS.map(compilePattern),
    offTopicPhrases: OFF_TOPIC.phrases.map(compilePattern),
    frames: COMPOSITE_FRAMES.map((f, order) => ({ key: f.key, order, cues: f.cues.map(compilePattern), topics: f.topics.filter((t) => reg.topics.has(t)) })).filter((f) => f.topics.length > 0),
    topicKeys: reg.topicList.map((t) => t.key),
  };
}

const built = new WeakMap<Registry, RouterIndex>();

/** The router index of a registry (built on first use). */
export function routerIndex(reg: Registry): RouterIndex {
  let ix = built.get(reg);
  if (!ix) built.set(reg, (ix = build(reg)));
  return ix;
}

/** A word and every string one deleted letter away from it. */
function deletions(w: string): string[] {
  const out = [w];
  for (let i = 0; i < w.length; i++) out.push(w.slice(0, i) + w.slice(i + 1));
  return out;
}

/**
 * The keyword word one typo (edit distance 1: a letter added, dropped, changed, or two swapped)
 * away from a folded word of 5 letters or more. Candidates come from shared one-letter deletions
 * (a handful of map look-ups instead of a scan of the vocabulary), then the distance is checked.
 */
export function typoFix(ix: RouterIndex, word: string): { word: string; stem: string } | undefined {
  if (word.length < 5 || !/^[a-z]+$/.test(word) || NOT_TYPOS.has(word)) return undefined;
  let best: string | undefined;
  for (const d of deletions(word)) {
    for (const v of ix.typoDeletes.get(d) ?? []) {
      // Deterministic: the alphabetically first keyword at distance 1 wins.
      if (v !== word && (best === undefined || v < best) && editDistance(word, v, 1) <= 1) best = v;
    }
  }
  return best === undefined ? undefined : { word: best, stem: ix.typoVocab.get(best)! };
}
