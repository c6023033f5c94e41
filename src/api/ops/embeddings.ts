/**
 * Embedding analytics over regions (docs/embeddings.md, "Analytics over regions"): a region's
 * centroid, the similarity of two regions, a region's diversity and a cell's consistency with
 * its neighbours. Stored vectors only; each answer cites its registry algorithm and is signed
 * over every cell and fact_cid it used.
 */
import { Type } from '@sinclair/typebox';
import { DIVERSITY_EXACT_MAX } from '../../primitives/embeddings/analytics-math.js';
import { ANALYTICS_DEFAULT_CELLS, ANALYTICS_MAX_CELLS, DEFAULT_ENCODER } from '../../primitives/embeddings/analytics-region.js';
import { embeddingCentroid, embeddingDiversity, neighborhoodConsistency, regionSimilarity } from '../../primitives/embeddings/analytics.js';
import { PLACE_RADIUS_M } from '../../primitives/rasters/archetype-region.js';
import { defineOperation, type Operation } from '../operations.js';
import { OneOf, Scope, Tslot } from '../schemas/inputs.js';
import { Closed, Nullable, ResolvedPlace, Signed } from '../schemas/responses.js';

// ---- inputs -------------------------------------------------------------------------------------

const Encoder = Type.String({
  minLength: 1,
  maxLength: 100,
  default: DEFAULT_ENCODER,
  description: `embedding band (default ${DEFAULT_ENCODER}, 128-D): a registered band of value_kind vector, not a .bin128 code band (see /v1/bands)`,
});
const TslotIn = Type.Optional({ ...Tslot, description: "read each cell's vector at exactly this tslot (default: each cell's newest)" });
const MaxCells = Type.Integer({
  minimum: 1,
  maximum: ANALYTICS_MAX_CELLS,
  default: ANALYTICS_DEFAULT_CELLS,
  description: `cells read from a place, polygon or bbox (a deterministic sample beyond it); a cells list is read whole (at most ${ANALYTICS_MAX_CELLS})`,
});

const regionProps = {
  place: Type.Optional(Type.String({ minLength: 1, maxLength: 300, description: 'a place name (or "lat, lng"), resolved by locate: its outline, its box, or a square of radius_m around a point' })),
  radius_m: Type.Optional(Type.Number({ minimum: 10, maximum: PLACE_RADIUS_M.max, description: `with place: half the side of the square around a point place (default ${PLACE_RADIUS_M.default} m)` })),
  polygon: Type.Optional(
    Type.Object({ type: OneOf(['Polygon', 'MultiPolygon'] as const), coordinates: Type.Array(Type.Unknown()) }, { description: 'GeoJSON Polygon or MultiPolygon ([lng, lat] positions)' }),
  ),
  bbox: Type.Optional(Type.Array(Type.Number(), { minItems: 4, maxItems: 4, description: '[west, south, east, north] degrees (as query_region)' })),
  cells: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: ANALYTICS_MAX_CELLS, description: `cell64 values (or cell tokens), at most ${ANALYTICS_MAX_CELLS}` }),
  ),
};
const REGION_HELP = 'Give exactly one of place (with radius_m for a point place), polygon, bbox or cells.';
const Region = Type.Object(regionProps, { additionalProperties: false, description: `a region: ${REGION_HELP}` });

// ---- outputs ------------------------------------------------------------------------------------

