/**
 * Signed tree heads and witness co-signatures (docs/protocol-notes.md §6), and the attester
 * message digest for writes (docs/protocol-notes.md §7).
 */
import { abytes, concatBytes, u64be, utf8 } from './bytes.js';
import { blake3 } from './hash.js';
import { DEFAULT_PREFIX, domainDigest, segment } from './preimage.js';

/** Digest an STH signature covers: domain `sth`, segments size, root, signed_at, responder key. */
export function sthDigest(treeSize: number, root: Uint8Array, signedAt: string, responderKey: Uint8Array, prefix = DEFAULT_PREFIX): Uint8Array {
  abytes('root', root, 32);
  abytes('responderKey', responderKey, 32);
  return domainDigest('sth', [segment(1, u64be(treeSize)), segment(2, root), segment(3, signedAt), segment(4, responderKey)], prefix);
}

/** Digest a witness co-signs: domain `witness`, segments size, root, witness key. */
export function witnessDigest(treeSize: number, root: Uint8Array, witnessKey: Uint8Array, prefix = DEFAULT_PREFIX): Uint8Array {
  abytes('root', root, 32);
  abytes('witnessKey', witnessKey, 32);
  return domainDigest('witness', [segment(1, u64be(treeSize)), segment(2, root), segment(3, witnessKey)], prefix);
}

/** Attester signature message: H(batch_root[32] ‖ utf8(registry_cid) ‖ utf8(schema_cid)). */
export function attesterDigest(batchRoot: Uint8Array, registryCid: string, schemaCid: string): Uint8Array {
  abytes('batchRoot', batchRoot, 32);
  return blake3(concatBytes(batchRoot, utf8(registryCid), utf8(schemaCid)));
}

/** Wire form of a signed tree head. */
export interface SignedTreeHead {
  tree_size: number;
  root: string;
  signed_at: string;
  responder: string;
  responder_key_epoch: number;
  signature: string;
}
