/** Embedding reads (spec 4.4): nearest stored cells by vector. */
import { LIMITS } from '../limits.js';
import { SIMILAR_MODES, findSimilar } from '../../primitives/reads/similar.js';
import type { Operation } from '../operations.js';

export const findSimilarOp: Operation = {
  name: 'find_similar',
  method: 'POST',
  path: '/v1/find_similar',
  summary: 'The k stored cells whose embedding is nearest a cell\'s vector or an inline vector',
  description: 'Searches public stored vectors only (nothing is fetched), each cell at its newest vector. '
    + 'Response {band, mode, k, query, neighbors[], searched, caveats, receipt}; each neighbor has cell, score, lat, lng, fact_cid, tslot, place_label_cached (nearest named place within about 25 km, else null), ordered by descending score. '
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

export const VECTOR_OPS: readonly Operation[] = [findSimilarOp];