const Status = OneOf(['ok', 'inconclusive'] as const, { description: 'inconclusive: too few vectors to compute; the counts say what was seen, reason and detail why' });
const counts = {
  cells_sampled: Type.Integer({ minimum: 0, description: 'cells read' }),
  cells_with_vector: Type.Integer({ minimum: 0, description: 'of those, cells with a stored usable vector' }),
  cells_absent: Type.Integer({ minimum: 0, description: 'cells whose newest fact of the band is a signed absence' }),
  cells_unusable: Type.Integer({ minimum: 0, description: 'cells whose stored value is not a non-zero vector of the dimension' }),
};
const RegionOut = Closed(
  {
    kind: OneOf(['place', 'polygon', 'bbox', 'cells'] as const),
    bbox: Type.Optional(Type.Array(Type.Number(), { description: '[west, south, east, north] of the area read' })),
    place: Type.Optional(ResolvedPlace('the place as resolved (not signed: the cells read are)')),
  },
  'how the region was read',
);
const Sampling = Closed({
  method: Type.String({ description: 'given (a cells list), enumerated, enumerated_then_spread, grid, prefix_walk or prefix_walk+grid (as query_region)' }),
  max_cells: Type.Integer(),
  prefix_walk: Type.Optional(Closed({ prefixes: Type.Integer(), stored_cells_found: Type.Integer(), truncated: Type.Boolean() })),
});
const regionRead = {
  ...counts,
  tslots: Type.Array(Type.Integer(), { description: 'distinct tslots of the vectors used' }),
  region: RegionOut,
  is_exhaustive: Type.Boolean({ description: 'true when every cell of the region was read' }),
  sampling: Sampling,
};
const Centroid = Nullable(Type.Array(Type.Number(), { description: 'unit vector (each value to 12 significant digits); null when inconclusive, never a zero vector' }));
const CentroidCid = Nullable(Type.String({ pattern: '^[a-z2-7]{52}$', description: 'base32(BLAKE3(canonical CBOR of {encoder, dim, centroid, fact_cids (ascending)}))' }));
const centroidCore = {
  status: Status,
  reason: Type.Optional(OneOf(['no_vectors', 'zero_mean'] as const)),
  detail: Type.Optional(Type.String()),
  centroid: Centroid,
  centroid_cid: CentroidCid,
  fact_cids: Type.Array(Type.String(), { description: 'the vectors averaged, ascending (as in the centroid record)' }),
  ...regionRead,
};
const Side = Closed(centroidCore, "one region's centroid (as embedding_centroid answers it, without a receipt)");
const head = {
  algorithm: Type.String({ description: 'the registry algorithm computed (GET /v1/algorithms/<key>)' }),
  encoder: Type.String(),
  dim: Type.Integer(),
};
const Caveats = Type.Array(Type.String(), { description: 'what the answer does not say' });

// ---- operations ---------------------------------------------------------------------------------

const SIGNED =
  "The receipt lists every cell whose vector was used and every fact_cid used (fetch any by cid to recompute); with scope (and its bearer) only that scope's facts are read, without it public facts only.";

export const embeddingCentroidOp = defineOperation({
  name: 'embedding_centroid',
  method: 'POST',
  path: '/v1/embedding_centroid',
  summary: "The unit mean embedding of a region's stored vectors, with a centroid_cid naming it",
  description:
    `Use to summarise what a region looks like in embedding space, to compare it later (region_similarity) or to search near it (find_similar with key inline:[centroid]). ${REGION_HELP} Stored vectors only (nothing is fetched); a cells list is read whole (≤ ${ANALYTICS_MAX_CELLS}), an area is sampled to max_cells like query_region. ` +
    'Answer {status, algorithm: embedding_centroid@1, encoder, dim, centroid = m/|m| with m the mean vector, centroid_cid, fact_cids, cells_sampled, cells_with_vector, cells_absent, cells_unusable, tslots, region, is_exhaustive, sampling, caveats, receipt}. ' +
    `No vector in the region: status inconclusive (reason no_vectors, centroid null) — recall the encoder at a few cells to store vectors, then call again. ${SIGNED}`,
  tags: ['read'],
  input: Type.Object({ ...regionProps, encoder: Encoder, tslot: TslotIn, max_cells: MaxCells, scope: Type.Optional(Scope) }, { additionalProperties: false }),
  output: Signed({ ...centroidCore, ...head, caveats: Caveats }),
  mcp: 'full',
  run: (ctx, input) => embeddingCentroid(ctx, input),
});

