/**
 * Attestation batch Merkle tree (docs/protocol-notes.md §6): leaves are the 32-byte digests of
 * each fact's canonical CBOR sorted bytewise; leaf node H(leaf ‖ leaf); parent H(l ‖ r); a lone
 * last node pairs with itself; the empty set is 32 zero bytes.
 */
import { b32decode, b32encode } from './base32.js';
import { abytes, compareBytes, concatBytes, equalBytes } from './bytes.js';
import { blake3 } from './hash.js';

/** Version of the batch rule carried in proofs (merkle sub-preimage tag 4). */
export const BATCH_RULE_VERSION = 1;

export interface BatchProof {
  /** Position of the leaf among the sorted leaves. */
  index: number;
  siblings: Uint8Array[];
  root: Uint8Array;
}

/** Wire form of a batch proof as carried in `receipt.merkle_proof`. */
export interface MerkleProofJson {
  index: number;
  siblings: string[];
  root: string;
  rule_version: number;
}

function sortedLeaves(leaves: readonly Uint8Array[]): Uint8Array[] {
  leaves.forEach((l, i) => abytes(`leaves[${i}]`, l, 32));
  return [...leaves].sort(compareBytes);
}

function levelsOf(sorted: Uint8Array[]): Uint8Array[][] {
  const levels: Uint8Array[][] = [sorted.map((l) => blake3(concatBytes(l, l)))];
  while (levels[levels.length - 1].length > 1) {
    const cur = levels[levels.length - 1];
    const next: Uint8Array[] = [];
    for (let i = 0; i < cur.length; i += 2) next.push(blake3(concatBytes(cur[i], cur[i + 1] ?? cur[i])));
    levels.push(next);
  }
  return levels;
}

/** Batch root over fact digests (any order; they are sorted here). */
export function batchRoot(leaves: readonly Uint8Array[]): Uint8Array {
  if (leaves.length === 0) return new Uint8Array(32);
  const levels = levelsOf(sortedLeaves(leaves));
  return levels[levels.length - 1][0];
}

/** Root plus one proof per input leaf (in input order). Duplicate leaves share a proof. */
export function batchProofs(leaves: readonly Uint8Array[]): { root: Uint8Array; proofs: BatchProof[] } {
  if (leaves.length === 0) return { root: new Uint8Array(32), proofs: [] };
  const sorted = sortedLeaves(leaves);
  const levels = levelsOf(sorted);
  const root = levels[levels.length - 1][0];
  const proofs = leaves.map((leaf) => {
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (compareBytes(sorted[mid], leaf) < 0) lo = mid + 1;
      else hi = mid;
    }
    const index = lo;
    const siblings: Uint8Array[] = [];
    let i = index;
    for (let l = 0; l < levels.length - 1; l++) {
      const lvl = levels[l];
      const sib = i % 2 === 0 ? (lvl[i + 1] ?? lvl[i]) : lvl[i - 1];
      siblings.push(sib);
      i >>= 1;
    }
    return { index, siblings, root };
  });
  return { root, proofs };
}

/** Root reached from `leaf` at `index` through `siblings`. */
export function batchRootFromProof(leaf: Uint8Array, index: number, siblings: readonly Uint8Array[]): Uint8Array {
  abytes('leaf', leaf, 32);
  if (!Number.isSafeInteger(index) || index < 0) throw new RangeError('index: expected a non-negative integer');
  let acc = blake3(concatBytes(leaf, leaf));
  let i = index;
  siblings.forEach((s, k) => {
    abytes(`siblings[${k}]`, s, 32);
    acc = i % 2 === 0 ? blake3(concatBytes(acc, s)) : blake3(concatBytes(s, acc));
    i = Math.floor(i / 2);
  });
  return acc;
}

/** True when the proof takes `leaf` to `root` (and the index fits the path length). */
export function verifyBatchProof(leaf: Uint8Array, proof: BatchProof): boolean {
  if (proof.index >= 2 ** proof.siblings.length) return false;
  return equalBytes(batchRootFromProof(leaf, proof.index, proof.siblings), proof.root);
}

export function proofToJson(p: BatchProof): MerkleProofJson {
  return { index: p.index, siblings: p.siblings.map(b32encode), root: b32encode(p.root), rule_version: BATCH_RULE_VERSION };
}

/** Parse a wire proof (throws invalid_argument naming the field). */
export function proofFromJson(j: MerkleProofJson, field = 'merkle_proof'): BatchProof {
  if (typeof j !== 'object' || j === null) throw new TypeError(`${field}: expected an object`);
  if (!Number.isSafeInteger(j.index) || j.index < 0 || j.index > 0xffffffff) throw new RangeError(`${field}.index: expected a u32`);
  if (!Array.isArray(j.siblings)) throw new TypeError(`${field}.siblings: expected an array`);
  return {
    index: j.index,
    siblings: j.siblings.map((s, i) => b32decode(s, 32, `${field}.siblings[${i}]`)),
    root: b32decode(j.root, 32, `${field}.root`),
  };
}
