/**
 * The approximate nearest-neighbour graph of one real-valued band: an HNSW index from `usearch`
 * (a maintained native library) over cosine distance with half-precision storage, keyed by the
 * band arena's slot. It only proposes candidates: find_similar re-scores every candidate exactly
 * from the arena, so a returned score is always the exact cosine, and the approximation can only
 * miss a neighbour, never misstate one (docs/embeddings.md, "The approximate index").
 */
import { createRequire } from 'node:module';
import type { BandArena } from './vector-arena.js';

// usearch ships CommonJS with a native addon; loading it through require keeps the ESM build simple.
const usearch = createRequire(import.meta.url)('usearch') as typeof import('usearch');

/** The graph's parameters; they go into every answer that used the graph. */
export interface AnnParams {
  readonly library: string;
  readonly metric: 'cos';
  readonly quantization: 'f16';
  /** Edges per node (HNSW M). */
  readonly connectivity: number;
  /** Candidate list while inserting (efConstruction). */
  readonly expansion_add: number;
  /** Candidate list while searching (ef): recall against latency, see docs/performance.md. */
  readonly expansion_search: number;
}

export const ANN_PARAMS: AnnParams = { library: 'usearch@2.25.3', metric: 'cos', quantization: 'f16', connectivity: 16, expansion_add: 128, expansion_search: 128 };

/** Vectors added to the graph per turn of the event loop (the native insert blocks while it runs). */
export const ANN_ADD_CHUNK = 256;

export class AnnGraph {
  private readonly index: InstanceType<typeof usearch.Index>;
  /** Slots waiting to enter the graph (new or changed vectors); searches scan them exactly. */
  readonly pending = new Set<number>();
  private readonly scratch: Float32Array;

  constructor(
    readonly dim: number,
    readonly params: AnnParams = ANN_PARAMS,
  ) {
    this.index = new usearch.Index({
      dimensions: dim,
      metric: params.metric as never,
      quantization: params.quantization as never,
      connectivity: params.connectivity,
      expansion_add: params.expansion_add,
      expansion_search: params.expansion_search,
      multi: false,
    });
    this.scratch = new Float32Array(dim);
  }

  size(): number {
    return this.index.size();
  }

  /** Marks a slot's vector as new or changed: it leaves the graph until the next add pass. */
  touch(slot: number): void {
    if (!this.pending.has(slot) && this.index.contains(BigInt(slot))) this.index.remove(BigInt(slot));
    this.pending.add(slot);
  }

  /**
   * Adds up to `max` pending slots to the graph. Zero vectors have no direction and stay out.
   * Vectors are divided by their largest |value| first: cosine ignores scale and half precision
   * does not hold values above 65 504.
   */
  addPending(arena: BandArena, max = ANN_ADD_CHUNK): number {
    const slots: number[] = [];
    for (const s of this.pending) {
      slots.push(s);
      if (slots.length >= max) break;
    }
    if (slots.length === 0) return 0;
    const keys: bigint[] = [];
    const data = new Float32Array(slots.length * this.dim);
    let n = 0;
    for (const s of slots) {
      this.pending.delete(s);
      if (!arena.isLive(s) || arena.norms[s] === 0) continue;
      const v = arena.f32(s);
      let m = 0;
      for (let i = 0; i < v.length; i++) m = Math.max(m, Math.abs(v[i]!));
      for (let i = 0; i < v.length; i++) data[n * this.dim + i] = v[i]! / m;
      keys.push(BigInt(s));
      n++;
    }
    if (n > 0) this.index.add(BigUint64Array.from(keys), data.subarray(0, n * this.dim), 0);
    return slots.length;
  }

  /** Slots of the `count` graph entries nearest `query` (approximate; pending slots excluded). */
  search(query: ArrayLike<number>, count: number): number[] {
    if (this.index.size() === 0) return [];
    let m = 0;
    for (let i = 0; i < this.dim; i++) m = Math.max(m, Math.abs(query[i]!));
    if (m === 0) return [];
    for (let i = 0; i < this.dim; i++) this.scratch[i] = query[i]! / m;
    const r = this.index.search(this.scratch, Math.min(count, this.index.size()), 1);
    return Array.from(r.keys, (k) => Number(k));
  }

  save(path: string): void {
    this.index.save(path);
  }

  /** A graph loaded from `path` (a file save() wrote with the same dimension and parameters). */
  static load(path: string, dim: number, params: AnnParams = ANN_PARAMS): AnnGraph {
    const g = new AnnGraph(dim, params);
    g.index.load(path);
    return g;
  }
}
