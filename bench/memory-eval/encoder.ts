/**
 * A stand-in for the caller's embedding model: deterministic 64-dimension vectors for notes and
 * queries. There is no embedding model offline, so this is SYNTHETIC, and it is built from the
 * generator's own lexicon: a run of words that spells a paraphrase of a concept (in either tense,
 * with any possessive) maps to that concept's vector, which is what a model that understands
 * paraphrase would do. It is deliberately imperfect: a fixed 20% of the surface forms are
 * unknown to it, and those words fall back to word vectors. It knows the held-out paraphrases
 * too. Hybrid and vector figures computed with it are therefore an upper-ish bound on what a
 * real model would give, not a measurement of one.
 *
 * Vector of a text: sum of (concept vectors × CONCEPT_WEIGHT) for the phrases found, plus a
 * pseudo-random unit vector per other word (its Porter stem, so "moved" and "move" agree;
 * function words weigh less), plus small noise seeded by the text, L2-normalised.
 */
import { stemmer } from 'stemmer';
import { seededRandom } from '../harness.js';
import { CONCEPT_BY_ID, POSSESSIVES, allForms, render } from './lexicon.js';

export const ENCODER_LABEL = 'stand-in concept encoder (synthetic)';
export const ENCODER_DIM = 64;
/** Share of surface forms the encoder does not recognise. */
export const ENCODER_MISS_RATE = 0.2;
const CONCEPT_WEIGHT = 2.5;
const FUNCTION_WEIGHT = 0.25;
const NOISE_SIGMA = 0.01;

const FUNCTION_WORDS = new Set(
  'a an the i me my you your he him his she her it its we our they their them to of in on at for with and or but so is was were be been am are do did does have has had that this what when where who why how there here not no just too very about from by as up out if then than'.split(
    ' ',
  ),
);

/** 32-bit FNV-1a of a string. */
export function hash32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A pseudo-random unit vector (Gaussian components via Box-Muller) from a seed. */
function unitVector(seed: number): Float64Array {
  const r = seededRandom(seed);
  const v = new Float64Array(ENCODER_DIM);
  for (let i = 0; i < ENCODER_DIM; i += 2) {
    const u1 = Math.max(r(), 1e-12);
    const u2 = r();
    const m = Math.sqrt(-2 * Math.log(u1));
    v[i] = m * Math.cos(2 * Math.PI * u2);
    if (i + 1 < ENCODER_DIM) v[i + 1] = m * Math.sin(2 * Math.PI * u2);
  }
  return normalise(v);
}

function normalise(v: Float64Array): Float64Array {
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n) || 1;
  for (let i = 0; i < v.length; i++) v[i] /= n;
  return v;
}

export const words = (text: string): string[] => (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) as string[];

interface Phrase {
  tokens: string[];
  concept: string;
}

export class ConceptEncoder {
  private readonly phrases = new Map<string, Phrase[]>();
  private readonly wordCache = new Map<string, Float64Array>();
  private readonly conceptVec = new Map<string, Float64Array>();
  /** Surface forms the encoder was built not to know (for the report). */
  readonly missedForms: number;
  readonly knownForms: number;

  constructor(readonly seed = 0x5eed) {
    let missed = 0;
    let known = 0;
    for (const { concept, form } of allForms()) {
      if (hash32(`${seed}|${form}`) % 1000 < ENCODER_MISS_RATE * 1000) {
        missed++;
        continue;
      }
      known++;
      const seen = new Set<string>();
      for (const tense of ['base', 'past'] as const) {
        for (const poss of POSSESSIVES) {
          const tokens = words(render(form, tense, poss));
          const key = tokens.join(' ');
          if (seen.has(key)) continue;
          seen.add(key);
          const list = this.phrases.get(tokens[0]) ?? [];
          list.push({ tokens, concept });
          this.phrases.set(tokens[0], list);
        }
      }
    }
    for (const list of this.phrases.values()) list.sort((a, b) => b.tokens.length - a.tokens.length);
    this.missedForms = missed;
    this.knownForms = known;
  }

  private conceptVector(id: string): Float64Array {
    let v = this.conceptVec.get(id);
    if (!v) {
      const own = unitVector(hash32(`${this.seed}|concept|${id}`));
      const cat = unitVector(hash32(`${this.seed}|category|${CONCEPT_BY_ID.get(id)?.category}`));
      v = normalise(own.map((x, i) => 0.8 * x + 0.6 * cat[i]));
      this.conceptVec.set(id, v);
    }
    return v;
  }

  private wordVector(stem: string): Float64Array {
    let v = this.wordCache.get(stem);
    if (!v) {
      v = unitVector(hash32(`${this.seed}|word|${stem}`));
      this.wordCache.set(stem, v);
    }
    return v;
  }

  /** The concepts the encoder recognises in `text`, in order. */
  concepts(text: string): string[] {
    return this.scan(words(text))
      .filter((x) => x.concept !== undefined)
      .map((x) => x.concept as string);
  }

  private scan(tokens: string[]): Array<{ concept?: string; word?: string }> {
    const out: Array<{ concept?: string; word?: string }> = [];
    let i = 0;
    while (i < tokens.length) {
      const match = this.phrases.get(tokens[i])?.find((p) => p.tokens.every((t, j) => tokens[i + j] === t));
      if (match) {
        out.push({ concept: match.concept });
        i += match.tokens.length;
      } else {
        out.push({ word: tokens[i] });
        i++;
      }
    }
    return out;
  }

  /** The unit vector of `text`, components rounded to 5 decimals. */
  encode(text: string): number[] {
    const sum = new Float64Array(ENCODER_DIM);
    for (const item of this.scan(words(text))) {
      const [vec, w] =
        item.concept !== undefined
          ? [this.conceptVector(item.concept), CONCEPT_WEIGHT]
          : [this.wordVector(stemmer(item.word as string)), FUNCTION_WORDS.has(item.word as string) ? FUNCTION_WEIGHT : 1];
      for (let d = 0; d < ENCODER_DIM; d++) sum[d] += w * vec[d];
    }
    normalise(sum);
    const noise = seededRandom(hash32(`${this.seed}|noise|${text}`));
    for (let d = 0; d < ENCODER_DIM; d++) sum[d] += NOISE_SIGMA * (noise() + noise() + noise() - 1.5) * 2;
    normalise(sum);
    return Array.from(sum, (x) => Math.round(x * 1e5) / 1e5);
  }
}
