/**
 * Text as the SQLite memory index's FTS5 tables see it (notes_fts, aliases_fts), for writing and
 * for searching alike.
 *
 * This module is the only tokenizer. Words are runs of letters, digits and the marks attached to
 * them (`[\p{L}\p{N}\p{M}]`); everything else separates them and is never seen by FTS5. Each word
 * is folded here (see `fold`) and indexed as `<scope id>q<word>`: the scope id is digits and the
 * `q` ends it (a scope id has no `q`, so the split is unambiguous whatever the word).
 *
 * Why FTS5's `ascii` tokenizer (FTS_TOKENIZE) rather than `unicode61`: a word must reach FTS5 as
 * one token, or its part after a split loses the scope prefix and lands in whatever posting list
 * its own leading digits name (a public note holding `xᦰ2qpump` would add `2qpump`, scope 2's
 * "pump"). unicode61 decides what separates words from a Unicode table of its own, older than
 * the one this runtime's `\p{L}` uses (U+19B0–19C0, U+19C8–19C9 and U+1CF2–1CF3 are letters here
 * and separators there), and either table can change with an upgrade. `ascii` separates only at
 * ASCII characters other than letters and digits, and a folded word holds none (it is re-split
 * after folding), so FTS5 cannot split what this module joined, whatever Unicode either side
 * knows. Case and diacritics are therefore folded here, on both sides by one function; porter
 * then stems the ASCII suffix of each token. The prefix is digits and one consonant, so porter's
 * measure of the word (vowel-consonant sequences after any leading consonants) is unchanged:
 * "pumps" and "pump" still meet.
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

/** The FTS5 tokenizer of aliases_fts (schema.ts); see above for why. */
export const FTS_TOKENIZE = 'porter ascii';
/**
 * The FTS5 tokenizer of notes_fts: note terms come stemmed by note-terms.ts (the same terms
 * PostgreSQL indexes), so FTS5 only splits them, at the spaces between them.
 */
export const NOTE_TOKENIZE = 'ascii';

/** Distinct words a query keeps: an OR over more ranks no better and costs more. */
export const MAX_QUERY_WORDS = 32;

import { textWords } from '../note-terms.js';

export { textWords };

/** The token prefix of a scope id. */
function prefixOf(scopeId: number): string {
  return `${scopeId}q`;
}

/** The indexed form of note terms under a scope: each prefixed (see above). */
export function indexedTerms(scopeId: number, terms: readonly string[]): string {
  const p = prefixOf(scopeId);
  return terms.map((t) => p + t).join(' ');
}

/** The indexed form of `text` under a scope: every word, in order, prefixed (see above). */
export function indexedWords(scopeId: number, text: string): string {
  const p = prefixOf(scopeId);
  let out = '';
  for (const w of textWords(text)) out += out === '' ? p + w : ' ' + p + w;
  return out;
}

/** The distinct words of a caller's text (folded), at most MAX_QUERY_WORDS; [] without a word. */
export function queryWords(text: unknown): string[] {
  if (text === undefined || text === null) return [];
  if (typeof text !== 'string') throw new TypeError('text: expected a string');
  const words = new Set<string>();
  for (const w of textWords(text)) {
    words.add(w);
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
