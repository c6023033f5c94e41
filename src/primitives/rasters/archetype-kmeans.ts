/**
 * k-means for region_archetype_map (docs/rasters.md, "The clustering"): Lloyd's algorithm
 * (with Hamerly's bounds to skip vectors that cannot move) and Euclidean distance on
 * L2-normalised vectors (for unit vectors |a − b|² = 2 − 2·cos(a, b), so nearer is more similar
 * by cosine), seeded by greedy k-means++ (2 + ⌊ln k⌋ candidates per centre, the one lowering the
 * potential most kept) from a xoshiro128** stream whose state is the first 16 bytes of
 * BLAKE3("svc/region_archetype_map@1/seed" ‖ 0x00 ‖ aoi_cid ‖ 0x00 ‖ k in decimal). Every sum runs in a
 * fixed order in double precision and every tie goes to the lower index, so the same input gives
 * the same labels, centroids and inertia, bit for bit, on any machine.
 */
import { blake3 } from '@noble/hashes/blake3.js';

/** Assignment passes at most. */
export const KMEANS_MAX_ITERATIONS = 50;

/** The PRNG state for a region and k. */
export function kmeansSeed(aoiCid: string, k: number): Uint8Array {
  return blake3(new TextEncoder().encode(`svc/region_archetype_map@1/seed\u0000${aoiCid}\u0000${k}`)).subarray(0, 16);
}

/** xoshiro128** (Blackman and Vigna), state from 16 little-endian bytes. */
export class Xoshiro128 {
  private s: Uint32Array;
  constructor(seed: Uint8Array) {
    const dv = new DataView(seed.buffer, seed.byteOffset, 16);
    this.s = Uint32Array.from([0, 1, 2, 3].map((i) => dv.getUint32(4 * i, true)));
    if (this.s.every((x) => x === 0)) this.s[0] = 1;
  }
  /** The next 32-bit output. */
  next(): number {
    const s = this.s;
    const r = Math.imul(rotl(Math.imul(s[1], 5), 7), 9) >>> 0;
    const t = s[1] << 9;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 11);
    return r;
  }
  /** A double in [0, 1) from 53 bits of two outputs. */
  uniform(): number {
    const a = this.next() >>> 5;
    const b = this.next() >>> 6;
    return (a * 67_108_864 + b) / 9_007_199_254_740_992;
  }
}
function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

export interface KMeansResult {
  /** Archetype of each vector: 0 is the most frequent (ties: the one whose first vector comes first). */
  labels: Uint8Array;
  /** k × dim centroids, each the L2-normalised mean of its vectors, rounded to float32. */
  centroids: Float32Array;
  counts: number[];
  /** Σ |x − mean of its archetype|² over the normalised vectors. */
  inertia: number;
  iterations: number;
  converged: boolean;
}

/**
 * Called between passes: the caller may yield to other work there (a pass over a full field takes
 * tens of milliseconds) or stop the computation by throwing. It never changes the result.
 */
export type Pause = () => Promise<void>;
const noPause: Pause = async () => {};

/** Squared Euclidean distance from vector `i` of `x` to centre `c`: Σ (x − c)², four running sums added pairwise. */
function dist2(x: Float32Array, i: number, c: Float64Array, dim: number): number {
  const o = i * dim;
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let d = 0;
  for (; d + 3 < dim; d += 4) {
    const e0 = x[o + d] - c[d];
    const e1 = x[o + d + 1] - c[d + 1];
    const e2 = x[o + d + 2] - c[d + 2];
    const e3 = x[o + d + 3] - c[d + 3];
    s0 += e0 * e0;
    s1 += e1 * e1;
    s2 += e2 * e2;
    s3 += e3 * e3;
  }
  for (; d < dim; d++) {
    const e = x[o + d] - c[d];
    s0 += e * e;
  }
  return s0 + s1 + (s2 + s3);
}

function sq(c: Float64Array): number {
  let s = 0;
  for (let d = 0; d < c.length; d++) s += c[d] * c[d];
  return s;
}