export const regionSimilarityOp = defineOperation({
  name: 'region_similarity',
  method: 'POST',
  path: '/v1/region_similarity',
  summary: "Cosine similarity in [-1, 1] of two regions' embedding centroids",
  description:
    `Use to ask how alike two areas are (a field and its neighbour, two towns, this year's and last year's footprint with tslot). a and b are regions: ${REGION_HELP} Each side is computed as embedding_centroid computes it (max_cells per side). ` +
    'Answer {status, algorithm: embedding_cosine_similarity@1, similarity = a·b/(|a||b|) of the two centroids (1 identical direction, −1 opposite), a and b (each {status, centroid, centroid_cid, fact_cids, counts, region, sampling}), caveats, receipt}. ' +
    `A side without a vector: status inconclusive (reason side_inconclusive, similarity null) with both sides' counts. ${SIGNED}`,
  tags: ['read'],
  input: Type.Object({ a: Region, b: Region, encoder: Encoder, tslot: TslotIn, max_cells: MaxCells, scope: Type.Optional(Scope) }, { additionalProperties: false }),
  output: Signed({
    status: Status,
    reason: Type.Optional(Type.Literal('side_inconclusive')),
    detail: Type.Optional(Type.String()),
    ...head,
    centroid_algorithm: Type.String(),
    similarity: Nullable(Type.Number({ minimum: -1, maximum: 1 })),
    a: Side,
    b: Side,
    caveats: Caveats,
  }),
  mcp: 'full',
  run: (ctx, input) => regionSimilarity(ctx, input),
});

export const embeddingDiversityOp = defineOperation({
  name: 'embedding_diversity',
  method: 'POST',
  path: '/v1/embedding_diversity',
  summary: "Mean pairwise cosine distance in [0, 2] of a region's embeddings: how heterogeneous the landscape is",
  description:
    `Use for habitat or landscape heterogeneity (0: every cell alike; 1: unrelated on average; up to 2: opposite). ${REGION_HELP} ` +
    `D = (2/(n(n−1))) Σ_{i<j} (1 − cos(e_i, e_j)) over every pair of the n vectors; above ${DIVERSITY_EXACT_MAX} vectors, over every pair of the ${DIVERSITY_EXACT_MAX} whose BLAKE3("embedding_diversity@1|<seed>|<fact_cid>") is smallest (seed default 0: the same request gives the same answer). ` +
    'Answer {status, algorithm: embedding_diversity@1, diversity, vector_sample {method all | seeded_subset, threshold, seed, vectors_available, vectors_used, pairs}, fact_cids (the vectors used), counts, region, sampling, caveats, receipt}. ' +
    `Fewer than 2 vectors: status inconclusive (reason too_few_vectors, diversity null). ${SIGNED} Next: neighborhood_consistency to find the odd cells out.`,
  tags: ['read'],
  input: Type.Object(
    {
      ...regionProps,
      encoder: Encoder,
      tslot: TslotIn,
      max_cells: MaxCells,
      seed: Type.Integer({ minimum: 0, maximum: 2 ** 32 - 1, default: 0, description: `which subset is drawn above ${DIVERSITY_EXACT_MAX} vectors` }),
      scope: Type.Optional(Scope),
    },
    { additionalProperties: false },
  ),
  output: Signed({
    status: Status,
    reason: Type.Optional(Type.Literal('too_few_vectors')),
    detail: Type.Optional(Type.String()),
    ...head,
    diversity: Nullable(Type.Number({ minimum: 0, maximum: 2 })),
    vector_sample: Closed({
      method: OneOf(['all', 'seeded_subset'] as const),
      threshold: Type.Integer(),
      seed: Type.Integer(),
      vectors_available: Type.Integer({ minimum: 0 }),
      vectors_used: Type.Integer({ minimum: 0 }),
      pairs: Type.Integer({ minimum: 0 }),
    }),
    fact_cids: Type.Array(Type.String(), { description: 'the vectors used, ascending' }),
    ...regionRead,
    caveats: Caveats,
  }),
  mcp: 'full',
  run: (ctx, input) => embeddingDiversity(ctx, input),
});

