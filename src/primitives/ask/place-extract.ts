/**
 * Finding the place a question names (docs/ask.md, "Place"), before the locate cascade resolves it:
 * coordinates and cell64s written in the text, then names tested against the offline gazetteer
 * (longest match first): words after a place preposition ("in", "near", "of" …), capitalised
 * words, words in non-Latin scripts, and substrings of CJK runs ("東京の植生"). "X, Country" and
 * "X Region" forms are tried as qualified names, and another place word of the question
 * ("Springfield … Illinois") narrows an ambiguous one. Nothing here decides confidence: the
 * locate cascade does, and the answer states it.
 */
import { gazetteer } from '../../geo/gazetteer.js';
import { matchOffline, type OfflineMatch } from '../../geo/match.js';
import { normalizeName } from '../../geo/normalize.js';
import { isCell } from '../../protocol/cell64.js';
import { STOP_WORDS, SYNONYMS } from './lexicon.js';
import type { Token } from './text.js';

export type Extracted =
  | { kind: 'point'; lat: number; lng: number; text: string; span: [number, number] }
  | { kind: 'cell'; cell: string; text: string; span: [number, number] }
  | { kind: 'name'; text: string; tokens: number[]; match?: OfflineMatch; via: 'preposition' | 'capitalised' | 'script' | 'cjk' | 'qualified'; cjk?: string };

export interface Extraction {
  place?: Extracted;
  /** Every token index that belongs to a place name (masked from topic routing). */
  masked: Set<number>;
  /** CJK substrings that are place names (removed before CJK synonym matching). */
  cjk: string[];
  /** Other place names the question mentions (besides the chosen one). */
  others: string[];
  /**
   * Capitalised words after a place preposition that no offline table knows ("in Kuujjuaq"): the
   * locate cascade may still know them through its network tiers.
   */
  unknown?: string;
  /**
   * Rivers and lakes the question names (chosen or not), by the first token of their name: the
   * router reads that token as the word "river" or "lake" in its phrase patterns ("how high is
   * the Elbe" reads as "how high is the river").
   */
  water_features?: Array<{ token: number; word: 'river' | 'lake' }>;
}

