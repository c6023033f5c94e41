/**
 * Answer pieces many operations share, as TypeBox schemas. They describe what a client
 * receives (OpenAPI's 200 responses, the MCP output schema) and, with SVC_CHECK_RESPONSES=1, are
 * checked against every answer before it is sent, so they cannot drift from the code.
 *
 * Objects a client should read field by field are closed (`additionalProperties: false`); signed
 * bodies and receipts stay open, since their fields are fixed by the signing rules
 * (docs/protocol-notes.md) and differ by record type and by primitive.
 */
import { Type, type TProperties, type TSchema } from '@sinclair/typebox';

const b32 = Type.String({ pattern: '^[a-z2-7]+$' });

/** The signed receipt every read returns (docs/receipts.md): the fields common to all primitives. */
export const Receipt = Type.Object(
  {
    request_id: Type.String(),
    served_at: Type.String(),
    primitive: Type.String(),
    fact_cids: Type.Array(b32),
    responder: b32,
    responder_pubkey_b32: b32,
    responder_key_epoch: Type.Integer({ minimum: 0 }),
    signature: b32,
    preimage_version: Type.Integer(),
  },
  { additionalProperties: true, description: 'Ed25519 receipt over the answer (verify offline: POST /v1/verify_receipt or svc verify)' },
);

/** A served fact: its signed body with fact_cid, its receipt, and serving metadata (fact_meta). */
export const ServedFact = Type.Object({ fact_cid: b32 }, { additionalProperties: true, description: 'a signed fact as served: body fields, fact_cid, receipt, fact_meta' });

/** Anything: a value whose shape depends on the band or record type. */
export const AnyValue = Type.Unknown();

/** A closed object of the given fields (optional ones wrapped in Type.Optional). */
export function Closed<T extends TProperties>(props: T, description?: string) {
  return Type.Object(props, { additionalProperties: false, ...(description ? { description } : {}) });
}

/** Who signed each served fact and where it sits in the log, keyed by fact_cid (docs/reads.md). */
export const FactMetaMap = Type.Record(Type.String(), Type.Object({ attester: b32, attester_role: Type.String(), log_index: Type.Integer() }, { additionalProperties: true }), {
  description: 'serving metadata of every fact in the answer, by fact_cid: attester and its role, log_index, accepted_at, source/function of minted facts; not signed, checkable against the log',
});

/** An answer with a receipt: the given fields plus `receipt` (and `fact_meta` when it serves facts), closed. */
export function Signed<T extends TProperties>(props: T, description?: string) {
  return Closed({ ...props, receipt: Receipt, fact_meta: Type.Optional(FactMetaMap) }, description);
}

/** A value that may be absent as null. */
export function Nullable<T extends TSchema>(schema: T) {
  return Type.Union([schema, Type.Null()]);
}

/** A signed tree head of the log (docs/log.md). */
export const TreeHead = Type.Object(
  { tree_size: Type.Integer({ minimum: 0 }), root: b32, signed_at: Type.String(), responder: b32, responder_key_epoch: Type.Integer({ minimum: 0 }), signature: b32 },
  { additionalProperties: false, description: 'signed tree head (docs/log.md)' },
);

/** What every accepted signed write answers (docs/writes.md): where its facts sit in the log, with proofs. */
export const AttestAnswer = {
  accepted: Type.Literal(true),
  fact_cids: Type.Array(b32, { description: 'one per submitted fact, in order' }),
  duplicates: Type.Array(b32, { description: 'fact_cids already in the log (accepted again, not appended twice)' }),
  batch_root: b32,
  log_index: Type.Integer({ minimum: 0 }),
  accepted_at: Type.String(),
  tree_head: TreeHead,
  log_inclusion: Type.Object({ leaf_index: Type.Integer(), tree_size: Type.Integer(), path: Type.Array(b32) }, { additionalProperties: false }),
  merkle_proofs: Type.Record(Type.String(), Type.Unknown(), { description: 'per fact_cid: its inclusion proof in the batch tree' }),
};
