/**
 * What a note search's words ask for (docs/memory.md, "How search ranks"): the time expression
 * they hold, if any ("in May 2023", "last week": the ask module's parser, primitives/ask/time.ts),
 * and the terms left once the words that only shape a question are set aside ("when did", "what
 * was", "her", "the"). The terms are note-terms.ts terms, so they meet the index exactly.
 */
import { termOf, textWords } from '../../store/note-terms.js';
import { parseTime, type TimeWindow } from '../ask/time.js';

/**
 * Words that shape a question or a sentence rather than say what it is about. Set aside from
 * the query only (notes keep every word); a query made of nothing else keeps them all.
 */
const STOP_WORDS = new Set(
  `a about above after again against all am an and any are as at be because been before being below between both but by can could
  did do does doing done down during each either else ever every few for from further get got had has have having he her here hers
  herself him himself his how i if in into is it its itself just let like me might mine more most much must my myself no nor not
  now of off on once only or other ought our ours ourselves out over own really same shall she should so some such than that the
  their theirs them themselves then there these they this those through to too under until up upon us very was we were what
  whatever when whenever where whereas wherever whether which while who whom whose why will with would yet you your yours
  yourself yourselves tell know remember say said mention mentioned ask asked thing things kind sort`.split(/\s+/),
);

export interface QueryTerm {
  term: string;
  /** Position of its first word in the query (proximity pairs follow the query's order). */
  at: number;
}

export interface AnalysedQuery {
  /** Distinct terms to rank by, in query order. */
  terms: QueryTerm[];
  /** Words set aside as question words (reported back, never ranked unless nothing else is left). */
  set_aside: string[];
  /** The time expression found, when time parsing is on. */
  time?: TimeWindow;
}

/** At most this many terms rank a query (a longer text ranks no better and costs more). */
export const MAX_QUERY_TERMS = 32;

/** Analyse a search's words; `now` anchors relative time ("last week"), `time` says whether to look for it. */
export function analyseQuery(text: string, now: Date, time: boolean): AnalysedQuery {
  const window = time ? parseTime(text, now) : undefined;
  // The time expression's words say when, not what: they leave the query.
  const rest = window ? text.slice(0, window.span[0]) + ' ' + text.slice(window.span[1]) : text;
  const words = [...textWords(rest)];
  const kept = words.filter((w) => !STOP_WORDS.has(w));
  const setAside = [...new Set(words.filter((w) => STOP_WORDS.has(w)))];
  const use = kept.length > 0 ? kept : words;
  const seen = new Set<string>();
  const terms: QueryTerm[] = [];
  use.forEach((w, at) => {
    const term = termOf(w);
    if (seen.has(term) || terms.length >= MAX_QUERY_TERMS) return;
    seen.add(term);
    terms.push({ term, at });
  });
  return { terms, set_aside: kept.length > 0 ? setAside : [], ...(window ? { time: window } : {}) };
}

const STOP_TERMS = new Set([...STOP_WORDS].map(termOf));

/** Whether a term is a question word's (kept out of feedback terms too). */
export function isStopTerm(term: string): boolean {
  return STOP_TERMS.has(term);
}
