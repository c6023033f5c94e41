/** Embedding reads (docs/embeddings.md): nearest stored cells by vector, and a cell's dense state. */
import { Type } from '@sinclair/typebox';
import { LIMITS } from '../limits.js';
import { SIMILAR_MODES, findSimilar } from '../../primitives/embeddings/similar.js';
import { DEFAULT_ENCODER, STATE_VIEWS, state, stateDiff, stateMulti } from '../../primitives/embeddings/state.js';
import { defineOperation, type Operation } from '../operations.js';
import { Cell, OneOf, Scope, Tslot } from '../schemas/inputs.js';
import { AnyValue, Closed, MaterializeNote, Nullable, PlaceResolved, ServedFact, Signed } from '../schemas/responses.js';

const Neighbor = Closed({
  cell: Type.String(),
  score: Type.Number({ description: 'cosine in [-1, 1], or Hamming agreement in [0, 1]' }),
  lat: Nullable(Type.Number({ description: 'the cell centre; null for inline queries and undecodable cells' })),
  lng: Nullable(Type.Number()),
  fact_cid: Type.String({ description: 'the fact whose value produced the score' }),
  tslot: Type.Integer(),
  place_label_cached: Nullable(Type.String({ description: 'nearest named place within about 25 km' })),
});

export const findSimilarOp = defineOperation({
  name: 'find_similar',
  method: 'POST',
  path: '/v1/find_similar',
  summary: "The k stored cells whose embedding is nearest a cell's vector or an inline vector",
  description:
    'Searches public stored vectors only (nothing is fetched), each cell at its newest vector. ' +
    'Response {band, mode, k, query, neighbors[], searched, caveats, receipt}; each neighbor has cell, score, lat, lng (the cell centre; null for inline queries or undecodable cells, never absent), fact_cid, tslot, place_label_cached (nearest named place within about 25 km, else null), ordered by descending score. ' +
    'score: cosine in [-1, 1] (cosine, hamming_then_rerank) or Hamming agreement 1 − d/bits in [0, 1] (hamming, on the <band>.bin128 codes). ' +
    "The receipt lists the query cell and each neighbour's cell and scoring fact_cid in rank order; scores are recomputable from those facts. " +
    'A query cell without a vector under the band: cid_not_found naming the bands attested there.',
  tags: ['read'],
  input: Type.Object(
    {
      key: Type.String({ minLength: 1, maxLength: 65_536, description: "cell64, or inline:[x,y,…] (a literal vector of the band's dimension; 0/1 values for a .bin128 band)" }),
      band: Type.String({ minLength: 1, maxLength: 100, default: 'geotessera', description: 'vector band (binary siblings end in .bin128)' }),
      k: Type.Integer({ minimum: LIMITS.find_similar_k.min, maximum: LIMITS.find_similar_k.max, default: LIMITS.find_similar_k.default, description: 'neighbours returned' }),
      // No schema default: it depends on the band (hamming for a .bin128 band, else cosine).
      mode: Type.Optional(OneOf(SIMILAR_MODES, { description: 'cosine (default; hamming for a .bin128 band), hamming, hamming_then_rerank' })),
    },
    { additionalProperties: false },
  ),
  output: Signed({
    band: Type.String(),
    mode: OneOf(SIMILAR_MODES),
    k: Type.Integer(),
    query: Closed({
      kind: OneOf(['cell', 'inline'] as const),
      cell: Type.Optional(Type.String()),
      fact_cid: Type.Optional(Type.String({ description: "the query cell's vector fact" })),
      tslot: Type.Optional(Type.Integer()),
      code_fact_cid: Type.Optional(Type.String({ description: "the query cell's binary code fact" })),
    }),
    neighbors: Type.Array(Neighbor, { description: 'best first' }),
    searched: Closed({ candidates: Type.Integer({ minimum: 0 }), index_complete: Type.Boolean(), log_entries_read: Type.Integer({ minimum: 0 }), log_size: Type.Integer({ minimum: 0 }) }),
    caveats: Type.Array(Type.String()),
  }),
  mcp: 'full',
  run: (ctx, input, call) => findSimilar(ctx, input, { deadline: call.deadline }),
});

const Encoder = Type.String({ minLength: 1, maxLength: 100, description: `encoder band (default ${DEFAULT_ENCODER}; see /v1/bands, value_kind vector)` });
const View = OneOf(STATE_VIEWS, { default: 'encoder', description: "encoder (the encoder's own dimension, 128 for geotessera) or cube (1792-D; not served here: refused naming the served views)" });
const MISSING = 'missing[] names each encoder without a vector: {encoder, reason: absence | not_materialized | not_stored, detail, fact_cid?, retryable?} — never a zero vector.';

const Missing = Closed(
  {
    encoder: Type.String(),
    reason: OneOf(['absence', 'not_materialized', 'not_stored'] as const),
    detail: Type.String(),
    fact_cid: Type.Optional(Type.String()),
    retryable: Type.Optional(Type.Boolean()),
  },
  'an encoder without a vector at the cell, and why',
);

