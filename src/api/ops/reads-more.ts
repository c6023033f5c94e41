/**
 * Read operations beyond recall (docs/reads.md): multi-cell recall, region aggregates, single
 * facts and series, comparisons, the cell view and claim verification. Each entry is thin: the
 * schema rejects malformed input early (naming the field) and the primitive owns the semantics.
 */
import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from '../../primitives/context/context.js';
import { cellView } from '../../primitives/reads/cell-view.js';
import { compare, compareBands, PREDICATE_KINDS } from '../../primitives/reads/compare.js';
import { MAX_RECALL_MANY, POLYGON_MAX_CELLS, recallMany, recallPolygon } from '../../primitives/reads/many.js';
import { AGGS, REGION_MAX_CELLS, queryRegion } from '../../primitives/reads/region.js';
import { diff, fetchFact, trajectory } from '../../primitives/reads/series.js';
import type { SceneThumbnail } from '../../primitives/pictures/scene.js';
import { CLAIM_AGGS, CLAIM_OPS, verifyClaim } from '../../primitives/verify/verify-claim.js';
import { bandsSchema, cellSchema, scopeSchema, tslotSchema, type Operation } from '../operations.js';
import { runOperation } from '../routes/operations.js';
import { includeSchema, recallFields } from './read.js';
import { SCENE_DESCRIPTION, SCENE_HEADERS, SCENE_SUMMARY, scenePngOp } from './scene.js';

const cell64Only = { type: 'string', minLength: 1, maxLength: 64, description: 'cell64 (e.g. defi.zb64a.cike.zfa2f)' } as const;
const bandSchema = { type: 'string', minLength: 1, maxLength: 100, description: 'namespaced band key (see /v1/bands)' } as const;
const windowSchema = {
  type: 'array', minItems: 2, maxItems: 2, items: { type: 'integer', minimum: 0 },
  description: '[start, end] inclusive, Unix seconds',
} as const;

export const recallManyOp: Operation = {
  name: 'recall_many',
  method: 'POST',
  path: '/v1/recall_many',
  summary: 'recall over up to 256 cells: one independently signed receipt per cell',
  description: 'by_cell.<cell> is a SignedResponse with its own receipt and bands_already_attested_at_cell; merged_facts[] is a flattened convenience list with no aggregate signature.',
  tags: ['read'],
  input: {
    type: 'object',
    required: ['cells'],
    additionalProperties: false,
    properties: {
      cells: { type: 'array', minItems: 1, maxItems: MAX_RECALL_MANY, items: cellSchema },
      ...recallFields,
      include: includeSchema,
    },
  },
  mcp: 'core',
  run: (ctx, input, call) => recallMany(ctx, input, { deadline: call.deadline }),
};

export const recallPolygonOp: Operation = {
  name: 'recall_polygon',
  method: 'POST',
  path: '/v1/recall_polygon',
  summary: 'recall over the cells of a polygon (deterministic sample), under a time budget',
  description: 'Give exactly one of cells, polygon (GeoJSON Polygon/MultiPolygon as locate returns it) or polygon_bbox. When budget_ms ends no new cell starts: cells not done are listed in pending[] and converged is false.',
  tags: ['read'],
  input: {
    type: 'object',
    additionalProperties: false,
    properties: {
      cells: { type: 'array', minItems: 1, maxItems: POLYGON_MAX_CELLS, items: cellSchema },
      polygon: {
        type: 'object', required: ['type', 'coordinates'],
        properties: { type: { type: 'string', enum: ['Polygon', 'MultiPolygon'] }, coordinates: { type: 'array' } },
        description: 'GeoJSON Polygon or MultiPolygon ([lng, lat] positions)',
      },
      polygon_bbox: {
        type: 'object', required: ['min_lat', 'min_lng', 'max_lat', 'max_lng'],
        properties: { min_lat: { type: 'number' }, min_lng: { type: 'number' }, max_lat: { type: 'number' }, max_lng: { type: 'number' }, source: { type: 'string' } },
        additionalProperties: false,
      },
      max_cells: { type: 'integer', minimum: 1, maximum: POLYGON_MAX_CELLS, description: 'cells sampled inside the polygon (default 64)' },
      budget_ms: { type: 'integer', minimum: 1, maximum: 600_000, description: 'time budget in ms (default 10000)' },
      include: { type: 'array', items: { type: 'string', enum: ['ftw_fields', 'edges', 'freshness'] }, maxItems: 3 },
      ...recallFields,
    },
  },
  mcp: 'core',
  run: (ctx, input, call) => recallPolygon(ctx, input, { deadline: call.deadline }),
};

