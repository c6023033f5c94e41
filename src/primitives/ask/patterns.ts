/**
 * Phrase patterns of the /v1/ask router: words separated by spaces, where `*` alone is a gap of
 * zero to two words and `word*` matches any word beginning with `word`. Literal words compare by
 * stem, so "how * changed" also meets "how has Lyon changing". Patterns are compiled once.
 */
import { stemsOf, type Token } from './text.js';

type Part = { kind: 'word'; stem: string } | { kind: 'prefix'; prefix: string } | { kind: 'gap' };

export interface Pattern {
  readonly text: string;
  readonly parts: readonly Part[];
  /** Literal (non-gap) parts: how specific the pattern is. */
  readonly literals: number;
  /** Stems every match contains: a question lacking one is skipped without a walk. */
  readonly stems: readonly string[];
}

/** Widest gap `*` spans, in words. */
const MAX_GAP = 2;

/** Compile one pattern (lower-case text as the registry writes it). */
export function compilePattern(text: string): Pattern {
  const parts: Part[] = [];
  for (const w of text.split(/\s+/).filter(Boolean)) {
    if (w === '*') parts.push({ kind: 'gap' });
    else if (w.endsWith('*')) parts.push({ kind: 'prefix', prefix: w.slice(0, -1) });
    else for (const s of stemsOf(w)) parts.push({ kind: 'word', stem: s });
  }
  // Gaps at either end add nothing: a match is its literal words.
  while (parts[0]?.kind === 'gap') parts.shift();
  while (parts[parts.length - 1]?.kind === 'gap') parts.pop();
  const stems = parts.flatMap((p) => (p.kind === 'word' ? [p.stem] : []));
  return { text, parts, literals: parts.filter((p) => p.kind !== 'gap').length, stems };
}

/** A pattern occurrence: the span it covers and the tokens its literal words matched. */
export interface PatternMatch {
  start: number;
  end: number;
  literal: number[];
}

function fits(part: Part, t: Token): boolean {
  if (part.kind === 'word') return t.stem === part.stem;
  if (part.kind === 'prefix') return t.norm.startsWith(part.prefix);
  return false;
}

/**
 * The first occurrence of `p` in `tokens` whose literal words avoid `blocked` tokens. `stems`,
 * the question's stems, lets a pattern with a word the question lacks fail at once.
 */
export function findPattern(p: Pattern, tokens: readonly Token[], blocked: ReadonlySet<number>, stems?: ReadonlySet<string>): PatternMatch | undefined {
  if (p.parts.length === 0) return undefined;
  if (stems && !p.stems.every((s) => stems.has(s))) return undefined;
  // One path array reused by the whole search (push on the way in, pop on the way out).
  const path: number[] = [];
  const walk = (pi: number, ti: number): boolean => {
    if (pi === p.parts.length) return true;
    const part = p.parts[pi];
    if (part.kind === 'gap') {
      // A place name fills one slot of a gap however many words it has ("water in Lake Erie clean").
      const inName = (k: number) => blocked.has(k) || tokens[k].placeWord === true;
      let at = ti;
      for (let words = 0; words <= MAX_GAP && at <= tokens.length; words++) {
        if (walk(pi + 1, at)) return true;
        if (at < tokens.length && inName(at)) while (at + 1 < tokens.length && inName(at + 1)) at++;
        at++;
      }
      return false;
    }
    const t = tokens[ti];
    if (!t || blocked.has(ti) || !fits(part, t)) return false;
    path.push(ti);
    if (walk(pi + 1, ti + 1)) return true;
    path.pop();
    return false;
  };
  for (let s = 0; s < tokens.length; s++) {
    path.length = 0;
    if (walk(0, s)) return { start: path[0], end: path[path.length - 1], literal: [...path] };
  }
  return undefined;
}
