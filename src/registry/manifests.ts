/**
 * Manifest CIDs pinned into every receipt (docs/protocol-notes.md §5, "Manifests"): each registry
 * file's CID, the registry CID over them, and the schema profile's CID.
 */
import { contentId } from '../protocol/cid.js';
import { CURRENT_PREIMAGE_VERSION } from '../protocol/receipt.js';
import type { Registry } from './registry.js';

/**
 * The active schema profile: what a fact and a receipt are (its CID is `schema_cid`). Its text is
 * hashed, so it stays byte for byte; the section labels in `grid`, `cbor` and `receipt.tags` are
 * those of an earlier numbering and name docs/protocol-notes.md §1, §3 and §5
 * (docs/protocol-notes.md §5, "Manifests").
 */
export const SCHEMA_PROFILE = {
  schema: 'svc.schema.v1',
  fact: {
    required: ['kind', 'cell', 'band', 'tslot', 'value'],
    minted: ['kind', 'cell', 'band', 'tslot', 'value', 'unit', 'provenance', 'absence_reason', 'derivation', 'signer', 'signed_at', 'schema_cid', 'scope'],
    kinds: ['primary', 'absence', 'derivative'],
    absence_reasons: ['unavailable_capability', 'outside_coverage', 'archetype_seed_unavailable', 'gpu_unavailable', 'upstream_error', 'upstream_timeout'],
    hashed_body: 'the fact as served minus fact_cid and receipt',
  },
  receipt: { preimage_version: CURRENT_PREIMAGE_VERSION, domain: 'receipt', tags: 'spec 2.4' },
  cbor: 'RFC 8949 §4.2.1 core deterministic encoding with numeric reduction (protocol.md §3)',
  cid: 'b32(blake3(cbor(body))), lowercase RFC 4648 base32 without padding',
  grid: 'cell64 (protocol.md §1)',
  tslot: 'Unix epoch; fast 86400 s, medium 2592000 s, slow 31536000 s, static single slot 0',
} as const;

export interface ManifestSet {
  registry_cid: string;
  schema_cid: string;
  bands: string;
  sources: string;
  functions: string;
  algorithms: string;
  topics: string;
}

/** CIDs of the registry in force and of the schema profile. */
export function manifestsOf(registry: Registry): ManifestSet {
  const m = registry.manifests;
  const parts = { bands: m.bands, sources: m.sources, functions: m.functions, algorithms: m.algorithms, topics: m.topics };
  return { registry_cid: contentId({ schema: 'svc.registry.v1', ...parts }), schema_cid: contentId(SCHEMA_PROFILE), ...parts };
}