export const queryRegionOp: Operation = {
  name: 'query_region',
  method: 'POST',
  path: '/v1/query_region',
  summary: 'Aggregate stored facts over an area (mean, median, p90, vector_centroid)',
  description: 'Stored facts only (nothing is fetched). A bbox is sampled on a grid of at most max_cells cells and, where a few prefix seeks cover it, the store is walked for every stored cell inside. No data → value null with n_cells 0.',
  tags: ['read'],
  input: {
    type: 'object',
    required: ['bands'],
    additionalProperties: false,
    properties: {
      geometry: { type: 'string', minLength: 1, maxLength: 30_000, description: 'a cell64, or "cells:c1,c2,…"' },
      bbox: { type: 'array', minItems: 4, maxItems: 4, items: { type: 'number' }, description: '[west, south, east, north] degrees' },
      bands: { ...bandsSchema, minItems: 1 },
      agg: { type: 'string', enum: [...AGGS], description: 'default: mean for scalar bands, vector_centroid for vector bands' },
      max_cells: { type: 'integer', minimum: 1, maximum: REGION_MAX_CELLS, description: 'default 256; ignored when geometry is given' },
      scope: scopeSchema,
    },
  },
  mcp: 'core',
  run: (ctx, input) => queryRegion(ctx, input),
};

export const fetchOp: Operation = {
  name: 'fetch',
  method: 'POST',
  path: '/v1/fetch',
  summary: 'One fact by fact_cid, or by cell + band (+ tslot), materializing on a miss',
  description: 'Give cid, or cell with band. Without tslot the band\'s current slot is wanted. The receipt carries the fact\'s merkle_proof.',
  tags: ['read'],
  input: {
    type: 'object',
    additionalProperties: false,
    properties: {
      cid: { type: 'string', minLength: 1, maxLength: 100, description: 'fact_cid' },
      cell: cellSchema,
      band: bandSchema,
      tslot: tslotSchema,
      scope: scopeSchema,
    },
  },
  mcp: 'core',
  run: (ctx, input, call) => fetchFact(ctx, input, { deadline: call.deadline, authorization: call.headers.authorization }),
};

export const trajectoryOp: Operation = {
  name: 'trajectory',
  method: 'POST',
  path: '/v1/trajectory',
  summary: 'Stored time series of one band at one cell over a window (never fetches)',
  tags: ['read'],
  input: {
    type: 'object',
    required: ['cell', 'band', 'window'],
    additionalProperties: false,
    properties: { cell: cellSchema, band: bandSchema, window: windowSchema, scope: scopeSchema },
  },
  mcp: 'core',
  run: (ctx, input) => trajectory(ctx, input),
};

export const diffOp: Operation = {
  name: 'diff',
  method: 'POST',
  path: '/v1/diff',
  summary: 'Signed delta (b − a) of one band between two tslots; a missing side is null, never 0',
  tags: ['read'],
  input: {
    type: 'object',
    required: ['cell', 'band', 'tslot_a', 'tslot_b'],
    additionalProperties: false,
    properties: { cell: cellSchema, band: bandSchema, tslot_a: tslotSchema, tslot_b: tslotSchema, scope: scopeSchema },
  },
  mcp: 'full',
  run: (ctx, input) => diff(ctx, input),
};

export const compareOp: Operation = {
  name: 'compare',
  method: 'POST',
  path: '/v1/compare',
  summary: 'Compare two cells over the bands both carry (cosine for vectors, else mean scalar delta)',
  tags: ['read'],
  input: {
    type: 'object',
    required: ['a', 'b'],
    additionalProperties: false,
    properties: { a: cellSchema, b: cellSchema, family: { type: 'string', minLength: 1, maxLength: 100, description: 'band namespace, e.g. indices' }, scope: scopeSchema },
  },
  mcp: 'core',
  run: (ctx, input) => compare(ctx, input),
};

export const compareBandsOp: Operation = {
  name: 'compare_bands',
  method: 'POST',
  path: '/v1/compare_bands',
  summary: 'Two band readings at one cell: delta and percent change, or cosine and L2 for one vector band at two tslots',
  description: 'Two different vector bands are refused with HTTP 400. delta and receipt are always present (delta null when not computable).',
  tags: ['read'],
  input: {
    type: 'object',
    required: ['a', 'b'],
    additionalProperties: false,
    properties: {
      cell: cellSchema,
      cell64: cellSchema,
      a: bandSchema,
      b: bandSchema,
      tslot_a: tslotSchema,
      tslot_b: tslotSchema,
      predicate: {
        type: 'object', required: ['kind', 'threshold'], additionalProperties: false,
        properties: { kind: { type: 'string', enum: [...PREDICATE_KINDS] }, threshold: { type: 'number' } },
      },
      scope: scopeSchema,
    },
  },
  mcp: 'full',
  run: (ctx, input) => compareBands(ctx, input),
};

