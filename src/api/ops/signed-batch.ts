/**
 * The request schema of every signed write: the attest envelope {batch_root, attester,
 * signature, registry_cid?, schema_cid?, facts} (docs/writes.md), with the facts' own schema per
 * endpoint. attester and signature are not required here: the write path answers their absence
 * with 401 unauthorized (docs/writes.md, "Signatures"), not the schema's 422.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { B32Key } from '../schemas/inputs.js';

export function signedBatchSchema<F extends TSchema>(facts: { maxItems: number; description: string; items: F }) {
  return Type.Object(
    {
      batch_root: Type.Array(Type.Integer({ minimum: 0, maximum: 255 }), { minItems: 32, maxItems: 32, description: 'BLAKE3 Merkle root over the bodies (docs/writes.md), as 32 integers' }),
      attester: Type.Optional({ ...B32Key, description: 'the writing key (b32): an operator-listed or enrolled device key' }),
      signature: Type.Optional(Type.String({ description: 'Ed25519 by the attester over blake3(batch_root ‖ registry_cid ‖ schema_cid), b32' })),
      registry_cid: Type.Optional(Type.String()),
      schema_cid: Type.Optional(Type.String()),
      facts: Type.Array(facts.items, { minItems: 1, maxItems: facts.maxItems, description: facts.description }),
    },
    { additionalProperties: false },
  );
}

/** The envelope carrying records of one band, each filed by the subject rule (docs/memory.md). */
export function signedRecordsSchema(band: string, maxItems: number, what: string) {
  return signedBatchSchema({
    maxItems,
    description: `${what}: each body {kind: "primary", cell: "svc:entity:" + anchorId(value), band: "${band}", tslot: 0, value, signed_at, scope?} (docs/memory.md)`,
    // The band is checked by the write (naming facts[i].band), not here.
    items: Type.Object({ kind: Type.Unknown(), cell: Type.Unknown(), band: Type.Unknown(), value: Type.Unknown() }, { additionalProperties: true }),
  });
}
