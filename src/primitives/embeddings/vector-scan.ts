/**
 * Exact scoring and top-k selection over a band's vectors: the reference find_similar answers by
 * on small corpora or when asked (`exact: true`), and the re-scoring of every candidate the
 * approximate graph proposes, so a returned score is always exact.
 */
import { hammingDistance, type IndexedVector } from './vector-index.js';
import type { BandArena } from './vector-arena.js';

export interface Scored {
  score: number;
  v: IndexedVector;
}

/** Lower score, then later cell, is worse: a deterministic order. */
function worse(score: number, cell: string, than: Scored): boolean {
  return score < than.score || (score === than.score && cell > than.v.cell);
}

/** Min-heap of the best `k` (score, vector) pairs. */
export class TopK {
  private readonly items: Scored[] = [];
  constructor(private readonly k: number) {}

  /** True when a candidate with this score and cell would enter the heap. */
  admits(score: number, cell: string): boolean {
    const h = this.items;
    return h.length < this.k || worse(h[0]!.score, h[0]!.v.cell, { score, v: { cell } as IndexedVector });
  }

  offer(score: number, v: IndexedVector): void {
    const h = this.items;
    if (!this.admits(score, v.cell)) return;
    const under = (x: Scored, y: Scored) => worse(x.score, x.v.cell, y);
    if (h.length < this.k) {
      h.push({ score, v });
      for (let i = h.length - 1; i > 0; ) {
        const p = (i - 1) >> 1;
        if (!under(h[i]!, h[p]!)) break;
        [h[i], h[p]] = [h[p]!, h[i]!];
        i = p;
      }
      return;
    }
    h[0] = { score, v };
    for (let i = 0; ; ) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && under(h[l]!, h[m]!)) m = l;
      if (r < h.length && under(h[r]!, h[m]!)) m = r;
      if (m === i) break;
      [h[i], h[m]] = [h[m]!, h[i]!];
      i = m;
    }
  }

  /** Best first. */
  sorted(): Scored[] {
    return [...this.items].sort((a, b) => (worse(a.score, a.v.cell, b) ? 1 : worse(b.score, b.v.cell, a) ? -1 : 0));
  }
}

/** Dot product in float64 with four partial sums (the additions no longer wait on each other). */
function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let d0 = 0;
  let d1 = 0;
  let d2 = 0;
  let d3 = 0;
  const n = a.length - (a.length % 4);
  let i = 0;
  for (; i < n; i += 4) {
    d0 += a[i]! * b[i]!;
    d1 += a[i + 1]! * b[i + 1]!;
    d2 += a[i + 2]! * b[i + 2]!;
    d3 += a[i + 3]! * b[i + 3]!;
  }
  for (; i < a.length; i++) d0 += a[i]! * b[i]!;
  return d0 + d1 + d2 + d3;
}

function clampCosine(d: number, qn: number, vn: number): number | undefined {
  const c = d / qn / vn;
  return Number.isFinite(c) ? Math.max(-1, Math.min(1, c)) : undefined;
}

export function cosineOf(q: IndexedVector, v: IndexedVector): number | undefined {
  const a = q.values;
  const b = v.values;
  if (!a || !b || q.norm === 0 || v.norm === 0 || a.length !== b.length) return undefined;
  return clampCosine(dot(a, b), q.norm, v.norm);
}

export function agreementOf(q: IndexedVector, v: IndexedVector): number | undefined {
  if (!q.bits || !v.bits || q.dim !== v.dim) return undefined;
  return 1 - hammingDistance(q.bits, v.bits) / q.dim;
}

/** Cosine of the query to one arena slot (exact values), or undefined (withdrawn, zero vector). */
function slotCosine(a: BandArena, q: IndexedVector, slot: number): number | undefined {
  if (!a.isLive(slot) || a.norms[slot] === 0 || !q.values || q.norm === 0 || q.values.length !== a.dim) return undefined;
  return clampCosine(dot(q.values, a.valuesOf(slot)), q.norm, a.norms[slot]!);
}

/** The best `k` slots of `slots` (every slot when omitted) by exact cosine to `q`, `exclude` left out. */
export function cosineTopK(a: BandArena, q: IndexedVector, k: number, exclude: string | undefined, slots?: Iterable<number>): Scored[] {
  const top = new TopK(k);
  const visit = (s: number) => {
    const score = slotCosine(a, q, s);
    if (score === undefined || a.cells[s] === exclude || !top.admits(score, a.cells[s]!)) return;
    top.offer(score, a.view(s));
  };
  if (slots) for (const s of slots) visit(s);
  else for (let s = 0; s < a.count; s++) visit(s);
  return top.sorted();
}

/** The best `k` codes by Hamming agreement with `q` (every live slot). */
export function hammingTopK(a: BandArena, q: IndexedVector, k: number, exclude: string | undefined): Scored[] {
  const top = new TopK(k);
  if (!q.bits || q.dim !== a.dim) return [];
  const w = a.words;
  const bits = a.bits;
  const qb = q.bits;
  for (let s = 0; s < a.count; s++) {
    if (!a.isLive(s)) continue;
    let d = 0;
    for (let i = 0, o = s * w; i < w; i++, o++) {
      let x = qb[i]! ^ bits[o]!;
      x -= (x >>> 1) & 0x55555555;
      x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
      d += (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
    }
    const score = 1 - d / a.dim;
    if (a.cells[s] === exclude || !top.admits(score, a.cells[s]!)) continue;
    top.offer(score, a.view(s));
  }
  return top.sorted();
}

/** The best `k` of given vectors by `score` (re-ranking a short list). */
export function rank(candidates: Iterable<IndexedVector>, k: number, exclude: string | undefined, score: (v: IndexedVector) => number | undefined): Scored[] {
  const top = new TopK(k);
  for (const v of candidates) {
    if (v.cell === exclude) continue;
    const s = score(v);
    if (s !== undefined) top.offer(s, v);
  }
  return top.sorted();
}
