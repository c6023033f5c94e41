/**
 * What a key holder signs to obtain a scope read bearer (docs/scopes.md), so a client can build
 * the request from this module alone. The statement binds the scope (by the same digest a
 * receipt's scope segment carries), the requesting key, an expiry and the responder's own key:
 * a statement is good for one responder and a short time only.
 */
import { b32decode, b32encode } from './base32.js';
import { abytes, u64be } from './bytes.js';
import { encodeCanonical, type CborValue } from './cbor.js';
import { portableEd25519 } from './ed25519.js';
import { blake3 } from './hash.js';
import { DEFAULT_PREFIX, domainDigest, segment } from './preimage.js';
import { scopeFieldsSet, type Scope } from './receipt.js';

/** BLAKE3 of the canonical CBOR of a scope's set members (the receipt's scope_hex, as bytes). */
export function scopeDigest(scope: Scope): Uint8Array {
  const set = scopeFieldsSet(scope);
  if (!set) throw new RangeError('scope: expected at least one member set');
  return blake3(encodeCanonical(set as unknown as CborValue));
}

/**
 * Digest the requesting key signs: domain `scope_bearer_request`, segments scope digest,
 * requesting key, expiry (u64 big-endian Unix seconds), responder key.
 */
export function scopeBearerRequestDigest(scope: Scope, key: Uint8Array, expUnix: number, responderKey: Uint8Array, prefix = DEFAULT_PREFIX): Uint8Array {
  abytes('key', key, 32);
  abytes('responderKey', responderKey, 32);
  if (!Number.isSafeInteger(expUnix) || expUnix < 0) throw new RangeError('exp: expected Unix seconds');
  return domainDigest('scope_bearer_request', [segment(1, scopeDigest(scope)), segment(2, key), segment(3, u64be(expUnix)), segment(4, responderKey)], prefix);
}

/** The body of POST /v1/scope_bearer (and /v1/memory/bearer): `{scope, key, exp, signature}`. */
export interface ScopeBearerRequest {
  scope: Scope;
  /** The requesting key, b32. */
  key: string;
  /** Expiry, Unix seconds. */
  exp: number;
  /** Ed25519 by the key over scopeBearerRequestDigest, b32. */
  signature: string;
}

/** The signed bearer request of the key with 32-byte `seed` for `scope`, good at the responder `responderKey` (b32) until `expUnix`. */
export function scopeBearerRequest(scope: Scope, seed: Uint8Array, expUnix: number, responderKey: string, prefix = DEFAULT_PREFIX): ScopeBearerRequest {
  const pub = portableEd25519.publicKey(seed);
  const digest = scopeBearerRequestDigest(scope, pub, expUnix, b32decode(responderKey, 32, 'responderKey'), prefix);
  return { scope, key: b32encode(pub), exp: expUnix, signature: b32encode(portableEd25519.sign(digest, seed)) };
}
