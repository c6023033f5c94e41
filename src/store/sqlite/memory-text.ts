/**
 * Text as the SQLite memory index's FTS5 tables see it (notes_fts, aliases_fts), for writing and
 * for searching alike.
 *
 * Words are runs of letters and digits (`\p{L}\p{N}`); everything else separates them and is
 * never seen by FTS5. Each word is indexed as `<scope id>q<word>`: the scope id is digits and the
 * `q` ends it (a scope id has no `q`, so the split is unambiguous whatever the word), and FTS5's
 * unicode61 tokenizer keeps the whole run as one token, folding case and diacritics, then porter
 * stems it. The prefix is digits and one consonant, so porter's measure of the word, which counts
 * vowel-consonant sequences after any leading consonants, stays what it was: "pumps" and "pump"
 * still meet. A query builds its terms the same way, so both sides always agree.
 *
 * Why a prefix rather than a scope column ANDed into the MATCH: a term's posting list then holds
 * one scope's documents only, so a search walks the scope's own matches, and bm25's document
 * frequencies (one full posting-list walk per term, per query) count only the scope's notes.
 * With a shared term, a common word costs a walk over every scope's notes (about 20 ms per
 * query at a million notes, measured), and another scope's private notes move this scope's
 * scores. What stays shared is bm25's row count and mean length (the table's totals).
 *
 * A query is its distinct words, each quoted as one phrase, OR-combined: a quoted run of letters
 * and digits is always a literal term to FTS5, so no caller text is parsed as query syntax
 * (`"north`, `NEAR(pump`, `pump*`, `AND`, `title:pump` come out as plain words or nothing).
 */

const WORD = /[\p{L}\p{N}]+/gu;
/** Distinct words a query keeps: an OR over more ranks no better and costs more. */
export const MAX_QUERY_WORDS = 32;

/** The token prefix of a scope id. */
function prefixOf(scopeId: number): string {
  return `${scopeId}q`;
}

/** The indexed form of `text` under a scope: every word, in order, prefixed (see above). */
export function indexedWords(scopeId: number, text: string): string {
  const p = prefixOf(scopeId);
  let out = '';
  for (const m of text.matchAll(WORD)) out += out === '' ? p + m[0] : ' ' + p + m[0];
  return out;
}

/** The distinct words of a caller's text (case folded), at most MAX_QUERY_WORDS; [] without a word. */
export function queryWords(text: unknown): string[] {
  if (text === undefined || text === null) return [];
  if (typeof text !== 'string') throw new TypeError('text: expected a string');
  const words = new Set<string>();
  for (const m of text.matchAll(WORD)) {
    words.add(m[0].toLowerCase());
    if (words.size === MAX_QUERY_WORDS) break;
  }
  return [...words];
}

/** One FTS5 phrase per word, scoped: `"<scope id>q<word>"`. */
export function queryTerms(scopeId: number, words: readonly string[]): string[] {
  const p = prefixOf(scopeId);
  return words.map((w) => `"${p}${w}"`);
}

/** A MATCH expression over terms (OR). */
export function matchOf(terms: readonly string[]): string {
  return terms.join(' OR ');
}
