/**
 * Transparency-log tree (docs/protocol-notes.md §6): RFC 6962 §2.1 with BLAKE3 — leaf H(0x00 ‖
 * entry), node H(0x01 ‖ l ‖ r), split at the largest power of two below n, empty tree H(""). Proof
 * generation works over any source of perfect-subtree hashes, so a store that keeps interior nodes
 * answers proofs in O(log n) node reads; verification follows RFC 9162 §2.1.3–2.1.4.
 */
import { abytes, concatBytes, equalBytes } from './bytes.js';
import { blake3 } from './hash.js';

const EMPTY_ROOT = blake3(new Uint8Array(0));

export function emptyRoot(): Uint8Array {
  return EMPTY_ROOT.slice();
}

export function leafHash(entry: Uint8Array): Uint8Array {
  return blake3(concatBytes(new Uint8Array([0]), entry));
}

export function nodeHash(left: Uint8Array, right: Uint8Array): Uint8Array {
  return blake3(concatBytes(new Uint8Array([1]), left, right));
}

/** Largest power of two strictly below n (n ≥ 2). */
export function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/**
 * Source of perfect-subtree hashes: `node(level, index)` = hash of leaves
 * [index·2^level, (index+1)·2^level); level 0 is the leaf hash.
 */
export interface NodeSource {
  node(level: number, index: number): Uint8Array;
}

/** MTH(D[a:b]) from perfect subtrees: O(log n) node reads. */
export function rangeHash(src: NodeSource, a: number, b: number): Uint8Array {
  const n = b - a;
  if (n <= 0) return emptyRoot();
  if ((n & (n - 1)) === 0 && a % n === 0) return src.node(Math.log2(n), a / n);
  const k = splitPoint(n);
  return nodeHash(rangeHash(src, a, a + k), rangeHash(src, a + k, b));
}

/** Root of the first `size` entries. */
export function treeRoot(src: NodeSource, size: number): Uint8Array {
  return size === 0 ? emptyRoot() : rangeHash(src, 0, size);
}

/** RFC 6962 PATH(m, D[a:b]) (audit path for leaf m of the tree of size b-a starting at a). */
function path(src: NodeSource, m: number, a: number, b: number): Uint8Array[] {
  const n = b - a;
  if (n <= 1) return [];
  const k = splitPoint(n);
  if (m < k) return [...path(src, m, a, a + k), rangeHash(src, a + k, b)];
  return [...path(src, m - k, a + k, b), rangeHash(src, a, a + k)];
}

/** Inclusion proof of leaf `index` in the tree of `size` entries. */
export function inclusionProof(src: NodeSource, index: number, size: number): Uint8Array[] {
  if (!Number.isSafeInteger(index) || index < 0 || index >= size) throw new RangeError(`index: ${index} is not below tree size ${size}`);
  return path(src, index, 0, size);
}

function subproof(src: NodeSource, m: number, a: number, b: number, complete: boolean): Uint8Array[] {
  const n = b - a;
  if (m === n) return complete ? [] : [rangeHash(src, a, b)];
  const k = splitPoint(n);
  if (m <= k) return [...subproof(src, m, a, a + k, complete), rangeHash(src, a + k, b)];
  return [...subproof(src, m - k, a + k, b, false), rangeHash(src, a, a + k)];
}

/** Consistency proof PROOF(first, D[second]) (empty when first is 0 or equals second). */
export function consistencyProof(src: NodeSource, first: number, second: number): Uint8Array[] {
  if (!Number.isSafeInteger(first) || !Number.isSafeInteger(second) || first < 0 || first > second) {
    throw new RangeError(`first: ${first} must be within [0, second=${second}]`);
  }
  if (first === 0 || first === second) return [];
  return subproof(src, first, 0, second, true);
}

/** A NodeSource over an in-memory list of leaf hashes (tests, vectors, small trees). */
export function memoryNodeSource(leafHashes: readonly Uint8Array[]): NodeSource {
  const cache = new Map<string, Uint8Array>();
  const src: NodeSource = {
    node(level, index) {
      if (level === 0) return leafHashes[index];
      const key = `${level}:${index}`;
      let h = cache.get(key);
      if (!h) {
        h = nodeHash(src.node(level - 1, 2 * index), src.node(level - 1, 2 * index + 1));
        cache.set(key, h);
      }
      return h;
    },
  };
  return src;
}

/** RFC 9162 §2.1.3.2: does `proof` take `leaf` (a leaf hash) at `index` to `root` of `size`? */
export function verifyInclusion(index: number, size: number, leaf: Uint8Array, proof: readonly Uint8Array[], root: Uint8Array): boolean {
  abytes('leaf', leaf, 32);
  abytes('root', root, 32);
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) return false;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (p.length !== 32 || sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && equalBytes(r, root);
}

/** RFC 9162 §2.1.4.2: does `proof` show the tree of `second` extends the tree of `first`? */
export function verifyConsistency(first: number, second: number, firstRoot: Uint8Array, secondRoot: Uint8Array, proof: readonly Uint8Array[]): boolean {
  abytes('firstRoot', firstRoot, 32);
  abytes('secondRoot', secondRoot, 32);
  if (!Number.isSafeInteger(first) || !Number.isSafeInteger(second) || first < 0 || first > second) return false;
  if (first === second) return proof.length === 0 && equalBytes(firstRoot, secondRoot);
  if (first === 0) return proof.length === 0; // the empty tree is a prefix of every tree
  if (proof.some((p) => p.length !== 32)) return false;
  const isPow2 = (first & (first - 1)) === 0;
  const p = isPow2 ? [firstRoot, ...proof] : [...proof];
  if (p.length === 0) return false;
  let fn = first - 1;
  let sn = second - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = p[0];
  let sr = p[0];
  for (const c of p.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && equalBytes(fr, firstRoot) && equalBytes(sr, secondRoot);
}
