/**
 * Derivations over the API (docs/writes.md, "Derivations"): POST /v1/derive writes one derivative
 * fact signed with the caller's key (REST only, like every write); GET /v1/derived pages the
 * public derivatives one key signed (an MCP tool in /mcp/full).
 */
import { Type } from '@sinclair/typebox';
import { DERIVED_LIMIT_DEFAULT, DERIVED_LIMIT_MAX, derive, derivedList } from '../../primitives/memory/derive.js';
import { defineOperation, type Operation } from '../operations.js';
import { B32Key } from '../schemas/inputs.js';
import { AnyValue, AttestAnswer, Closed, ServedFact, Signed } from '../schemas/responses.js';
import { signedBatchSchema } from './signed-batch.js';

export const deriveOp = defineOperation({
  name: 'derive',
  method: 'POST',
  path: '/v1/derive',
  summary: 'Write one derivative fact (a value computed from stored parent facts at the same cell), signed with your key; recomputable functions are checked',
  description:
    'Use to record a value you computed from facts this responder already holds, e.g. the change of NDVI between two scenes (band derived.delta, fn nd.delta@1: parents[0] − parents[1]) or a mean (derived.mean, mean@1 over 2..64 parents). Body: the attest envelope {batch_root, attester, signature, facts: [one body]} with body {kind: "derivative", cell, band, tslot?, value, signed_at, derivation: {fn, parents: [fact_cid …]}, scope?}. Every parent must be stored here and at the same cell (invalid_argument, details.reason parent_cell_mismatch); fn must be a key of /v1/functions (function_not_in_registry); for nd.delta@1 and mean@1 the responder recomputes the value from the stored parents and refuses a difference beyond 1e-9 relative (invalid_argument, details.reason recomputation_mismatch with expected and got). A refusal writes nothing. Returns {derivation {fact_cid, cell, band, fn, parents, value, recomputed}, edges [{edge_cid, kind: derived_from, from, to}], fact_cids, log_index, accepted_at, merkle_proofs, tree_head, log_inclusion, receipt (binds the fact; edge_cids binds the edges)}. Next: GET /v1/derived?attester=<your key> to list your derivations, POST /v1/edges/recall on the fact_cid to follow derived_from.',
  tags: ['write'],
  input: signedBatchSchema({
    maxItems: 1,
    description: 'exactly one body, kind "derivative"',
    // kind is any string here: the write answers a kind other than "derivative" naming facts[0].kind.
    items: Type.Object({
      kind: Type.String(),
      cell: Type.String(),
      band: Type.String(),
      value: Type.Unknown(),
      derivation: Type.Optional(Type.Object({}, { additionalProperties: true, description: '{fn: a key of /v1/functions, parents: 1..64 fact_cids stored here at the same cell}' })),
    }),
  }),
  output: Signed({
    ...AttestAnswer,
    derivation: Closed({
      fact_cid: Type.String(),
      cell: Type.String(),
      band: Type.String(),
      fn: Type.String(),
      parents: Type.Array(Type.String()),
      value: AnyValue,
      recomputed: Type.Boolean({ description: 'the responder recomputed the value from the parents (nd.delta@1, mean@1)' }),
    }),
    edges: Type.Array(Closed({ edge_cid: Type.String(), kind: Type.Literal('derived_from'), from: Type.String(), to: Type.String() })),
  }),
  mcp: false,
  run: (ctx, input) => derive(ctx, input),
});

export const derivedOp = defineOperation({
  name: 'derived',
  method: 'GET',
  path: '/v1/derived',
  summary: 'List the public derivative facts one key signed, oldest first, paged',
  description: `Use to see what an agent derived (deltas, means …) and to audit it: each derivative is served signed, with its derivation {fn, parents}; fetch a parent with /v1/fetch, follow the derived_from edges with /v1/edges/recall. Query: attester (b32 key), after (the next_after of the previous page), limit (1..${DERIVED_LIMIT_MAX}, default ${DERIVED_LIMIT_DEFAULT}). Returns {attester, count, facts [signed derivative facts, each with its receipt], next_after? (present when more may follow: pass it as after), receipt (binds every listed fact_cid and cell)}. Public derivatives only: this read takes no scope (a scope in a query string would need its bearer; scoped derivatives are read by fact_cid with /v1/fetch under the scope's bearer).`,
  tags: ['memory'],
  input: Type.Object(
    {
      attester: { ...B32Key, description: 'the key whose derivatives to list (b32)' },
      after: Type.Optional(Type.Integer({ minimum: 0, description: 'next_after of the previous page' })),
      limit: Type.Integer({ minimum: 1, maximum: DERIVED_LIMIT_MAX, default: DERIVED_LIMIT_DEFAULT }),
    },
    { additionalProperties: false },
  ),
  output: Signed({
    attester: Type.String(),
    count: Type.Integer({ minimum: 0 }),
    facts: Type.Array(ServedFact, { description: 'signed derivative facts, oldest first, each with its receipt' }),
    next_after: Type.Optional(Type.Integer({ description: 'present when more may follow: pass it as after' })),
  }),
  mcp: 'full',
  run: (ctx, input) => derivedList(ctx, input),
});

export const DERIVE_OPS: Operation[] = [deriveOp, derivedOp];