const PREPOSITIONS = new Set([
  'in',
  'at',
  'near',
  'around',
  'for',
  'of',
  'over',
  'across',
  'from',
  'outside',
  'inside',
  'within',
  'like',
  'to',
  'about',
  'by',
  'under',
  'on',
  'along',
  'between',
  'nearby',
  // The same words in the other languages the router reads (folded: "à" is "a", "près" is "pres").
  'en',
  'dans',
  'pres',
  'au',
  'aux',
  'a',
  'em',
  'perto',
  'cerca',
  'bei',
  'im',
  'um',
  'в',
  'во',
  'на',
  'около',
  'у',
]);
/** Words that open a question or a command; capitalised at the start they are not names. */
const OPENERS = new Set([
  'may',
  'find',
  'show',
  'compare',
  'list',
  'map',
  'hunt',
  'locate',
  'search',
  'detect',
  'give',
  'tell',
  'check',
  'measure',
  'estimate',
  'calculate',
  'get',
  'fetch',
  'describe',
  'explain',
  'help',
  'any',
  'has',
  'did',
  'will',
  'are',
  'is',
  'was',
  'were',
  'do',
  'does',
  'can',
  'could',
  'would',
  'should',
  'what',
  'where',
  'when',
  'which',
  'why',
  'how',
  'who',
  'please',
  'i',
  'we',
  'my',
  'our',
  'hi',
  'hello',
  'write',
  'spot',
  'look',
  'scan',
  'identify',
  'track',
  'monitor',
  'pinpoint',
]);
const ARTICLES = new Set(['the', 'a', 'an']);
/** Nouns that follow "in" or "of" without naming a place ("in the city", "of the area"). */
const COMMON_NOUNS = new Set([
  'city',
  'town',
  'village',
  'area',
  'region',
  'country',
  'world',
  'place',
  'places',
  'morning',
  'evening',
  'night',
  'summer',
  'winter',
  'spring',
  'autumn',
  'fall',
  'north',
  'south',
  'east',
  'west',
  'centre',
  'center',
  'downtown',
  'park',
  'garden',
  'street',
  'road',
  'home',
  'house',
  'site',
  'plot',
  'cell',
  'space',
  'general',
  'future',
  'past',
  'end',
  'beginning',
  'middle',
  'question',
  'answer',
  'data',
  'reading',
  'value',
  'values',
  'average',
  'total',
  'number',
  'level',
  'levels',
]);
/** Abbreviations whose dot does not end the clause ("St. Louis", "Mt. Fuji"). */
const ABBREVIATIONS = new Set(['st', 'mt', 'ft', 'pt', 'ste', 'mont', 'fort']);
/** A lower-case single word names a place only when it is a big city or a larger unit (score ≈ log10 population). */
const LOWER_CASE_MIN_SCORE = 5;
const MAX_SPAN = 6;
const CJK_MAX = 8;
// Decimal coordinates ("48.8566, 2.3522", "-33.87 151.21", "48.85N 2.35E") and "lat … lon …".
const COORD_RE = /(-?\d{1,2}\.\d+)\s*°?\s*([NSns])?\s*[,;/]?\s+(-?\d{1,3}\.\d+)\s*°?\s*([EWew])?(?![\d.])|(-?\d{1,2}\.\d+)\s*°?\s*([NSns])?\s*,\s*(-?\d{1,3}\.\d+)\s*°?\s*([EWew])?(?![\d.])/;
const LATLON_RE = /\blat(?:itude)?\s*[:=]?\s*(-?\d{1,2}(?:\.\d+)?)\s*,?\s*(?:and\s+)?(?:lng|lon|long|longitude)\s*[:=]?\s*(-?\d{1,3}(?:\.\d+)?)/i;
const CELL_RE = /\b(?:[a-z]+:cell:)?((?:(?:[bcdfghjklmnpqrstvwxyz][aeiouAEIOU]){2}|z[0-9a-f]{4})(?:\.(?:(?:[bcdfghjklmnpqrstvwxyz][aeiouAEIOU]){2}|z[0-9a-f]{4})){3})\b/;

let topicWords: Set<string> | undefined;

/** Words that carry a topic: never a place on their own (set by the ask primitive from the registry). */
export function setTopicWords(words: Iterable<string>): void {
  topicWords = new Set(words);
  for (const k of Object.keys(SYNONYMS)) topicWords.add(k);
}

function isTopicWord(t: Token): boolean {
  return topicWords?.has(t.stem) === true || topicWords?.has(t.norm) === true;
}

function coordinates(text: string): Extracted | undefined {
  const ll = LATLON_RE.exec(text);
  if (ll) {
    const lat = Number(ll[1]);
    const lng = Number(ll[2]);
    if (Math.abs(lat) <= 90 && Math.abs(lng) <= 180) return { kind: 'point', lat, lng, text: ll[0], span: [ll.index, ll.index + ll[0].length] };
  }
  const m = COORD_RE.exec(text);
  if (!m) return undefined;
  const [a, ns, b, ew] = m[1] !== undefined ? [m[1], m[2], m[3], m[4]] : [m[5], m[6], m[7], m[8]];
  let lat = Number(a);
  let lng = Number(b);
  if (ns && /s/i.test(ns)) lat = -Math.abs(lat);
  if (ew && /w/i.test(ew)) lng = -Math.abs(lng);
  if (Math.abs(lat) > 90 || Math.abs(lng) > 180) return undefined;
  return { kind: 'point', lat, lng, text: m[0].trim(), span: [m.index, m.index + m[0].length] };
}

/** The text of tokens from..to as a place query: commas kept where the question has them. */
function spanText(tokens: readonly Token[], from: number, to: number): string {
  let s = '';
  for (let i = from; i <= to; i++) s += tokens[i].raw + (i < to ? (tokens[i].after === ',' ? ', ' : ' ') : '');
  return s;
}

interface Candidate {
  text: string;
  from: number;
  to: number;
  match: OfflineMatch;
  via: 'preposition' | 'capitalised' | 'script' | 'qualified';
}

/** A place-word qualifier ("France", "Illinois", "IL"): a country or an admin-1 region. */
function isQualifier(text: string): boolean {
  const g = gazetteer();
  const k = normalizeName(text);
  return g.countryKeys.has(k) || g.admin1Keys.has(k);
}