/** Squared distance between two centres. */
function between(a: Float64Array, b: Float64Array): number {
  let s = 0;
  for (let d = 0; d < a.length; d++) s += (a[d] - b[d]) * (a[d] - b[d]);
  return s;
}

/** Index of the first vector whose running D² sum passes u × total (the last with D² > 0 if rounding leaves none). */
function weighted(d2: Float64Array, total: number, u: number): number {
  const target = u * total;
  let cum = 0;
  let last = -1;
  for (let i = 0; i < d2.length; i++) {
    if (d2[i] <= 0) continue;
    cum += d2[i];
    last = i;
    if (cum > target) return i;
  }
  return last;
}

/** Greedy k-means++: the k starting centres, or null when fewer than k distinct vectors exist. */
export async function seeds(x: Float32Array, n: number, dim: number, k: number, rng: Xoshiro128, pause: Pause = noPause): Promise<Float64Array[] | null> {
  const row = (i: number) => Float64Array.from(x.subarray(i * dim, (i + 1) * dim));
  const centres: Float64Array[] = [row(Math.min(n - 1, Math.floor(rng.uniform() * n)))];
  const d2 = new Float64Array(n);
  for (let i = 0; i < n; i++) d2[i] = dist2(x, i, centres[0], dim);
  const trials = 2 + Math.floor(Math.log(k));
  const cand = new Float64Array(n);
  const best = new Float64Array(n);
  while (centres.length < k) {
    let total = 0;
    for (let i = 0; i < n; i++) total += d2[i];
    if (!(total > 0)) return null;
    let bestPot = Infinity;
    let bestIdx = -1;
    for (let t = 0; t < trials; t++) {
      await pause();
      const idx = weighted(d2, total, rng.uniform());
      const c = row(idx);
      let pot = 0;
      for (let i = 0; i < n; i++) {
        const v = Math.min(d2[i], dist2(x, i, c, dim));
        cand[i] = v;
        pot += v;
      }
      if (pot < bestPot) {
        bestPot = pot;
        bestIdx = idx;
        best.set(cand);
      }
    }
    centres.push(row(bestIdx));
    d2.set(best);
  }
  return centres;
}

/**
 * Clusters the `n` unit vectors of `x` (n × dim, row-major) into `k` archetypes; null when the
 * vectors hold fewer than k distinct points (k-means++ runs out of positive distances). Lloyd's
 * passes skip the vectors whose assignment cannot change (Hamerly's bounds: an upper bound on
 * the distance to the own centre, a lower bound on the distance to any other, both moved by how
 * far the centres moved); the rest are assigned to the nearest centre, ties to the lower index.
 */
