/**
 * Search keys of notes on PostgreSQL. A note's `keys` array holds each distinct term of its
 * document and each of its tags, every one prefixed with an 8-character code of the note's scope:
 *
 *   <code>:<term>     a term (note-terms.ts)
 *   <code>#<tag>      a tag, exactly as written
 *
 * One GIN index over `keys` then answers "notes of this scope with this term (and these tags)"
 * from the posting lists of those keys alone. With bare terms, a term common across all scopes
 * listed every scope's notes, and PostgreSQL intersected that with the scope's and the tag's
 * own lists (hundreds of thousands of row ids at 1 M notes: 25–45 ms a term with a tag filter,
 * measured). The code is a hash: two scopes sharing one would only share postings, and every
 * statement also checks `scope_key`, so a read never returns another scope's note.
 */
import { b32encode } from '../../protocol/base32.js';
import { utf8 } from '../../protocol/bytes.js';
import { blake3 } from '../../protocol/hash.js';

/** Length of the scope code (base32 characters: 40 bits). */
const CODE_CHARS = 8;
const codes = new Map<string, string>();

/** The code of a scope key ('' for public notes). */
export function scopeCode(scopeKey: string): string {
  let c = codes.get(scopeKey);
  if (c === undefined) {
    if (codes.size >= 10_000) codes.clear();
    c = b32encode(blake3(utf8(`svc.pg.note-keys\u0000${scopeKey}`))).slice(0, CODE_CHARS);
    codes.set(scopeKey, c);
  }
  return c;
}

/** The key of a term in a scope. */
export function termKey(code: string, term: string): string {
  return `${code}:${term}`;
}

/** The key of a tag in a scope. */
export function tagKey(code: string, tag: string): string {
  return `${code}#${tag}`;
}

/**
 * SQL: what the per-scope counts (`mem_note_df`) count a key under: a term as itself, a tag as
 * `#` + the tag (no term holds a `#`, so the two never meet; the ranking asks for terms only).
 */
export function countedKeySql(key: string): string {
  return `CASE WHEN substr(${key}, ${CODE_CHARS + 1}, 1) = ':' THEN substr(${key}, ${CODE_CHARS + 2}) ELSE '#' || substr(${key}, ${CODE_CHARS + 2}) END`;
}

/** The name a tag's count has in `mem_note_df`. */
export function countedTag(tag: string): string {
  return `#${tag}`;
}
