/**
 * The request schema of every signed write: the attest envelope {batch_root, attester,
 * signature, registry_cid?, schema_cid?, facts} (docs/writes.md), with the facts' own schema per
 * endpoint. attester and signature are not required here: the write path answers their absence
 * with 401 unauthorized (docs/writes.md, "Signatures"), not the schema's 422.
 */
import { b32KeySchema, type JsonSchema } from '../operations.js';


export function signedBatchSchema(facts: { maxItems: number; description: string; items: JsonSchema }): JsonSchema {
  return {
    type: 'object',
    required: ['batch_root', 'facts'],
    additionalProperties: false,
    properties: {
      batch_root: { type: 'array', items: { type: 'integer', minimum: 0, maximum: 255 }, minItems: 32, maxItems: 32, description: 'BLAKE3 Merkle root over the bodies (docs/writes.md), as 32 integers' },
      attester: { ...b32KeySchema, description: 'the writing key (b32): an operator-listed or enrolled device key' },
      signature: { type: 'string', description: 'Ed25519 by the attester over blake3(batch_root ‖ registry_cid ‖ schema_cid), b32' },
      registry_cid: { type: 'string' },
      schema_cid: { type: 'string' },
      facts: { type: 'array', minItems: 1, maxItems: facts.maxItems, description: facts.description, items: facts.items },
    },
  };
}

/** The envelope carrying records of one band, each filed by the subject rule (docs/memory.md). */
export function signedRecordsSchema(band: string, maxItems: number, what: string): JsonSchema {
  return signedBatchSchema({
    maxItems,
    description: `${what}: each body {kind: "primary", cell: "svc:entity:" + anchorId(value), band: "${band}", tslot: 0, value, signed_at, scope?} (docs/memory.md)`,
    // The band is checked by the write (naming facts[i].band), not here.
    items: { type: 'object', required: ['kind', 'cell', 'band', 'value'] },
  });
}
