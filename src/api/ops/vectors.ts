/** Embedding reads (docs/embeddings.md): nearest stored cells by vector, and a cell's dense state. */
import { Type } from '@sinclair/typebox';
import { LIMITS } from '../limits.js';
import { EXACT_MAX_CELLS, SIMILAR_MODES, findSimilar } from '../../primitives/embeddings/similar.js';
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
    `Up to ${EXACT_MAX_CELLS} vectors in a band the search is exact; above, an HNSW graph proposes candidates and each is re-scored exactly (searched.exact false, searched.index its parameters; pass exact: true for the full scan). ` +
    'A query cell without a vector under the band: cid_not_found naming the bands attested there.',
  tags: ['read'],
  input: Type.Object(
    {
      key: Type.String({ minLength: 1, maxLength: 65_536, description: "cell64, or inline:[x,y,…] (a literal vector of the band's dimension; 0/1 values for a .bin128 band)" }),
      band: Type.String({ minLength: 1, maxLength: 100, default: 'geotessera', description: 'vector band (binary siblings end in .bin128)' }),
      k: Type.Integer({ minimum: LIMITS.find_similar_k.min, maximum: LIMITS.find_similar_k.max, default: LIMITS.find_similar_k.default, description: 'neighbours returned' }),
      // No schema default: it depends on the band (hamming for a .bin128 band, else cosine).
      mode: Type.Optional(OneOf(SIMILAR_MODES, { description: 'cosine (default; hamming for a .bin128 band), hamming, hamming_then_rerank' })),
      exact: Type.Optional(
        Type.Boolean({
          description: `cosine mode: true scans every vector; false uses the approximate HNSW graph (candidates re-scored exactly). Default: exact up to ${EXACT_MAX_CELLS} vectors in the band, approximate above`,
        }),
      ),
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
    searched: Closed({
      candidates: Type.Integer({ minimum: 0, description: 'vectors (or codes) held for the band' }),
      exact: Type.Boolean({ description: 'true: every vector was scored; false: the HNSW graph proposed candidates, each re-scored exactly' }),
      index: Nullable(
        Closed({
          kind: Type.Literal('hnsw'),
          library: Type.String(),
          metric: Type.String(),
          quantization: Type.String(),
          connectivity: Type.Integer(),
          expansion_add: Type.Integer(),
          expansion_search: Type.Integer(),
          rescored: Type.Integer({ minimum: 0, description: 'candidates scored exactly (graph proposals and vectors not yet in the graph)' }),
        }),
      ),
      index_complete: Type.Boolean(),
      log_entries_read: Type.Integer({ minimum: 0 }),
      log_size: Type.Integer({ minimum: 0 }),
    }),
    caveats: Type.Array(Type.String()),
  }),
  mcp: 'full',
  run: (ctx, input, call) => findSimilar(ctx, input, { deadline: call.deadline }),
});

const Encoder = Type.String({ minLength: 1, maxLength: 100, description: `encoder band (default ${DEFAULT_ENCODER}; see /v1/bands, value_kind vector)` });
const View = OneOf(STATE_VIEWS, {
  default: 'encoder',
  description:
    "encoder (default): one vector of the encoder's own dimension (128 for geotessera) at one tslot. cube: a 14-year time stack of the annual encoder, 14 slots × 128 = 1792 values, slot j = the vector at tslot anchor − 13 + j (oldest first; layout at GET /v1/bands, cube_layout)",
});
const MISSING =
  'missing[] names each encoder (cube view: each slot) without a vector: {encoder, slot?, tslot?, reason: absence | not_materialized | not_stored | outside_coverage, detail, fact_cid?, retryable?} — never a zero vector.';
const CUBE =
  'Use view cube to see how a place changed over the years in one call (a time stack for change or trend models); use the encoder view for one year. ' +
  'Cube: anchor = tslot, else the newest slot the encoder covers (geotessera: from 2017, open-ended, so the current year); slot j holds tslot anchor − 13 + j at offsets 128·j; ' +
  "a slot without a vector is 128 nulls (never zeros) with a missing[] entry; years outside the encoder's coverage are not fetched (outside_coverage). " +
  'vector is null when no slot has a vector; slots[] gives {slot, tslot, year, offset, fact_cid|null}; the receipt cites every fact the slots read.';

const Missing = Closed(
  {
    encoder: Type.String(),
    slot: Type.Optional(Type.Integer({ minimum: 0, maximum: 13, description: 'cube view: the slot without a vector' })),
    tslot: Type.Optional(Type.Integer({ description: "cube view: the slot's tslot" })),
    reason: OneOf(['absence', 'not_materialized', 'not_stored', 'outside_coverage'] as const, {
      description: "outside_coverage (cube view): the slot's year is outside the encoder's declared coverage and was not read",
    }),
    detail: Type.String(),
    fact_cid: Type.Optional(Type.String()),
    retryable: Type.Optional(Type.Boolean()),
  },
  'an encoder (cube view: a slot) without a vector at the cell, and why',
);