function tryName(tokens: readonly Token[], from: number, to: number, blocked: ReadonlySet<number>, viaPrep: boolean): Candidate | undefined {
  const slice = tokens.slice(from, to + 1);
  if (slice.some((t) => blocked.has(t.i))) return undefined;
  const single = from === to;
  const t0 = tokens[from];
  if (single) {
    if (STOP_WORDS.has(t0.norm) || OPENERS.has(t0.norm) || isTopicWord(t0)) return undefined;
    // Two- and three-letter lower-case words are function words or codes, not names ("is", "me").
    if (t0.script === 'latin' && t0.norm.length <= 3 && !/^[A-Z]{2,3}$/.test(t0.raw)) return undefined;
    if (t0.script === 'digits') return undefined;
    if (t0.script === 'latin' && !t0.cap && (!viaPrep || COMMON_NOUNS.has(t0.norm))) return undefined;
  } else {
    if (slice.some((t) => t.script === 'digits')) return undefined;
    // A multi-word name needs a capital or a preposition before it, and must not end on a function word.
    if (!viaPrep && !slice.some((t) => t.cap || t.script !== 'latin')) return undefined;
    const last = slice[slice.length - 1];
    if (STOP_WORDS.has(last.norm) || (STOP_WORDS.has(t0.norm) && !ARTICLES.has(t0.norm))) return undefined;
    // "Lyon, France flooded": a lower-case topic word ends the question's words, not the name.
    if (last.script === 'latin' && !last.cap && isTopicWord(last)) return undefined;
  }
  const g = gazetteer();
  const text = spanText(tokens, from, to);
  let m = matchOffline(g, text);
  // A qualifier the tables do not know means the span ran past the name ("Lyon, France today").
  if (m && /not recognised/.test(m.reason)) m = undefined;
  // Lower-case words are a name only when they spell it, spaces included: "a good year" is not Goodyear.
  if (m && !single && slice.every((t) => t.script === 'latin' && !t.cap) && normalizeName(m.selected.label.split(',')[0]).replace(/ \(.*\)$/, '') !== normalizeName(text)) m = undefined;
  if (m && single && t0.script === 'latin' && !t0.cap && m.selected.kind === 'city' && m.selected.score < LOWER_CASE_MIN_SCORE) return undefined;
  // Nor is it a district or a point of interest ("a song" is not Song, a district of Nigeria).
  if (m && single && t0.script === 'latin' && !t0.cap && (m.selected.kind === 'admin2' || m.selected.via === 'admin2' || m.selected.via === 'pois')) return undefined;
  if (m) return { text, from, to, match: m, via: viaPrep ? 'preposition' : t0.script === 'latin' ? 'capitalised' : 'script' };
  // "Springfield Illinois": the tail as a qualifier of the head.
  for (let j = to; j > from; j--) {
    const qual = spanText(tokens, j, to);
    if (!isQualifier(qual)) continue;
    const head = spanText(tokens, from, j - 1);
    const q = matchOffline(g, `${head}, ${qual}`);
    if (q && /narrowed/.test(q.reason)) return { text: `${head}, ${qual}`, from, to, match: q, via: 'qualified' };
  }
  return undefined;
}

/** The longest gazetteer name starting at `from` (up to the end of the clause). */
function longestFrom(tokens: readonly Token[], from: number, blocked: ReadonlySet<number>, viaPrep: boolean): Candidate | undefined {
  let end = from;
  const stops = (t: Token) => /[?!;:]/.test(t.after) || (t.after === '.' && !ABBREVIATIONS.has(t.norm));
  while (end + 1 < tokens.length && end - from + 1 < MAX_SPAN && !stops(tokens[end])) end++;
  for (let to = end; to >= from; to--) {
    const c = tryName(tokens, from, to, blocked, viaPrep);
    if (c) return c;
  }
  return undefined;
}

