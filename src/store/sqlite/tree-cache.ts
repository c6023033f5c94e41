/**
 * The embedded driver's batch trees as it reads them: entry trees loaded from `entries.tree` on a
 * miss and kept while used, and the integer key of the facts' cid index.
 */
import { BoundedCache } from '../../lib/cache.js';
import { SvcError } from '../../protocol/errors.js';
import { BatchTree, type BuiltTree } from '../batch-tree.js';

/** What facts of one log entry share: the attester and the batch tree. */
export interface EntryTree {
  attester: string;
  tree: BatchTree;
}

/** Entries whose trees stay decoded (a batch of 256 is about 16 KiB). */
const TREE_CACHE = 512;

/** Recently used entry trees, loaded from the index on a miss (least recently used goes first). */
export class TreeCache {
  private readonly trees = new BoundedCache<number, EntryTree>('sqlite_batch_trees', { max: TREE_CACHE });

  constructor(private readonly load: (logIndex: number) => { attester: string; leaves: number; tree: Uint8Array } | undefined) {}

  /** Keep a tree this process just built (its facts are the likeliest to be read next). */
  keep(logIndex: number, attester: string, built: BuiltTree): void {
    this.trees.set(logIndex, { attester, tree: new BatchTree(built.count, built.blob) });
  }

  get(logIndex: number): EntryTree {
    let info = this.trees.get(logIndex);
    if (info !== undefined) return info;
    const row = this.load(logIndex);
    if (row === undefined) throw new SvcError('internal', `index.sqlite: log entry ${logIndex} has facts but no batch tree`);
    info = { attester: row.attester, tree: new BatchTree(row.leaves, row.tree) };
    this.trees.set(logIndex, info);
    return info;
  }

  /** The digest (fact_cid) of the fact at proof index `leaf` of entry `logIndex`. */
  digest(logIndex: number, leaf: number): Uint8Array {
    return this.get(logIndex).tree.leaf(leaf);
  }

  /** Forget everything (a rolled-back transaction may have loaded trees it wrote). */
  clear(): void {
    this.trees.clear();
  }
}

/**
 * The first 48 bits of a digest as a safe integer: the `facts.cid_key` the cid index is keyed
 * on. A 6-byte integer key makes that randomly ordered index about a third of a 32-byte BLOB
 * one, and inserting into it half the cost; a lookup confirms each candidate's full digest
 * (its leaf in its entry's tree), so prefixes that collide only cost an extra comparison.
 */
export function cidKey(d: Uint8Array): number {
  return d[0] * 0x10000000000 + d[1] * 0x100000000 + ((d[2] << 24) >>> 0) + ((d[3] << 16) | (d[4] << 8) | d[5]);
}