/** What state and state_multi carry over from recall. */
const recallEnvelope = {
  missing: Type.Array(Missing),
  facts: Type.Array(ServedFact),
  bands_already_attested_at_cell: Type.Array(Type.String()),
  caveats: Type.Array(Type.String()),
  materialize_notes: Type.Array(MaterializeNote),
  place: Type.Optional(PlaceResolved),
};

export const stateOp = defineOperation({
  name: 'state',
  method: 'POST',
  path: '/v1/state',
  summary: 'The dense embedding vector of a cell (fetched and signed on a miss, like recall)',
  description: `Response {cell, view, encoder, dim, vector (null when missing), tslot, fact_cid, missing[], facts, receipt, bands_already_attested_at_cell, caveats, materialize_notes}. ${MISSING} Receipt primitive svc.state.`,
  tags: ['read'],
  input: Type.Object({ cell: Cell, encoder: { ...Encoder, default: DEFAULT_ENCODER }, view: View, tslot: Type.Optional(Tslot), scope: Type.Optional(Scope) }, { additionalProperties: false }),
  output: Signed({
    cell: Type.String(),
    view: Type.Literal('encoder'),
    encoder: Type.String(),
    dim: Nullable(Type.Integer()),
    vector: Nullable(Type.Array(Type.Number())),
    tslot: Nullable(Type.Integer()),
    fact_cid: Nullable(Type.String()),
    ...recallEnvelope,
  }),
  mcp: 'full',
  run: (ctx, input, call) => state(ctx, input, { deadline: call.deadline }),
});

export const stateMultiOp = defineOperation({
  name: 'state_multi',
  method: 'POST',
  path: '/v1/state_multi',
  summary: 'One vector per served encoder at a cell, with a typed missing[] for the others',
  description: `Response {cell, view, encoders, states: [{encoder, dim, vector, tslot, fact_cid}], missing[], facts, receipt, …}. ${MISSING} Receipt primitive svc.state_multi.`,
  tags: ['read'],
  input: Type.Object(
    {
      cell: Cell,
      // No schema default: every encoder served here (registry-dependent).
      encoders: Type.Optional(Type.Array(Encoder, { minItems: 1, maxItems: 16, description: 'default: every served encoder' })),
      view: View,
      tslot: Type.Optional(Tslot),
      scope: Type.Optional(Scope),
    },
    { additionalProperties: false },
  ),
  output: Signed({
    cell: Type.String(),
    view: Type.Literal('encoder'),
    encoders: Type.Array(Type.String()),
    states: Type.Array(Closed({ encoder: Type.String(), dim: Type.Integer(), vector: Type.Array(Type.Number()), tslot: Type.Integer(), fact_cid: Type.String() })),
    ...recallEnvelope,
  }),
  mcp: 'full',
  run: (ctx, input, call) => stateMulti(ctx, input, { deadline: call.deadline }),
});

const DiffSide = Closed({
  tslot: Type.Integer(),
  fact_cid: Nullable(Type.String()),
  kind: Nullable(Type.String()),
  value: AnyValue,
  note: Type.Optional(Type.String({ description: 'why the side has no usable value' })),
});
const maybeNumber = Nullable(Type.Number());

export const stateDiffOp = defineOperation({
  name: 'state_diff',
  method: 'POST',
  path: '/v1/state_diff',
  summary: "Vector change of a cell's embedding between two tslots: delta, L2, cosine and residual",
  description:
    "Stored vectors only (never fetches). delta = b − a; l2 = |b − a|; cosine(a, b); residual = b − (a·b / a·a)·a, the part of b that a rescaled a does not explain, with residual_l2. A side without a usable vector gives nulls, never zeros. Receipt primitive svc.state_diff over both sides' fact_cids.",
  tags: ['read'],
  input: Type.Object({ cell: Cell, encoder: { ...Encoder, default: DEFAULT_ENCODER }, tslot_a: Tslot, tslot_b: Tslot, scope: Type.Optional(Scope) }, { additionalProperties: false }),
  output: Signed({
    cell: Type.String(),
    band: Type.String(),
    unit: Type.String(),
    value_kind: Type.String(),
    a: DiffSide,
    b: DiffSide,
    delta: Nullable(Type.Union([Type.Array(Type.Number()), Type.Number()], { description: 'b − a; null when a side has no usable vector' })),
    l2: Type.Optional(Type.Number()),
    cosine: Type.Optional(maybeNumber),
    changed: Type.Optional(Type.Boolean()),
    percent_change: Type.Optional(maybeNumber),
    notes: Type.Array(Type.String()),
    encoder: Type.String(),
    view: Type.Literal('encoder'),
    residual: Nullable(Type.Array(Type.Number())),
    residual_l2: maybeNumber,
  }),
  mcp: 'full',
  run: (ctx, input) => stateDiff(ctx, input),
});

export const VECTOR_OPS: readonly Operation[] = [findSimilarOp, stateOp, stateMultiOp, stateDiffOp];