const Neighbour = Closed({
  cell: Type.String(),
  fact_cid: Nullable(Type.String({ description: "the neighbour's vector; null when it has none" })),
  tslot: Nullable(Type.Integer()),
  cosine: Nullable(Type.Number({ minimum: -1, maximum: 1, description: 'cos(e_cell, e_neighbour); null without both vectors' })),
});

export const neighborhoodConsistencyOp = defineOperation({
  name: 'neighborhood_consistency',
  method: 'POST',
  path: '/v1/neighborhood_consistency',
  summary: "How alike a cell's embedding is to its 8 neighbours' (mean cosine), and its outlier score",
  description:
    'Use to tell whether a cell is unlike its surroundings (a new building, a clearing, a bad pixel). Give one of cell64, lat with lng, or place. ' +
    'C = mean over the neighbours with a vector of cos(e_cell, e_k), over the 8 grid neighbours N, S, E, W, NE, NW, SE, SW (1/8 Σ when all 8 have one); outlier_score = 1 − C. ' +
    'Answer {status, algorithm: neighborhood_consistency@1, cell, lat, lng, fact_cid, tslot, consistency in [-1, 1], outlier_score in [0, 2], neighbours [{cell, fact_cid, tslot, cosine}] (null where no vector), neighbours_total, neighbours_with_vector, caveats, receipt}. ' +
    `The cell without a vector, or no neighbour with one: status inconclusive (reason no_vector_at_cell | no_neighbour_vectors, scores null). ${SIGNED} Next: embedding_diversity over the surrounding area.`,
  tags: ['read'],
  input: Type.Object(
    {
      cell64: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'a cell64 (or cell token)' })),
      lat: Type.Optional(Type.Number({ minimum: -90, maximum: 90, description: 'WGS-84 latitude (with lng)' })),
      lng: Type.Optional(Type.Number({ minimum: -180, maximum: 180, description: 'WGS-84 longitude (with lat)' })),
      place: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'a place name, resolved by locate to one cell' })),
      encoder: Encoder,
      tslot: TslotIn,
      scope: Type.Optional(Scope),
    },
    { additionalProperties: false },
  ),
  output: Signed({
    status: Status,
    reason: Type.Optional(OneOf(['no_vector_at_cell', 'no_neighbour_vectors'] as const)),
    detail: Type.Optional(Type.String()),
    ...head,
    cell: Type.String(),
    lat: Type.Number({ description: 'the cell centre' }),
    lng: Type.Number(),
    place: Type.Optional(
      Closed({ query: Type.String(), label: Type.String(), lat: Type.Number(), lng: Type.Number(), via: Type.String(), is_high_confidence: Type.Boolean() }, 'the place as resolved (not signed)'),
    ),
    fact_cid: Nullable(Type.String({ description: "the cell's own vector" })),
    tslot: Nullable(Type.Integer()),
    consistency: Nullable(Type.Number({ minimum: -1, maximum: 1 })),
    outlier_score: Nullable(Type.Number({ minimum: 0, maximum: 2 })),
    neighbours: Type.Array(Neighbour, { description: 'in the order N, S, E, W, NE, NW, SE, SW (fewer at a pole)' }),
    neighbours_total: Type.Integer(),
    neighbours_with_vector: Type.Integer(),
    caveats: Caveats,
  }),
  mcp: 'full',
  run: (ctx, input) => neighborhoodConsistency(ctx, input),
});

export const EMBEDDING_ANALYTICS_OPS: readonly Operation[] = [embeddingCentroidOp, regionSimilarityOp, embeddingDiversityOp, neighborhoodConsistencyOp];
