/**
 * Question text for /v1/ask (docs/ask.md, "Routing"): tokens with their surface form, a folded form
 * (case, diacritics and apostrophes removed, as place names are folded in geo/normalize.ts) and a
 * light English stem, so "flooding", "flooded" and "floods" all meet the keyword "flood".
 */
import { normalizeName } from '../../geo/normalize.js';

export type Script = 'latin' | 'cjk' | 'other' | 'digits';

export interface Token {
  /** Position in the token list. */
  i: number;
  /** As written. */
  raw: string;
  /** Folded: lower case, no diacritics. */
  norm: string;
  /** Light English stem of `norm` (Latin words only; others are their own stem). */
  stem: string;
  /** Character offsets in the question text. */
  start: number;
  end: number;
  /** Starts with an upper-case letter (a hint of a proper name in Latin scripts). */
  cap: boolean;
  script: Script;
  /** Punctuation right after the token (`,`, `?`, `.` …), or '' when none. */
  after: string;
  /** Set by the router on a place-name token it reads as a word ("the Elbe" as "river"): with the rest of the name it fills one gap slot. */
  placeWord?: boolean;
}

// A word: letters, combining marks and digits, with inner apostrophes ("d'Ivoire") and one inner
// '.' for decimals ("2.5"). Contractions are rewritten before (preprocess), so "'s" is gone by then.
const WORD_RE = /[\p{L}\p{M}\p{N}]+(?:['’][\p{L}\p{M}]+)*(?:[.,][\p{N}]+(?=[^\p{L}\p{N}]|$))?/gu;
const CJK_RE = /[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]/;
const LATIN_RE = /^[\p{Script=Latin}\p{M}]+$/u;
const DIGITS_RE = /^[\p{N}.,]+$/u;
/** Contractions folded before splitting: "isn't" reads "is not", "what's" reads "what is". */
const CONTRACTIONS: ReadonlyArray<readonly [RegExp, string]> = [
  [/\b(can)['’]t\b/gi, '$1 not'],
  [/\b(won)['’]t\b/gi, 'will not'],
  [/\b(\w+)n['’]t\b/gi, '$1 not'],
  [/\b(what|where|how|it|that|there|here|who|when|which)['’]s\b/gi, '$1 is'],
  [/['’](?:s|re|ve|ll|d|m)\b/gi, ''],
];
// Chemical and index names people write with a dot, a space or a subscript.
const TERMS: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bpm\s?2[.,]5\b/gi, 'pm25'],
  [/\bpm\s?10\b/gi, 'pm10'],
  [/\bno₂|\bno 2\b/gi, 'no2'],
  [/\bch₄|\bch 4\b/gi, 'ch4'],
  [/\bco₂/gi, 'co2'],
];

function scriptOf(word: string): Script {
  if (DIGITS_RE.test(word)) return 'digits';
  if (CJK_RE.test(word)) return 'cjk';
  return LATIN_RE.test(word) ? 'latin' : 'other';
}

/** Rewrite contractions and chemical names, keeping the text readable (offsets refer to this form). */
export function preprocess(q: string): string {
  let s = q;
  for (const [re, to] of CONTRACTIONS) s = s.replace(re, to);
  for (const [re, to] of TERMS) s = s.replace(re, to);
  return s;
}

/** Tokens of an already preprocessed question. */
export function tokenize(text: string): Token[] {
  const out: Token[] = [];
  for (const m of text.matchAll(WORD_RE)) {
    const raw = m[0];
    const start = m.index;
    const end = start + raw.length;
    const script = scriptOf(raw);
    const norm = script === 'digits' ? raw.replace(',', '.') : normalizeName(raw).replace(/ /g, '');
    const next = text.slice(end).match(/^\s*([,.;:?!()])/);
    out.push({
      i: out.length,
      raw,
      norm,
      stem: script === 'latin' ? stem(norm) : norm,
      start,
      end,
      cap: script === 'latin' && raw[0] !== raw[0].toLowerCase(),
      script,
      after: next ? next[1] : '',
    });
  }
  return out;
}

const VOWEL = /[aeiouy]/;

/** "running" → "run": a doubled final consonant left by a stripped suffix (not l, s, z). */
function undouble(s: string): string {
  const n = s.length;
  if (n > 3 && s[n - 1] === s[n - 2] && !/[aeiouylsz]/.test(s[n - 1])) return s.slice(0, -1);
  return s;
}

/**
 * A light English stem: plural -s/-es/-ies, then -ing/-ed, then a final -e, so the inflections
 * of one word meet (change, changed, changes, changing → chang). Only used to compare words
 * with each other, never shown.
 */
export function stem(w: string): string {
  if (w.length <= 3 || !/^[a-z]+$/.test(w)) return w;
  let s = w;
  if (s.endsWith('ies') && s.length > 4) s = s.slice(0, -3) + 'y';
  else if (/(?:ch|sh|x|z|ss)es$/.test(s)) s = s.slice(0, -2);
  else if (s.endsWith('s') && !/(?:ss|us|is|ys)$/.test(s)) s = s.slice(0, -1);
  if (s.endsWith('ing') && s.length > 5 && VOWEL.test(s.slice(0, -3))) s = undouble(s.slice(0, -3));
  else if (s.endsWith('ed') && s.length > 4 && VOWEL.test(s.slice(0, -2))) s = undouble(s.slice(0, -2));
  if (s.endsWith('e') && s.length > 4) s = s.slice(0, -1);
  return s;
}

/** Stems of a keyword or phrase written in the registry ("crop-stress" and "crop stress" agree). */
export function stemsOf(text: string): string[] {
  return tokenize(preprocess(text)).map((t) => t.stem);
}
