/**
 * Ed25519 (docs/protocol-notes.md §5, §8): strict verification (RFC 8032 §5.1.7, canonical S,
 * canonical point encodings, no small-order keys) with the portable implementation. Faster backends
 * (node:crypto on the server) implement the same `Ed25519Backend` and are admitted only after the
 * key checks here, because node:crypto alone accepts small-order and non-canonical keys.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { abytes } from './bytes.js';

/** Group order L: a signature's S must be below it (canonical S). */
const L = 2n ** 252n + 27742317777372353535851937790883648493n;

export interface Ed25519Backend {
  readonly name: string;
  /** Public key (32 bytes) of a 32-byte secret seed. */
  publicKey(seed: Uint8Array): Uint8Array;
  /** 64-byte signature of `message` under the 32-byte seed. */
  sign(message: Uint8Array, seed: Uint8Array): Uint8Array;
  /** Signature check; callers pass only keys that `admitPublicKey` accepted. */
  verify(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean;
}

/** Outcome of admitting a public key. */
export type KeyVerdict = { ok: true } | { ok: false; reason: 'length' | 'non_canonical' | 'not_on_curve' | 'small_order' | 'torsion' };

// Admission costs a scalar multiplication (about a millisecond with the portable arithmetic, more
// than the rest of a single-fact write): keep the last keys that passed. The verdict is a pure
// function of the 32 bytes, so a remembered pass is the same answer; refusals are not kept.
const admitted = new Set<string>();
const ADMITTED_CAP = 4096;

/**
 * Admit a public key: canonical encoding, on the curve, not small order, torsion-free. A key that
 * passed before answers from memory.
 */
export function admitPublicKey(publicKey: Uint8Array): KeyVerdict {
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== 32) return { ok: false, reason: 'length' };
  const key = String.fromCharCode(...publicKey);
  if (admitted.has(key)) return { ok: true };
  const verdict = checkPublicKey(publicKey);
  if (verdict.ok) {
    if (admitted.size >= ADMITTED_CAP) admitted.clear();
    admitted.add(key);
  }
  return verdict;
}

function checkPublicKey(publicKey: Uint8Array): KeyVerdict {
  let point;
  try {
    point = ed25519.Point.fromBytes(publicKey, false);
  } catch {
    return { ok: false, reason: 'not_on_curve' };
  }
  // fromBytes(…, false) already refuses y ≥ p and the "-0" x; re-encoding confirms canonical form.
  const again = point.toBytes();
  for (let i = 0; i < 32; i++) if (again[i] !== publicKey[i]) return { ok: false, reason: 'non_canonical' };
  if (point.isSmallOrder()) return { ok: false, reason: 'small_order' };
  if (!point.isTorsionFree()) return { ok: false, reason: 'torsion' };
  return { ok: true };
}

/** True when the S half of a signature is canonical (S < L). */
export function hasCanonicalS(signature: Uint8Array): boolean {
  if (signature.length !== 64) return false;
  let s = 0n;
  for (let i = 63; i >= 32; i--) s = (s << 8n) | BigInt(signature[i]);
  return s < L;
}

/** The portable reference backend (@noble/curves, zip215 off). */
export const portableEd25519: Ed25519Backend = {
  name: 'noble',
  publicKey: (seed) => ed25519.getPublicKey(abytes('seed', seed, 32)),
  sign: (message, seed) => ed25519.sign(message, abytes('seed', seed, 32)),
  verify: (signature, message, publicKey) => {
    try {
      return ed25519.verify(signature, message, publicKey, { zip215: false });
    } catch {
      return false;
    }
  },
};

/**
 * Strict verification: admits the key, requires canonical S and a 64-byte signature, then asks
 * the backend. The backend is the reference by default; the server passes its fast one.
 */
export function verifyStrict(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array, backend: Ed25519Backend = portableEd25519): boolean {
  if (!(signature instanceof Uint8Array) || signature.length !== 64) return false;
  if (!admitPublicKey(publicKey).ok) return false;
  if (!hasCanonicalS(signature)) return false;
  return backend.verify(signature, message, publicKey);
}

/** A fresh random 32-byte seed. */
export function randomSeed(): Uint8Array {
  const seed = new Uint8Array(32);
  crypto.getRandomValues(seed);
  return seed;
}