function cjkNames(tokens: readonly Token[]): Array<{ text: string; token: number; score: number }> {
  const g = gazetteer();
  const out: Array<{ text: string; token: number; score: number }> = [];
  for (const t of tokens) {
    if (t.script !== 'cjk') continue;
    const s = t.raw;
    let i = 0;
    while (i < s.length) {
      let found: string | undefined;
      for (let len = Math.min(CJK_MAX, s.length - i); len >= 2 && !found; len--) {
        const sub = s.slice(i, i + len);
        if (g.lookup(normalizeName(sub)).length > 0) found = sub;
      }
      if (found) {
        out.push({ text: found, token: t.i, score: found.length });
        i += found.length;
      } else i++;
    }
  }
  return out;
}

/** A point-like place anchors one cell better than a region's centre ("turbidity in the Ganges at Varanasi"). */
const SPECIFICITY: Record<string, number> = { embedded: 2, pois: 2, admin1: 1, country: 0, wide_bbox_table: 0 };

function rank(c: Candidate): number {
  const words = c.to - c.from + 1;
  return words * 10 + (c.via === 'preposition' || c.via === 'qualified' ? 3 : 0) + (SPECIFICITY[c.match.selected.via] ?? 0) + (c.match.high ? 0.5 : 0) + c.match.selected.score / 100;
}

/**
 * The place a question names, with every place word masked. `blocked` holds the tokens of a
 * time expression, which are never place names ("in March" is a month here, not March, England).
 */
export function extractPlace(text: string, tokens: readonly Token[], blocked: ReadonlySet<number>): Extraction {
  const masked = new Set<number>();
  const maskSpan = (span: [number, number]) => {
    for (const t of tokens) if (t.start < span[1] && t.end > span[0]) masked.add(t.i);
  };
  const cell = CELL_RE.exec(text);
  if (cell && isCell(cell[1])) {
    maskSpan([cell.index, cell.index + cell[0].length]);
    return { place: { kind: 'cell', cell: cell[1], text: cell[0], span: [cell.index, cell.index + cell[0].length] }, masked, cjk: [], others: [] };
  }
  const point = coordinates(text);
  if (point && point.kind === 'point') {
    maskSpan(point.span);
    return { place: point, masked, cjk: [], others: [] };
  }

  let cands: Candidate[] = [];
  let unknown: string | undefined;
  let unknownLoose: string | undefined;
  // Capitalised runs no table knows as a whole ("Permian Basin", "Pic du Midi").
  const runs: Run[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (blocked.has(i)) continue;
    if (PREPOSITIONS.has(t.norm) && i + 1 < tokens.length) {
      let s = i + 1;
      if (ARTICLES.has(tokens[s].norm) && s + 1 < tokens.length) s++;
      const c = longestFrom(tokens, s, blocked, true);
      if (c) cands.push(c);
      else {
        const run = capitalisedRun(tokens, s, blocked);
        if (run) runs.push(run);
        unknown ??= run?.text;
      }
    }
    if ((t.cap && !(i === 0 && OPENERS.has(t.norm))) || t.script === 'other') {
      const c = longestFrom(tokens, i, blocked, false);
      if (c) cands.push(c);
      else if (!(i > 0 && nameWord(tokens[i - 1]) && !blocked.has(i - 1))) {
        const run = capitalisedRun(tokens, i, blocked);
        if (run) runs.push(run);
        unknownLoose ??= run?.text;
      }
    }
  }
  // A word inside such a run is not the place on its own ("Basin" of "Permian Basin"), unless it is
  // a country or a region ("Italy" of "Northern Italy").
  cands = cands.filter((c) => c.via === 'preposition' || REGION_TIERS.has(c.match.selected.via) || !runs.some((r) => c.from > r.from && c.to <= r.to));
  const cjk = cjkNames(tokens);
  if (cands.length === 0 && cjk.length === 0) {
    unknown ??= unknownLoose;
    if (unknown) for (const t of tokens) if (unknown.includes(t.raw) && !blocked.has(t.i) && (t.cap || t.script !== 'latin') && !(t.script !== 'latin' && isTopicWord(t))) masked.add(t.i);
    return { masked, cjk: [], others: [], ...(unknown ? { unknown } : {}) };
  }

  // Keep the best candidate per start; drop those inside a longer one.
  cands.sort((a, b) => rank(b) - rank(a) || a.from - b.from);
  const kept: Candidate[] = [];
  for (const c of cands) if (!kept.some((k) => c.from >= k.from && c.to <= k.to)) kept.push(c);
  for (const k of kept) for (let i = k.from; i <= k.to; i++) masked.add(i);
  const water_features = kept.flatMap((k) => {
    const kind = k.match.selected.kind;
    return kind === 'river' || kind === 'lake' ? [{ token: k.from, word: kind as 'river' | 'lake' }] : [];
  });

  let best: Extracted | undefined;
  if (kept.length > 0) {
    const top = kept[0];
    best = { kind: 'name', text: top.text, tokens: range(top.from, top.to), match: top.match, via: top.via };
    // Another place word of the question as a qualifier: "Springfield … in Illinois".
    if (!top.match.high) {
      for (const other of kept.slice(1)) {
        if (!isQualifier(other.text)) continue;
        const q = matchOffline(gazetteer(), `${top.text}, ${other.text}`);
        if (q && /narrowed/.test(q.reason)) {
          best = { kind: 'name', text: `${top.text}, ${other.text}`, tokens: [...range(top.from, top.to), ...range(other.from, other.to)], match: q, via: 'qualified' };
          break;
        }
      }
    }
  } else {
    const c = [...cjk].sort((a, b) => b.score - a.score)[0];
    best = { kind: 'name', text: c.text, tokens: [c.token], match: matchOffline(gazetteer(), c.text), via: 'cjk', cjk: c.text };
  }
  const chosen = best.kind === 'name' ? best.text : '';
  const others = [...kept.map((k) => k.text), ...cjk.map((c) => c.text)].filter((x) => x !== chosen && !chosen.includes(x));
  return { place: best, masked, cjk: cjk.map((c) => c.text), others, ...(water_features.length > 0 ? { water_features } : {}) };
}

