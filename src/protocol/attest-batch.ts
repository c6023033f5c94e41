/**
 * The signed write envelope a client builds (docs/writes.md, docs/protocol-notes.md §6–§7):
 * items completed into fact bodies (a `{band, value, scope?}` record shorthand filed by the
 * subject rule, or a full body passed through), the batch root over their canonical CBOR, and
 * the attester's Ed25519 signature over blake3(batch_root ‖ registry_cid ‖ schema_cid). Shared by
 * `svc sign`, `svc attest` and the TypeScript client (packages/client). Pure and browser-safe.
 */
import { b32encode } from './base32.js';
import { factCid, factDigest } from './cid.js';
import { portableEd25519 } from './ed25519.js';
import { batchRoot } from './merkle-batch.js';
import { recordBody } from './memory-records.js';
import type { Scope } from './receipt.js';
import { attesterDigest } from './tree-head.js';

/** The JSON envelope POST /v1/attest (and the record write routes) take. */
export interface AttestEnvelope {
  /** The batch root as 32 integers. */
  batch_root: number[];
  /** The attester's public key, b32. */
  attester: string;
  /** Ed25519 over attesterDigest(batch_root, registry_cid, schema_cid), b32. */
  signature: string;
  facts: Record<string, unknown>[];
}

/** `signed_at` text for `now`: RFC 3339 to the second, UTC. */
export function signedAtText(now: Date): string {
  return `${now.toISOString().slice(0, 19)}Z`;
}

/**
 * Complete `{band, value, scope?}` items into record bodies signed at `now` (recordBody);
 * items with a `cell` are full bodies and pass through unchanged. Throws naming the item.
 */
export function completeBodies(items: unknown, now: Date, source = 'stdin'): Record<string, unknown>[] {
  if (!Array.isArray(items) || items.length === 0) throw new Error(`${source}: expected a non-empty JSON array of bodies`);
  const signedAt = signedAtText(now);
  return items.map((it, i) => {
    if (typeof it !== 'object' || it === null || Array.isArray(it)) throw new Error(`item ${i}: expected an object`);
    const o = it as Record<string, unknown>;
    if ('cell' in o) return o;
    if (typeof o.band !== 'string' || typeof o.value !== 'object' || o.value === null) throw new Error(`item ${i}: expected {band, value, scope?} or a full body with cell`);
    return recordBody(o.band, o.value as Record<string, unknown>, { signed_at: signedAt, ...(o.scope ? { scope: o.scope as Scope } : {}) });
  });
}

/** The attest envelope over `facts`, signed by the 32-byte `seed` under the given manifest CIDs. */
export function signEnvelope(facts: Record<string, unknown>[], seed: Uint8Array, registryCid: string, schemaCid: string): AttestEnvelope {
  const root = batchRoot(facts.map((f) => factDigest(f)));
  const signature = portableEd25519.sign(attesterDigest(root, registryCid, schemaCid), seed);
  return { batch_root: Array.from(root), attester: b32encode(portableEd25519.publicKey(seed)), signature: b32encode(signature), facts };
}

/** What a writer expects back for `facts`: each fact_cid (in order) and the batch root, b32. */
export function expectedBatch(facts: Record<string, unknown>[]): { fact_cids: string[]; batch_root: string } {
  return { fact_cids: facts.map((f) => factCid(f)), batch_root: b32encode(batchRoot(facts.map((f) => factDigest(f)))) };
}