export const cellViewOp: Operation = {
  name: 'cell_view',
  method: 'GET',
  path: '/v1/cell_view',
  summary: 'Cell view: centre, bbox, neighbours, latest fact per attested band, counts (also GET /v1/cells/:cell64)',
  tags: ['read'],
  input: { type: 'object', required: ['cell64'], additionalProperties: false, properties: { cell64: cell64Only } },
  mcp: 'full',
  run: (ctx, input) => cellView(ctx, input.cell64),
};

export const verifyOp: Operation = {
  name: 'verify',
  method: 'POST',
  path: '/v1/verify',
  summary: 'Decide a structured claim about one band at one cell against signed facts',
  description: 'Exactly one of claim.tslot or claim.window. NaN or a type mismatch → claim_undecidable. No evidence → holds false with an explanation. mode fast reads stored facts; resolve may materialize the current slot.',
  tags: ['verify'],
  input: {
    type: 'object',
    required: ['claim', 'cell'],
    additionalProperties: false,
    properties: {
      claim: {
        type: 'object',
        required: ['band', 'op', 'value'],
        additionalProperties: false,
        properties: {
          band: bandSchema,
          op: { type: 'string', enum: [...CLAIM_OPS] },
          value: { description: 'number, vector (array), set (array, for in/ni) or class id; required even for exists/absent (ignored there)' },
          tslot: tslotSchema,
          window: windowSchema,
          agg: { type: 'string', enum: [...CLAIM_AGGS], description: 'aggregation over the window (default any)' },
        },
      },
      cell: cellSchema,
      mode: { type: 'string', enum: ['fast', 'resolve'], description: 'default fast' },
      scope: scopeSchema,
    },
  },
  mcp: 'core',
  run: (ctx, input, call) => verifyClaim(ctx, input, { deadline: call.deadline }),
};

/** Every operation of this file, in table order. */
export const READS_MORE_OPS: readonly Operation[] = [
  recallManyOp, recallPolygonOp, queryRegionOp, fetchOp, trajectoryOp, diffOp, compareOp, compareBandsOp, cellViewOp, verifyOp,
];

/**
 * REST routes with a path parameter (the table's REST adapter passes only the query string):
 * GET /v1/cells/:cell64 runs the cell_view operation and GET /v1/cells/:cell64/scene.png the
 * cell_scene_rgb primitive. Register with `await cellRoutes(app, ctx)`.
 */
export async function cellRoutes(app: FastifyInstance, ctx: ServiceContext): Promise<void> {
  app.get('/v1/cells/:cell64', {
    schema: {
      summary: cellViewOp.summary,
      tags: cellViewOp.tags,
      params: { type: 'object', required: ['cell64'], properties: { cell64: { type: 'string', minLength: 1, maxLength: 64 } } },
    },
  }, async (req) => runOperation(ctx, cellViewOp, { cell64: (req.params as { cell64: string }).cell64 }, req.headers, 'rest'));

  app.get('/v1/cells/:cell64/scene.png', {
    schema: {
      summary: SCENE_SUMMARY,
      description: `${SCENE_DESCRIPTION} The scene is named by the headers ${Object.values(SCENE_HEADERS).join(', ')}.`,
      tags: ['read'],
      produces: ['image/png'],
      params: { type: 'object', required: ['cell64'], properties: { cell64: { type: 'string', minLength: 1, maxLength: 64 } } },
      response: { 200: { description: 'PNG image, 8-bit RGB', type: 'string' } },
    },
  }, async (req, reply) => {
    const t = await runOperation(ctx, scenePngOp, { cell64: (req.params as { cell64: string }).cell64 }, req.headers, 'rest') as SceneThumbnail;
    return reply
      .type('image/png')
      // A scene's pixels never change; a newer scene for the cell shows up within the hour.
      .header('Cache-Control', 'public, max-age=3600')
      .header(SCENE_HEADERS.id, t.scene.id)
      .header(SCENE_HEADERS.datetime, t.scene.datetime)
      .header(SCENE_HEADERS.cloudCover, t.scene.cloud_cover === null ? 'unknown' : String(t.scene.cloud_cover))
      .header(SCENE_HEADERS.epsg, t.scene.epsg === null ? 'unknown' : String(t.scene.epsg))
      .send(t.png);
  });
}
