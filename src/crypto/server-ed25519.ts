/**
 * The responder's Ed25519 backend: libsodium (sodium-native) for signing when it loads and
 * agrees with node:crypto, node:crypto otherwise. Every read signs a receipt, and libsodium
 * signs about twice as fast as node:crypto's one-shot path (which goes through OpenSSL's EVP
 * layer per call). Both follow RFC 8032, so the signatures are byte-identical; a self-check
 * refuses libsodium if they ever differ. Verification stays on node:crypto behind the
 * protocol's strict checks: one verifier, whose edge cases the tests pin.
 */
import { createRequire } from 'node:module';
import type { Ed25519Backend } from '../protocol/ed25519.js';
import { nodeEd25519 } from './node-ed25519.js';

const require = createRequire(import.meta.url);

interface Sodium {
  crypto_sign_seed_keypair(pk: Buffer, sk: Buffer, seed: Buffer): void;
  crypto_sign_detached(sig: Buffer, message: Buffer | Uint8Array, sk: Buffer): void;
}

/** Signs with libsodium; keeps the expanded secret key of the last seed it saw. */
function sodiumSigner(sodium: Sodium): (message: Uint8Array, seed: Uint8Array) => Uint8Array {
  let lastSeed = new Uint8Array(0);
  let lastSk = Buffer.alloc(0);
  const expand = (seed: Uint8Array): Buffer => {
    if (seed.length === 32 && lastSeed.length === 32) {
      let same = true;
      for (let i = 0; i < 32; i++)
        if (seed[i] !== lastSeed[i]) {
          same = false;
          break;
        }
      if (same) return lastSk;
    }
    if (seed.length !== 32) throw new RangeError('ed25519 seed: expected 32 bytes');
    const pk = Buffer.alloc(32);
    const sk = Buffer.alloc(64);
    sodium.crypto_sign_seed_keypair(pk, sk, Buffer.from(seed));
    lastSeed = Uint8Array.from(seed);
    lastSk = sk;
    return sk;
  };
  return (message, seed) => {
    const sig = Buffer.allocUnsafe(64);
    sodium.crypto_sign_detached(sig, message, expand(seed));
    return new Uint8Array(sig.buffer, sig.byteOffset, 64);
  };
}

/** The libsodium signer, or null when sodium-native is missing or disagrees with node:crypto. */
export function loadSodiumSign(): ((message: Uint8Array, seed: Uint8Array) => Uint8Array) | null {
  try {
    const sign = sodiumSigner(require('sodium-native') as Sodium);
    for (let k = 0; k < 4; k++) {
      const seed = new Uint8Array(32).map((_, i) => (i * 29 + k * 7 + 1) & 0xff);
      const msg = new Uint8Array(32 + k * 50).map((_, i) => (i * 13 + k) & 0xff);
      const a = sign(msg, seed);
      const b = nodeEd25519.sign(msg, seed);
      for (let i = 0; i < 64; i++) if (a[i] !== b[i]) return null;
    }
    return sign;
  } catch {
    return null;
  }
}

const sodiumSign = loadSodiumSign();

/** node:crypto with libsodium signing when available. */
export const serverEd25519: Ed25519Backend = sodiumSign ? { ...nodeEd25519, name: 'libsodium sign + node:crypto verify', sign: sodiumSign } : nodeEd25519;
