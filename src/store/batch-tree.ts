/**
 * The attestation batch Merkle tree of one log entry (protocol/merkle-batch.ts), kept once per
 * entry instead of a proof per fact: a per-fact proof is log2(n) siblings, so storing each
 * costs O(n log n) per batch, while the tree is about 2n nodes. The stored form is
 *
 *   sorted leaves (n × 32) ‖ level 1 ‖ level 2 ‖ … ‖ top level (the root)
 *
 * Level 0 (H(leaf ‖ leaf)) is left out: any of its nodes is one hash of a stored leaf, and a
 * proof needs only one of them. A fact row keeps its leaf's rank among the sorted leaves, which
 * is its proof index, so the leaf is also its fact_cid digest and reads rebuild both.
 */
import { b32encode } from '../protocol/base32.js';
import { compareBytes } from '../protocol/bytes.js';
import { SvcError } from '../protocol/errors.js';
import { BATCH_RULE_VERSION, type MerkleProofJson } from '../protocol/merkle-batch.js';
import { blake3Small } from './log/blake3-small.js';

const pair = new Uint8Array(64);
/**
 * H(a ‖ b) without allocating the concatenation. Tree nodes are 64-byte inputs, where the
 * single-chunk BLAKE3 (tested against the reference) costs about a third of a wasm call.
 */
function hashPair(a: Uint8Array, b: Uint8Array): Uint8Array {
  pair.set(a, 0);
  pair.set(b, 32);
  return blake3Small(pair);
}

/** Node counts per level, leaves first: n, ⌈n/2⌉, … 1. */
function levelSizes(n: number): number[] {
  const sizes = [n];
  while (sizes[sizes.length - 1] > 1) sizes.push(Math.ceil(sizes[sizes.length - 1] / 2));
  return sizes;
}

/** What an entry's facts need from their batch tree when they are indexed. */
export interface BuiltTree {
  count: number;
  blob: Uint8Array;
  root: Uint8Array;
  /** Proof index of each input digest (its first position among the sorted leaves). */
  leafIndex: number[];
}

/** The tree over `digests` (in entry order) exactly as batchProofs builds it. */
export function buildBatchTree(digests: readonly Uint8Array[]): BuiltTree {
  const n = digests.length;
  if (n === 0) throw new RangeError('batch tree: no leaves');
  const sorted = [...digests].sort(compareBytes);
  const sizes = levelSizes(n);
  const blob = new Uint8Array(32 * sizes.reduce((a, b) => a + b, 0)); // leaves stand in for level 0
  sorted.forEach((l, i) => blob.set(l, 32 * i));
  let level = sorted.map((l) => hashPair(l, l));
  let at = 32 * n;
  for (let k = 1; k < sizes.length; k++) {
    const next: Uint8Array[] = [];
    for (let i = 0; i < level.length; i += 2) next.push(hashPair(level[i], level[i + 1] ?? level[i]));
    for (const node of next) {
      blob.set(node, at);
      at += 32;
    }
    level = next;
  }
  const leafIndex = digests.map((d) => {
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (compareBytes(sorted[mid], d) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  });
  return { count: n, blob, root: level[0], leafIndex };
}

/** A stored tree, read back: leaves (fact_cids), the root and per-fact proofs. */
export class BatchTree {
  private readonly sizes: number[];
  /** Byte offset of each stored level (level 0 is computed, so its slot is unused). */
  private readonly offsets: number[];
  /** b32 of nodes already served, per level: facts of one batch share their upper siblings. */
  private readonly b32: (string | undefined)[][];
  private rootB32: string | undefined;

  constructor(
    readonly count: number,
    private readonly blob: Uint8Array,
  ) {
    this.sizes = levelSizes(count);
    this.b32 = this.sizes.map(() => []);
    this.offsets = [0, 32 * count];
    for (let k = 1; k < this.sizes.length; k++) this.offsets.push(this.offsets[k] + 32 * this.sizes[k]);
    if (!Number.isSafeInteger(count) || count < 1 || blob.length !== this.offsets[this.sizes.length]) {
      throw new SvcError('internal', `batch tree: a tree of ${count} leaves has ${blob.length} bytes`);
    }
  }

  /** The sorted leaf at proof index `i` (the fact's digest). */
  leaf(i: number): Uint8Array {
    return this.blob.subarray(32 * i, 32 * i + 32);
  }

  private node(level: number, i: number): Uint8Array {
    if (level === 0) return hashPair(this.leaf(i), this.leaf(i));
    const at = this.offsets[level] + 32 * i;
    return this.blob.subarray(at, at + 32);
  }

  private nodeB32(level: number, i: number): string {
    return (this.b32[level][i] ??= b32encode(this.node(level, i)));
  }

  /** The proof batchProofs gives the leaf at proof index `index`, in its wire form. */
  proof(index: number): MerkleProofJson {
    const siblings: string[] = [];
    let i = index;
    for (let l = 0; l < this.sizes.length - 1; l++) {
      siblings.push(this.nodeB32(l, i % 2 === 0 ? (i + 1 < this.sizes[l] ? i + 1 : i) : i - 1));
      i >>= 1;
    }
    this.rootB32 ??= this.nodeB32(this.sizes.length - 1, 0);
    return { index, siblings, root: this.rootB32, rule_version: BATCH_RULE_VERSION };
  }
}
