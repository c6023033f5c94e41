/**
 * Words and terms of agent notes, the one definition every store and the ranking share
 * (docs/memory.md, "How search ranks"). Both stores index exactly the terms this module makes
 * and the ranking (primitives/memory/note-rank.ts) scores them itself, so a search ranks the same
 * notes the same way on SQLite and on PostgreSQL.
 *
 * A word is a run of letters, digits and the marks attached to them; everything else separates
 * words. Each word is folded (Unicode lower case, general-purpose diacritics dropped, final sigma
 * as sigma: "İstanbul", "ISTANBUL" and "istanbul" are one word, "café" is "cafe"); an ASCII word is
 * then reduced to its Porter stem ("pumps", "pumping" → "pump"). Marks that spell a script (Indic
 * vowel signs, kana voicing marks) stay.
 *
 * A note's document has three fields, each a list of terms: its text, its speaker (who said or
 * wrote what it records) and its tags (split at `_ . : -`). The index keeps the document packed as
 * one string (`packDocument`): the fields' terms, space separated, the fields separated by a tab.
 * A term never holds a space or a tab, so the packing is unambiguous.
 */
import { stemmer } from 'stemmer';

const WORD = /[\p{L}\p{N}\p{M}]+/gu;
const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;
const ASCII_WORD = /^[A-Za-z0-9]+$/;
const ASCII_LETTERS = /^[a-z]+$/;
/**
 * Diacritics folded away: the general-purpose combining blocks (Latin, Greek, Cyrillic accents).
 * Marks that are part of a script's spelling stay: dropping them would make different words one.
 */
const DIACRITIC = /[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]/gu;

/** Longest word kept (characters): longer runs are not words anyone searches for. */
export const MAX_WORD_CHARS = 64;

/** One word folded: lower case word by word, decomposed, diacritics dropped, recomposed, final sigma as sigma. */
function fold(word: string): string {
  return word.toLowerCase().normalize('NFD').replace(DIACRITIC, '').normalize('NFC').replace(/ς/g, 'σ');
}

/** The folded words of `text`, in order: each holds a letter or digit and no ASCII separator. */
export function* textWords(text: string): Generator<string> {
  for (const m of text.matchAll(WORD)) {
    if (ASCII_WORD.test(m[0])) {
      yield m[0].toLowerCase();
      continue;
    }
    // Re-split: folding keeps letters, digits and marks only in principle; this makes it a rule.
    for (const w of fold(m[0]).matchAll(WORD)) if (LETTER_OR_DIGIT.test(w[0])) yield w[0];
  }
}

/** Stems already computed: words repeat across notes, and stemming is most of a note's indexing. */
const STEMS = new Map<string, string>();
const STEMS_MAX = 50_000;

/** The term of a folded word: its Porter stem when it is ASCII letters, else the word itself. */
export function termOf(word: string): string {
  if (!(word.length > 2 && ASCII_LETTERS.test(word))) return word;
  let t = STEMS.get(word);
  if (t === undefined) {
    if (STEMS.size >= STEMS_MAX) STEMS.clear();
    t = stemmer(word);
    STEMS.set(word, t);
  }
  return t;
}

/** The terms of `text`, in order (words longer than MAX_WORD_CHARS dropped). */
export function termsOf(text: string): string[] {
  const out: string[] = [];
  for (const w of textWords(text)) if (w.length <= MAX_WORD_CHARS) out.push(termOf(w));
  return out;
}

/** A note as the index sees it: the terms of each field. */
export interface NoteDocument {
  text: string[];
  speaker: string[];
  tags: string[];
}

/** The document of a note's text, speaker and tags. */
export function noteDocument(text: string, speaker: string | null, tags: readonly string[]): NoteDocument {
  return {
    text: termsOf(text),
    speaker: speaker === null ? [] : termsOf(speaker),
    tags: tags.flatMap((t) => termsOf(t.replace(/[_.:-]/g, ' '))),
  };
}

/** The distinct terms of a document (any field): what the inverted index lists it under. */
export function documentTerms(d: NoteDocument): string[] {
  return [...new Set([...d.text, ...d.speaker, ...d.tags])];
}

/** The document as one string (see the top of this file). */
export function packDocument(d: NoteDocument): string {
  return `${d.text.join(' ')}\t${d.speaker.join(' ')}\t${d.tags.join(' ')}`;
}

const split = (s: string | undefined): string[] => (s ? s.split(' ') : []);

/** The document `packDocument` wrote. */
export function unpackDocument(s: string): NoteDocument {
  const [text, speaker, tags] = s.split('\t');
  return { text: split(text), speaker: split(speaker), tags: split(tags) };
}
