/**
 * Per-fact proofs on the PostgreSQL driver. Since schema version 4 a fact row keeps its proof
 * index (`facts.leaf`) and its entry row the batch tree once (`log_entries.tree`, batch-tree.ts):
 * a tree is about 64 bytes per fact where a proof as JSON was about 600, and it is built once per
 * batch instead of encoding every fact's siblings. Facts stored by an earlier version keep their
 * proof as JSON (`facts.proof_json`), so a schema opened by this build is not rewritten.
 *
 * Trees a read needs are fetched in one query and kept while used; the sequencer hands over the
 * trees it just committed, the likeliest to be read next.
 */
import type pg from 'pg';
import { BoundedCache } from '../../lib/cache.js';
import type { MerkleProofJson } from '../../protocol/merkle-batch.js';
import { SvcError } from '../../protocol/errors.js';
import { BatchTree, type BuiltTree } from '../batch-tree.js';
import { int, rows } from './pg-db.js';
import type { Tables } from './tables.js';

/** Entries whose trees stay decoded (a batch of 256 is about 16 KiB). */
const TREE_CACHE = 512;

/** The proof columns of a fact row: a leaf (version 4) or the proof as JSON (earlier versions). */
export interface ProofColumns {
  log_index: string;
  leaf: number | null;
  proof_json: string | null;
}

export class PgBatchTrees {
  private readonly trees = new BoundedCache<number, BatchTree>('pg_batch_trees', { max: TREE_CACHE });

  constructor(
    private readonly pool: pg.Pool,
    private readonly t: Tables,
  ) {}

  /** Keep a tree this process just committed at `logIndex`. */
  keep(logIndex: number, built: BuiltTree): void {
    this.trees.set(logIndex, new BatchTree(built.count, built.blob));
  }

  /**
   * A proof function for `rs`: the trees they need, from memory or, for those not in memory, one
   * query. Rows that carry a JSON proof need no tree. The trees are held for this read, so a read
   * over more entries than the cache keeps still finds every one.
   */
  async prover(rs: readonly ProofColumns[]): Promise<(r: ProofColumns) => MerkleProofJson> {
    const held = new Map<number, BatchTree>();
    const missing = new Set<number>();
    for (const r of rs) {
      if (r.proof_json !== null) continue;
      const idx = int(r.log_index);
      if (held.has(idx) || missing.has(idx)) continue;
      const tree = this.trees.get(idx);
      if (tree === undefined) missing.add(idx);
      else held.set(idx, tree);
    }
    if (missing.size > 0) {
      const got = await rows<{ idx: string; tree_leaves: number | null; tree: Buffer | null }>(this.pool, `SELECT idx, tree_leaves, tree FROM ${this.t.entries} WHERE idx = ANY($1::bigint[])`, [
        [...missing],
      ]);
      for (const g of got) {
        if (g.tree === null || g.tree_leaves === null) continue;
        const tree = new BatchTree(g.tree_leaves, new Uint8Array(g.tree.buffer, g.tree.byteOffset, g.tree.byteLength));
        this.trees.set(int(g.idx), tree);
        held.set(int(g.idx), tree);
      }
    }
    return (r) => {
      if (r.proof_json !== null) return JSON.parse(r.proof_json) as MerkleProofJson;
      const tree = held.get(int(r.log_index));
      if (tree === undefined || r.leaf === null) throw new SvcError('internal', `postgres: log entry ${r.log_index} has facts but no batch tree`);
      return tree.proof(r.leaf);
    };
  }
}
