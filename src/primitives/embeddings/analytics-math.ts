/**
 * The arithmetic of the embedding analytics (docs/embeddings.md, "Analytics over regions"), free
 * of I/O so each formula is checked on its own: the unit centroid and the record its
 * centroid_cid names, the cosine of two vectors, the mean pairwise cosine distance and the
 * seeded choice of vectors it is computed over above DIVERSITY_EXACT_MAX.
 */
import { b32encode } from '../../protocol/base32.js';
import { toHex, utf8 } from '../../protocol/bytes.js';
import { encodeCanonical } from '../../protocol/cbor.js';
import { blake3 } from '../../protocol/hash.js';
import { cosine, norm, round } from '../reads/common.js';
import { centroid } from '../reads/region.js';

/** Algorithms of the registry (algorithms.json) each answer cites. */
export const ALGORITHMS = {
  centroid: 'embedding_centroid@1',
  similarity: 'embedding_cosine_similarity@1',
  diversity: 'embedding_diversity@1',
  consistency: 'neighborhood_consistency@1',
} as const;

/** Up to this many vectors, diversity is computed over every pair; above it, over a seeded subset of this size. */
export const DIVERSITY_EXACT_MAX = 256;

/**
 * A mean shorter than this fraction of the mean length of the vectors has no direction worth
 * naming (the vectors cancel out): the centroid is inconclusive rather than a blown-up residue.
 */
export const ZERO_MEAN_RATIO = 1e-9;

/**
 * The L2-normalised mean c = m / |m|, m = (1/n) Σ e_i (each value rounded to 12 significant
 * digits, as served); null when there is no vector or the mean has no direction.
 */
export function unitCentroid(vectors: readonly number[][]): number[] | null {
  const m = centroid(vectors);
  if (!m) return null;
  const len = norm(m);
  const meanLen = vectors.reduce((s, v) => s + norm(v), 0) / vectors.length;
  if (!(len > 0) || !Number.isFinite(len) || len < ZERO_MEAN_RATIO * meanLen) return null;
  return m.map((x) => round(x / len));
}

/** The record a centroid_cid names (docs/embeddings.md, "The centroid record"): fact_cids ascending. */
export interface CentroidRecord {
  encoder: string;
  dim: number;
  centroid: number[];
  fact_cids: string[];
}

export function centroidRecord(encoder: string, dim: number, c: number[], factCids: readonly string[]): CentroidRecord {
  return { encoder, dim, centroid: c, fact_cids: [...factCids].sort() };
}

/** base32(BLAKE3(canonical CBOR of the record)): 52 characters. */
export function centroidCid(record: CentroidRecord): string {
  return b32encode(blake3(encodeCanonical({ encoder: record.encoder, dim: record.dim, centroid: record.centroid, fact_cids: record.fact_cids })));
}

/** A bounded score (cosine, distance) to 12 decimal places, so float noise (2e-16) reads as the 0 it is. */
export function score(x: number): number {
  return Math.round(x * 1e12) / 1e12 || 0;
}

/** cos = (a · b) / (|a| |b|), to 12 decimal places; null for a zero vector. */
export function cosineOf(a: readonly number[], b: readonly number[]): number | null {
  const c = cosine(a, b);
  return c === null ? null : score(c);
}

/** Unit vectors (each divided by its length); the caller leaves zero vectors out. */
function units(vectors: readonly number[][]): Float64Array[] {
  return vectors.map((v) => {
    const len = norm(v);
    return Float64Array.from(v, (x) => x / len);
  });
}

/** D = (2 / (n (n − 1))) Σ_{i<j} (1 − cos(e_i, e_j)), in [0, 2]; null below 2 vectors. */
export function meanPairwiseDistance(vectors: readonly number[][]): { diversity: number | null; pairs: number } {
  const n = vectors.length;
  if (n < 2) return { diversity: null, pairs: 0 };
  const u = units(vectors);
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const a = u[i];
    for (let j = i + 1; j < n; j++) {
      const b = u[j];
      let dot = 0;
      for (let k = 0; k < a.length; k++) dot += a[k] * b[k];
      sum += 1 - Math.max(-1, Math.min(1, dot));
    }
  }
  const pairs = (n * (n - 1)) / 2;
  return { diversity: Math.max(0, Math.min(2, score(sum / pairs))), pairs };
}

/** The sort key of a vector in the seeded subset: hex(BLAKE3(utf8("embedding_diversity@1|" seed "|" fact_cid))). */
export function sampleKey(seed: number, factCid: string): string {
  return toHex(blake3(utf8(`${ALGORITHMS.diversity}|${seed}|${factCid}`)));
}

/**
 * The vectors diversity is computed over: all of them up to `max`, else the `max` whose sample
 * keys are smallest (order-free and reproducible from the fact_cids and the seed alone), kept
 * in their input order.
 */
export function seededSubset<T extends { fact_cid: string }>(items: readonly T[], max: number, seed: number): T[] {
  if (items.length <= max) return [...items];
  const keyed = items.map((x, i) => ({ i, key: sampleKey(seed, x.fact_cid) }));
  keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.i - b.i));
  const keep = new Set(keyed.slice(0, max).map((k) => k.i));
  return items.filter((_, i) => keep.has(i));
}
