/** Corpus snapshot and receipt verification as operations (REST + MCP). */
import { Type } from '@sinclair/typebox';
import { corpusStateStats } from '../../primitives/reads/corpus-stats.js';
import { verifyReceiptPrimitive } from '../../primitives/verify/verify-receipt.js';
import { defineOperation } from '../operations.js';
import { OneOf } from '../schemas/inputs.js';
import { AnyValue, Closed, Nullable, Signed, TreeHead } from '../schemas/responses.js';

export const corpusStatsOp = defineOperation({
  name: 'corpus_state_stats',
  method: 'GET',
  path: '/v1/corpus_state_stats',
  summary: 'One signed snapshot of corpus state (grid cells, other subjects, bands, facts scanned); the stream tick payload',
  tags: ['read'],
  input: Type.Object({}, { additionalProperties: false }),
  output: Signed({
    schema: Type.String({ description: '<prefix>.corpus_state.v1' }),
    cells: Type.Integer({ minimum: 0, description: 'grid cells (cell64) holding a public fact' }),
    subjects: Type.Integer({ minimum: 0, description: 'other public subjects: notes, entities and answer records (svc:entity:…), which are not places' }),
    bands: Type.Integer({ minimum: 0 }),
    facts_scanned: Type.Integer({ minimum: 0 }),
    log: Closed({ tree_size: Type.Integer({ minimum: 0 }), root: Type.String() }),
    driver: Type.String({ description: 'the store driver' }),
    as_of: Type.String({ description: 'signed_at of the tree head' }),
    tree_head: TreeHead,
  }),
  mcp: 'core',
  run: (ctx) => corpusStateStats(ctx),
});

const Strings = Type.Array(Type.String());
const reportChecks = { ok: Type.Boolean(), failures: Strings, errors: Strings };

/** What the whole-response verifier found (protocol/verify-response.ts), per receipt, fact and reference. */
const ResponseReport = Closed(
  {
    valid: Type.Boolean(),
    receipts: Type.Array(
      Closed({
        path: Type.String(),
        primitive: Nullable(Type.String()),
        signer: Nullable(Type.String()),
        preimage_version: Nullable(Type.Integer()),
        cells: Type.Integer({ description: 'cells the receipt names' }),
        fact_cids: Type.Integer({ description: 'fact_cids the receipt binds' }),
        valid: Type.Boolean(),
        trusted: Type.Boolean(),
        failures: Strings,
        errors: Strings,
      }),
    ),
    facts: Type.Array(
      Closed({
        path: Type.String(),
        fact_cid: Type.String(),
        recomputed_cid: Nullable(Type.String()),
        kind: Type.Optional(AnyValue),
        cell: Type.Optional(AnyValue),
        band: Type.Optional(AnyValue),
        tslot: Type.Optional(AnyValue),
        value: Type.Optional(AnyValue),
        unit: Type.Optional(AnyValue),
        bound_by: Type.Array(Type.String(), { description: 'paths of the valid receipts binding the fact' }),
        meta: Nullable(Type.Object({}, { additionalProperties: true, description: 'the fact_meta shown beside the fact' })),
        batch_root: Nullable(Type.String()),
        ...reportChecks,
      }),
    ),
    references: Type.Array(Closed({ path: Type.String(), fact_cid: Type.String(), bound_by: Strings, compared: Type.Boolean(), ...reportChecks })),
    failures: Strings,
    unsigned: Type.Array(Type.String(), { description: 'what the signatures do not cover' }),
  },
  'present when a whole response was given: per-receipt, per-fact and per-reference checks',
);

export const verifyReceiptOp = defineOperation({
  name: 'verify_receipt',
  method: 'POST',
  path: '/v1/verify_receipt',
  summary: 'Verify a receipt (preimage v0, v1, v2) or a whole saved response: every fact recomputed and bound; a failure is valid:false, not an error',
  description:
    "Use after any read to check what you were given. Body: the receipt JSON itself, {receipt: …}, the whole response of a read, or that response wrapped as {response: …} (recall, recall_many, fetch, a shortcut, verify, a token…): then every fact's fact_cid is recomputed from its body and must be listed by a valid receipt covering it that names its cell, and `response` reports per fact and per receipt what was checked. Returns {valid, signer, signer_is_this_responder, preimage_b64, preimage_blake3_hex, failures[], errors[], advisories[] (registry_cid_unknown / schema_cid_unknown when a receipt of this responder names a manifest it never published; advisory only), response?}. Offline: `npx svc verify response.json --pubkey <key>`.",
  tags: ['verify'],
  // Any object: a receipt, {receipt}, or a whole response; what is wrong with it is the answer (valid: false).
  input: Type.Object({}, { additionalProperties: true, description: 'a receipt as returned by any read, {receipt: …}, a whole response, or {response: <a whole response>}' }),
  output: Closed({
    valid: Type.Boolean(),
    signer: Nullable(Type.String({ description: 'the key the receipt names (b32)' })),
    signer_is_this_responder: Type.Boolean(),
    signer_epoch: Nullable(Type.Integer()),
    preimage_version: Nullable(Type.Integer()),
    preimage_b64: Nullable(Type.String()),
    preimage_blake3_hex: Nullable(Type.String()),
    field_bound: Type.Boolean(),
    failures: Strings,
    errors: Strings,
    advisories: Type.Array(Closed({ advisory: Type.Literal(true), code: OneOf(['registry_cid_unknown', 'schema_cid_unknown'] as const), message: Type.String() })),
    response: Type.Optional(ResponseReport),
  }),
  mcp: 'core',
  run: async (ctx, body) => verifyReceiptPrimitive(ctx, body),
});