export async function kmeans(x: Float32Array, n: number, dim: number, k: number, seed: Uint8Array, pause: Pause = noPause): Promise<KMeansResult | null> {
  const rng = new Xoshiro128(seed);
  const centres = await seeds(x, n, dim, k, rng, pause);
  if (!centres) return null;
  const labels = new Int32Array(n);
  const upper = new Float64Array(n);
  const lower = new Float64Array(n);
  const sums = centres.map(() => new Float64Array(dim));
  const counts = new Array<number>(k).fill(0);
  const moved = new Float64Array(k);
  const half = new Float64Array(k);
  // Bounds are kept a hair loose so that rounding never lets a vector be skipped wrongly.
  const SLACK = 1e-9;
  const assign = (i: number) => {
    let b1 = Infinity;
    let b2 = Infinity;
    let bj = 0;
    for (let j = 0; j < k; j++) {
      const v = dist2(x, i, centres[j], dim);
      if (v < b1) {
        b2 = b1;
        b1 = v;
        bj = j;
      } else if (v < b2) b2 = v;
    }
    upper[i] = Math.sqrt(b1) + SLACK;
    lower[i] = Math.sqrt(b2) - SLACK;
    return bj;
  };
  for (let i = 0; i < n; i++) labels[i] = assign(i);
  let iterations = 1;
  let converged = false;
  while (true) {
    // Means of the current assignment; an empty archetype restarts at the vector farthest from its centre.
    for (const s of sums) s.fill(0);
    counts.fill(0);
    for (let i = 0; i < n; i++) {
      const s = sums[labels[i]];
      const o = i * dim;
      for (let d = 0; d < dim; d++) s[d] += x[o + d];
      counts[labels[i]]++;
    }
    const next = centres.map((c, j) => (counts[j] > 0 ? sums[j].map((v) => v / counts[j]) : c));
    const empty = counts.some((c) => c === 0);
    if (empty) {
      const far = new Float64Array(n);
      for (let i = 0; i < n; i++) far[i] = dist2(x, i, centres[labels[i]], dim);
      for (let j = 0; j < k; j++) {
        if (counts[j] > 0) continue;
        let f = 0;
        for (let i = 1; i < n; i++) if (far[i] > far[f]) f = i;
        next[j] = Float64Array.from(x.subarray(f * dim, (f + 1) * dim));
        far[f] = -1;
      }
    }
    let maxMove = 0;
    let secondMove = 0;
    let maxJ = -1;
    for (let j = 0; j < k; j++) {
      moved[j] = Math.sqrt(between(centres[j], next[j])) + SLACK;
      if (moved[j] > maxMove) {
        secondMove = maxMove;
        maxMove = moved[j];
        maxJ = j;
      } else if (moved[j] > secondMove) secondMove = moved[j];
      centres[j] = next[j];
    }
    if (iterations >= KMEANS_MAX_ITERATIONS) break;
    await pause();
    iterations++;
    for (let j = 0; j < k; j++) {
      let m = Infinity;
      for (let j2 = 0; j2 < k; j2++) if (j2 !== j) m = Math.min(m, between(centres[j], centres[j2]));
      half[j] = Math.sqrt(m) / 2 - SLACK;
    }
    let changed = 0;
    for (let i = 0; i < n; i++) {
      const a = labels[i];
      upper[i] += moved[a];
      lower[i] -= a === maxJ ? secondMove : maxMove;
      const bound = Math.max(half[a], lower[i]);
      if (upper[i] <= bound) continue;
      upper[i] = Math.sqrt(dist2(x, i, centres[a], dim)) + SLACK;
      if (upper[i] <= bound) continue;
      const b = assign(i);
      if (b !== a) {
        labels[i] = b;
        changed++;
      }
    }
    if (changed === 0 && !empty) {
      converged = true;
      break;
    }
  }
  return finish(x, n, dim, k, labels, centres, iterations, converged);
}

/** Means of the final labels, relabelled by size, normalised; the inertia against the means. */
function finish(x: Float32Array, n: number, dim: number, k: number, labels: Int32Array, last: Float64Array[], iterations: number, converged: boolean): KMeansResult {
  const sums = Array.from({ length: k }, () => new Float64Array(dim));
  const counts = new Array<number>(k).fill(0);
  const first = new Array<number>(k).fill(n);
  for (let i = 0; i < n; i++) {
    const j = labels[i];
    const o = i * dim;
    for (let d = 0; d < dim; d++) sums[j][d] += x[o + d];
    counts[j]++;
    if (first[j] === n) first[j] = i;
  }
  const means = sums.map((s, j) => (counts[j] > 0 ? s.map((v) => v / counts[j]) : Float64Array.from(last[j])));
  let inertia = 0;
  for (let i = 0; i < n; i++) {
    const m = means[labels[i]];
    const o = i * dim;
    for (let d = 0; d < dim; d++) {
      const e = x[o + d] - m[d];
      inertia += e * e;
    }
  }
  const order = Array.from({ length: k }, (_, j) => j).sort((a, b) => counts[b] - counts[a] || first[a] - first[b] || a - b);
  const rank = new Array<number>(k);
  order.forEach((j, r) => {
    rank[j] = r;
  });
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = rank[labels[i]];
  const centroids = new Float32Array(k * dim);
  order.forEach((j, r) => {
    const m = means[j];
    const norm = Math.sqrt(sq(m));
    for (let d = 0; d < dim; d++) centroids[r * dim + d] = norm > 0 ? m[d] / norm : 0;
  });
  return { labels: out, centroids, counts: order.map((j) => counts[j]), inertia, iterations, converged };
}
