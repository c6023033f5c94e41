/**
 * Server-side Ed25519 backend over node:crypto (≈10× the portable implementation). node:crypto
 * alone is not strict, so callers go through protocol `verifyStrict`, which admits keys and
 * checks canonical S before this backend is asked.
 */
import { createPrivateKey, createPublicKey, sign as nodeSign, verify as nodeVerify, type KeyObject } from 'node:crypto';
import { BoundedCache } from '../lib/cache.js';
import type { Ed25519Backend } from '../protocol/ed25519.js';

// DER prefixes of PKCS#8 (private) and SPKI (public) Ed25519 keys.
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

const CACHE_CAP = 1024;
const privCache = new BoundedCache<string, KeyObject>('ed25519_private_keys', { max: CACHE_CAP });
const pubCache = new BoundedCache<string, KeyObject>('ed25519_public_keys', { max: CACHE_CAP });

function cached(map: BoundedCache<string, KeyObject>, raw: Uint8Array, make: () => KeyObject): KeyObject {
  const k = Buffer.from(raw).toString('base64');
  let ko = map.get(k);
  if (!ko) {
    ko = make();
    map.set(k, ko);
  }
  return ko;
}

function privateKeyOf(seed: Uint8Array): KeyObject {
  return cached(privCache, seed, () => createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' }));
}

function publicKeyOf(pub: Uint8Array): KeyObject {
  return cached(pubCache, pub, () => createPublicKey({ key: Buffer.concat([SPKI_PREFIX, pub]), format: 'der', type: 'spki' }));
}

export const nodeEd25519: Ed25519Backend = {
  name: 'node:crypto',
  publicKey(seed) {
    const spki = createPublicKey(privateKeyOf(seed)).export({ format: 'der', type: 'spki' });
    return new Uint8Array(spki.subarray(SPKI_PREFIX.length));
  },
  sign(message, seed) {
    return new Uint8Array(nodeSign(null, message, privateKeyOf(seed)));
  },
  verify(signature, message, publicKey) {
    try {
      return nodeVerify(null, message, publicKeyOf(publicKey), signature);
    } catch {
      return false;
    }
  },
};