/** A word that may belong to a name: capitalised or non-Latin, not a question word. */
function nameWord(t: Token): boolean {
  return (t.cap || t.script === 'other') && !OPENERS.has(t.norm) && !STOP_WORDS.has(t.norm);
}

/**
 * Capitalised (or non-Latin) words from `from` to the end of the name-like run, if any: a topic
 * word may open such a run ("Lake Taihu") but not end it; acronyms of three letters or fewer
 * ("EU", "SAR") are not names.
 */
function capitalisedRun(tokens: readonly Token[], from: number, blocked: ReadonlySet<number>): Run | undefined {
  const nameLike = (t: Token) => !blocked.has(t.i) && (t.cap || (t.script === 'other' && !isTopicWord(t) && !PREPOSITIONS.has(t.norm))) && !OPENERS.has(t.norm) && !STOP_WORDS.has(t.norm);
  let to = from;
  while (to < tokens.length && nameLike(tokens[to])) {
    to++;
    if (tokens[to - 1].after && tokens[to - 1].after !== ',') break;
    // A lower-case particle between capitalised words belongs to the name ("Pic du Midi").
    const p = tokens[to];
    if (p && !p.after && NAME_PARTICLES.has(p.raw) && tokens[to + 1] && tokens[to + 1].cap && nameLike(tokens[to + 1])) to++;
  }
  while (to > from && isTopicWord(tokens[to - 1])) to--;
  if (to === from) return undefined;
  const text = spanText(tokens, from, to - 1);
  if (/^[A-Z]{1,3}$/.test(text) || text.length < 3) return undefined;
  return { text, from, to: to - 1 };
}

interface Run {
  text: string;
  from: number;
  to: number;
}

/** Lower-case words inside names ("Pic du Midi", "Rio de la Plata", "Den Helder" aside). */
const NAME_PARTICLES: ReadonlySet<string> = new Set(['du', 'de', 'des', 'del', 'della', 'di', 'da', 'das', 'do', 'dos', 'la', 'le', 'van', 'von', 'der', 'den', 'el', 'al']);
/** Tiers of a region: a word of a longer unknown name may still be one ("Northern Italy"). */
const REGION_TIERS: ReadonlySet<string> = new Set(['country', 'admin1']);

function range(a: number, b: number): number[] {
  return Array.from({ length: b - a + 1 }, (_, i) => a + i);
}