const CubeSlot = Closed(
  {
    slot: Type.Integer({ minimum: 0, maximum: 13 }),
    tslot: Type.Integer(),
    year: Type.Integer({ description: 'the calendar year the annual slot stands for' }),
    offset: Type.Integer({ minimum: 0, description: "index of the slot's first value in vector" }),
    fact_cid: Nullable(Type.String({ description: "the slot's vector fact; null when the slot is missing" })),
  },
  'one slot of a cube',
);
const EncoderVector = Type.Array(Type.Number(), { description: "encoder view: the encoder's vector" });
const CubeVector = Type.Array(Nullable(Type.Number()), { description: 'cube view: 1792 values, null for the values of a missing slot' });
const ViewOut = OneOf(STATE_VIEWS);

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
  description: `Response {cell, view, encoder, dim, vector (null when missing), tslot, fact_cid, slots (cube view), missing[], facts, receipt, bands_already_attested_at_cell, caveats, materialize_notes}. ${MISSING} ${CUBE} In the cube view dim is 1792, tslot is the anchor and fact_cid is null. Receipt primitive svc.state.`,
  tags: ['read'],
  input: Type.Object({ cell: Cell, encoder: { ...Encoder, default: DEFAULT_ENCODER }, view: View, tslot: Type.Optional(Tslot), scope: Type.Optional(Scope) }, { additionalProperties: false }),
  output: Signed({
    cell: Type.String(),
    view: ViewOut,
    encoder: Type.String(),
    dim: Nullable(Type.Integer()),
    vector: Type.Union([EncoderVector, CubeVector, Type.Null()]),
    tslot: Nullable(Type.Integer({ description: 'the vector tslot; cube view: the anchor' })),
    fact_cid: Nullable(Type.String()),
    slots: Type.Optional(Type.Array(CubeSlot, { description: 'cube view: the 14 slots, oldest first' })),
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
  description: `Response {cell, view, encoders, states: [{encoder, dim, vector, tslot, fact_cid}], missing[], facts, receipt, …}. ${MISSING} View cube: one cube per annual encoder in states[] ({encoder, dim: 1792, vector, tslot: anchor, slots}), only for encoders with at least one slot; every missing slot is in missing[]. ${CUBE} Receipt primitive svc.state_multi.`,
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
    view: ViewOut,
    encoders: Type.Array(Type.String()),
    states: Type.Array(
      Type.Union([
        Closed({ encoder: Type.String(), dim: Type.Integer(), vector: EncoderVector, tslot: Type.Integer(), fact_cid: Type.String() }, 'encoder view'),
        Closed({ encoder: Type.String(), dim: Type.Integer(), vector: CubeVector, tslot: Type.Integer({ description: 'the anchor' }), slots: Type.Array(CubeSlot) }, 'cube view'),
      ]),
    ),
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
  slots: Type.Optional(Type.Array(CubeSlot, { description: "cube view: the side's 14 slots" })),
  missing: Type.Optional(Type.Array(Missing, { description: "cube view: the side's slots without a stored vector" })),
});
const maybeNumber = Nullable(Type.Number());

export const stateDiffOp = defineOperation({
  name: 'state_diff',
  method: 'POST',
  path: '/v1/state_diff',
  summary: "Vector change of a cell's embedding between two tslots: delta, L2, cosine and residual",
  description:
    "Stored vectors only (never fetches). delta = b − a; l2 = |b − a|; cosine(a, b); residual = b − (a·b / a·a)·a, the part of b that a rescaled a does not explain, with residual_l2. A side without a usable vector gives nulls, never zeros. Receipt primitive svc.state_diff over both sides' fact_cids. " +
    'view cube: compares the 14-year cubes anchored at tslot_a and tslot_b slot by slot (slot j: tslot_a − 13 + j against tslot_b − 13 + j); a and b carry {tslot: anchor, kind: cube, value: the 1792 values with nulls, slots, missing}; ' +
    'delta has 1792 entries, null where either side misses the slot (null when no slot is on both sides); l2 and cosine over the concatenated slots present on both sides, slots_compared of them; residual and residual_l2 are null (encoder view only).',
  tags: ['read'],
  input: Type.Object(
    {
      cell: Cell,
      encoder: { ...Encoder, default: DEFAULT_ENCODER },
      view: { ...View, description: 'encoder (default): the vectors at tslot_a and tslot_b; cube: the 14-year cubes anchored at tslot_a and tslot_b' },
      tslot_a: Tslot,
      tslot_b: Tslot,
      scope: Type.Optional(Scope),
    },
    { additionalProperties: false },
  ),
  output: Signed({
    cell: Type.String(),
    band: Type.String(),
    unit: Type.String(),
    value_kind: Type.String(),
    a: DiffSide,
    b: DiffSide,
    delta: Nullable(
      Type.Union([Type.Array(Type.Number()), CubeVector, Type.Number()], { description: 'b − a; null when a side has no usable vector (cube view: null entries for slots missing on either side)' }),
    ),
    l2: Type.Optional(Type.Number()),
    cosine: Type.Optional(maybeNumber),
    slots_compared: Type.Optional(Type.Integer({ minimum: 0, maximum: 14, description: 'cube view: slots present on both sides (l2 and cosine are over these)' })),
    changed: Type.Optional(Type.Boolean()),
    percent_change: Type.Optional(maybeNumber),
    notes: Type.Array(Type.String()),
    encoder: Type.String(),
    view: ViewOut,
    residual: Nullable(Type.Array(Type.Number())),
    residual_l2: maybeNumber,
  }),
  mcp: 'full',
  run: (ctx, input) => stateDiff(ctx, input),
});

export const VECTOR_OPS: readonly Operation[] = [findSimilarOp, stateOp, stateMultiOp, stateDiffOp];
