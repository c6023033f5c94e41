/** Embedding reads (docs/embeddings.md): nearest stored cells by vector, and a cell's dense state. */
import { LIMITS } from '../limits.js';
import { SIMILAR_MODES, findSimilar } from '../../primitives/reads/similar.js';
import { DEFAULT_ENCODER, STATE_VIEWS, state, stateDiff, stateMulti } from '../../primitives/reads/state.js';
import { cellSchema, scopeSchema, tslotSchema, type Operation } from '../operations.js';

export const findSimilarOp: Operation = {
  name: 'find_similar',
  method: 'POST',
  path: '/v1/find_similar',
  summary: 'The k stored cells whose embedding is nearest a cell\'s vector or an inline vector',
  description: 'Searches public stored vectors only (nothing is fetched), each cell at its newest vector. '
    + 'Response {band, mode, k, query, neighbors[], searched, caveats, receipt}; each neighbor has cell, score, lat, lng (the cell centre; null for inline queries or undecodable cells, never absent), fact_cid, tslot, place_label_cached (nearest named place within about 25 km, else null), ordered by descending score. '
    + 'score: cosine in [-1, 1] (cosine, hamming_then_rerank) or Hamming agreement 1 − d/bits in [0, 1] (hamming, on the <band>.bin128 codes). '
    + 'The receipt lists the query cell and each neighbour\'s cell and scoring fact_cid in rank order; scores are recomputable from those facts. '
    + 'A query cell without a vector under the band: cid_not_found naming the bands attested there.',
  tags: ['read'],
  input: {
    type: 'object',
    required: ['key'],
    additionalProperties: false,
    properties: {
      key: { type: 'string', minLength: 1, maxLength: 65_536, description: 'cell64, or inline:[x,y,…] (a literal vector of the band\'s dimension; 0/1 values for a .bin128 band)' },
      band: { type: 'string', minLength: 1, maxLength: 100, description: 'vector band (default geotessera; binary siblings end in .bin128)' },
      k: { type: 'integer', minimum: LIMITS.find_similar_k.min, maximum: LIMITS.find_similar_k.max, description: `neighbours returned (default ${LIMITS.find_similar_k.default})` },
      mode: { type: 'string', enum: [...SIMILAR_MODES], description: 'cosine (default; hamming for a .bin128 band), hamming, hamming_then_rerank' },
    },
  },
  mcp: 'full',
  run: (ctx, input, call) => findSimilar(ctx, input, { deadline: call.deadline }),
};

const encoderSchema = { type: 'string', minLength: 1, maxLength: 100, description: `encoder band (default ${DEFAULT_ENCODER}; see /v1/bands, value_kind vector)` } as const;
const viewSchema = { type: 'string', enum: [...STATE_VIEWS], description: 'encoder (default; the encoder\'s own dimension, 128 for geotessera) or cube (1792-D; not served here: refused naming the served views)' } as const;
const MISSING = 'missing[] names each encoder without a vector: {encoder, reason: absence | not_materialized | not_stored, detail, fact_cid?, retryable?} — never a zero vector.';

export const stateOp: Operation = {
  name: 'state',
  method: 'POST',
  path: '/v1/state',
  summary: 'The dense embedding vector of a cell (fetched and signed on a miss, like recall)',
  description: `Response {cell, view, encoder, dim, vector (null when missing), tslot, fact_cid, missing[], facts, receipt, bands_already_attested_at_cell, caveats, materialize_notes}. ${MISSING} Receipt primitive svc.state.`,
  tags: ['read'],
  input: {
    type: 'object', required: ['cell'], additionalProperties: false,
    properties: { cell: cellSchema, encoder: encoderSchema, view: viewSchema, tslot: tslotSchema, scope: scopeSchema },
  },
  mcp: 'full',
  run: (ctx, input, call) => state(ctx, input, { deadline: call.deadline }),
};

export const stateMultiOp: Operation = {
  name: 'state_multi',
  method: 'POST',
  path: '/v1/state_multi',
  summary: 'One vector per served encoder at a cell, with a typed missing[] for the others',
  description: `Response {cell, view, encoders, states: [{encoder, dim, vector, tslot, fact_cid}], missing[], facts, receipt, …}. ${MISSING} Receipt primitive svc.state_multi.`,
  tags: ['read'],
  input: {
    type: 'object', required: ['cell'], additionalProperties: false,
    properties: {
      cell: cellSchema,
      encoders: { type: 'array', minItems: 1, maxItems: 16, items: encoderSchema, description: 'default: every served encoder' },
      view: viewSchema, tslot: tslotSchema, scope: scopeSchema,
    },
  },
  mcp: 'full',
  run: (ctx, input, call) => stateMulti(ctx, input, { deadline: call.deadline }),
};

export const stateDiffOp: Operation = {
  name: 'state_diff',
  method: 'POST',
  path: '/v1/state_diff',
  summary: 'Vector change of a cell\'s embedding between two tslots: delta, L2, cosine and residual',
  description: 'Stored vectors only (never fetches). delta = b − a; l2 = |b − a|; cosine(a, b); residual = b − (a·b / a·a)·a, the part of b that a rescaled a does not explain, with residual_l2. A side without a usable vector gives nulls, never zeros. Receipt primitive svc.state_diff over both sides\' fact_cids.',
  tags: ['read'],
  input: {
    type: 'object', required: ['cell', 'tslot_a', 'tslot_b'], additionalProperties: false,
    properties: { cell: cellSchema, encoder: encoderSchema, tslot_a: tslotSchema, tslot_b: tslotSchema, scope: scopeSchema },
  },
  mcp: 'full',
  run: (ctx, input) => stateDiff(ctx, input),
};

export const VECTOR_OPS: readonly Operation[] = [findSimilarOp, stateOp, stateMultiOp, stateDiffOp];
