/** Content ids (docs/protocol-notes.md §4): fact_cid = b32(H(cbor(body))), anchors = first 16 bytes. */
import { b32encode, isB32 } from './base32.js';
import { encodeCanonical, type CborValue } from './cbor.js';
import { blake3 } from './hash.js';

/** b32 of the full BLAKE3 digest of the canonical CBOR of `value`: 52 characters. */
export function contentId(value: unknown): string {
  return b32encode(blake3(encodeCanonical(value as CborValue)));
}

/** Content id of raw bytes (an artifact: a grid file, a picture): b32(H(bytes)), 52 characters. */
export function bytesCid(bytes: Uint8Array): string {
  return b32encode(blake3(bytes));
}

/** 16-byte anchor (entity_cid, bundle_cid, aoi_cid …): 26 characters. */
export function anchorId(value: unknown): string {
  return b32encode(blake3(encodeCanonical(value as CborValue)).subarray(0, 16));
}

/** The hashed body of a fact: the fact as served, minus `fact_cid` and `receipt`. */
export function factBody<T extends Record<string, unknown>>(fact: T): Omit<T, 'fact_cid' | 'receipt'> {
  const { fact_cid: _c, receipt: _r, ...body } = fact;
  return body;
}

/** fact_cid of a fact (served form or bare body). */
export function factCid(fact: Record<string, unknown>): string {
  return contentId(factBody(fact));
}

/** The raw 32-byte digest a fact_cid encodes (the batch Merkle leaf). */
export function factDigest(fact: Record<string, unknown>): Uint8Array {
  return blake3(encodeCanonical(factBody(fact) as CborValue));
}

export function isFactCid(text: unknown): text is string {
  return typeof text === 'string' && text.length === 52 && isB32(text, 32);
}

export function isAnchorId(text: unknown): text is string {
  return typeof text === 'string' && text.length === 26 && isB32(text, 16);
}
