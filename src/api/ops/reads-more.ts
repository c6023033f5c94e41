/**
 * Read operations beyond recall (docs/reads.md): multi-cell recall, region aggregates, single
 * facts and series, comparisons, the cell view and claim verification. Each entry is thin: the
 * schema rejects malformed input early (naming the field) and the primitive owns the semantics.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from '../../primitives/context/context.js';
import { cellView } from '../../primitives/reads/cell-view.js';
import { compare, compareBands, PREDICATE_KINDS } from '../../primitives/reads/compare.js';
import { MAX_RECALL_MANY, POLYGON_DEFAULT_BUDGET_MS, POLYGON_DEFAULT_CELLS, POLYGON_MAX_CELLS, recallMany, recallPolygon } from '../../primitives/reads/many.js';
import { AGGS, REGION_DEFAULT_CELLS, REGION_MAX_CELLS, queryRegion } from '../../primitives/reads/region.js';
import { diff, fetchFact, trajectory } from '../../primitives/reads/series.js';
import type { SceneThumbnail } from '../../primitives/pictures/scene.js';
import { CLAIM_AGGS, CLAIM_OPS, verifyClaim } from '../../primitives/verify/verify-claim.js';
import { defineOperation, type Operation } from '../operations.js';
import { runOperation } from '../routes/operations.js';
import { Bands, Cell, OneOf, Scope, Tslot } from '../schemas/inputs.js';
import { AnyValue, Closed, FactMetaMap, MaterializeNote, Nullable, ServedFact, Signed, SignedResponse } from '../schemas/responses.js';
import { FieldsAnswer, FieldsUnavailable } from './fields.js';
import { Include, recallFields } from './read.js';
import { SCENE_DESCRIPTION, SCENE_HEADERS, SCENE_SUMMARY, scenePngOp } from './scene.js';

const cell64Only = Type.String({ minLength: 1, maxLength: 64, description: 'cell64 (e.g. defi.zb64a.cike.zfa2f)' });
const Band = Type.String({ minLength: 1, maxLength: 100, description: 'namespaced band key (see /v1/bands)' });
const Window = Type.Array(Type.Integer({ minimum: 0 }), { minItems: 2, maxItems: 2, description: '[start, end] inclusive, Unix seconds' });

const Strings = Type.Array(Type.String());
const Caveats = Type.Array(Type.String(), { description: 'what the answer does not say' });
const Num = Type.Number();
const NumOrVector = Type.Union([Type.Number(), Type.Array(Type.Number())]);

/** The per-cell answers of the multi-cell reads: one SignedResponse per cell, and every fact once. */
const manyFields = {
  cells: Type.Array(Type.String(), { description: 'the cells read, in order (cell64)' }),
  by_cell: Type.Record(Type.String(), SignedResponse, { description: 'per cell: its SignedResponse with its own receipt' }),
  merged_facts: Type.Array(ServedFact, { description: 'every fact once, in cell order; no aggregate signature' }),
  fact_meta: Type.Optional(FactMetaMap),
};

export const recallManyOp = defineOperation({
  name: 'recall_many',
  method: 'POST',
  path: '/v1/recall_many',
  summary: 'recall over up to 256 cells: one independently signed receipt per cell',
  description: 'by_cell.<cell> is a SignedResponse with its own receipt and bands_already_attested_at_cell; merged_facts[] is a flattened convenience list with no aggregate signature.',
  tags: ['read'],
  input: Type.Object({ cells: Type.Array(Cell, { minItems: 1, maxItems: MAX_RECALL_MANY }), ...recallFields, include: Type.Optional(Include) }, { additionalProperties: false }),
  output: Closed(manyFields),
  mcp: 'core',
  run: (ctx, input, call) => recallMany(ctx, input, { deadline: call.deadline, onProgress: call.progress }),
});

export const recallPolygonOp = defineOperation({
  name: 'recall_polygon',
  method: 'POST',
  path: '/v1/recall_polygon',
  summary: 'recall over the cells of a polygon (deterministic sample), under a time budget',
  description:
    'Give exactly one of cells, polygon (GeoJSON Polygon/MultiPolygon as locate returns it) or polygon_bbox. When budget_ms ends no new cell starts: cells not done are listed in pending[] and converged is false.',
  tags: ['read'],
  input: Type.Object(
    {
      cells: Type.Optional(Type.Array(Cell, { minItems: 1, maxItems: POLYGON_MAX_CELLS })),
      polygon: Type.Optional(
        Type.Object({ type: OneOf(['Polygon', 'MultiPolygon'] as const), coordinates: Type.Array(Type.Unknown()) }, { description: 'GeoJSON Polygon or MultiPolygon ([lng, lat] positions)' }),
      ),
      polygon_bbox: Type.Optional(
        Type.Object({ min_lat: Type.Number(), min_lng: Type.Number(), max_lat: Type.Number(), max_lng: Type.Number(), source: Type.Optional(Type.String()) }, { additionalProperties: false }),
      ),
      max_cells: Type.Integer({ minimum: 1, maximum: POLYGON_MAX_CELLS, default: POLYGON_DEFAULT_CELLS, description: 'cells sampled inside the polygon' }),
      budget_ms: Type.Integer({ minimum: 1, maximum: 600_000, default: POLYGON_DEFAULT_BUDGET_MS, description: 'time budget in ms' }),
      include: Type.Optional(Type.Array(OneOf(['ftw_fields', 'edges', 'freshness'] as const), { maxItems: 3 })),
      ...recallFields,
    },
    { additionalProperties: false },
  ),
  output: Closed({
    ...manyFields,
    cells: Type.Array(Type.String(), { description: 'the cells read before the budget ended' }),
    cells_sampled: Type.Array(Type.String(), { description: 'every cell selected (read or pending)' }),
    is_exhaustive: Type.Boolean({ description: 'true when every cell of the area was selected' }),
    sampling: Closed({ method: Type.String(), max_cells: Type.Integer(), bbox_cells: Type.Optional(Type.Integer()), area: Type.String() }),
    pending: Type.Array(Type.String(), { description: 'cells not started when the budget ended' }),
    converged: Type.Boolean(),
    budget_ms: Type.Integer(),
    elapsed_ms: Type.Integer(),
    ftw_fields: Type.Optional(
      Type.Union([FieldsAnswer, FieldsUnavailable], {
        description: 'include ftw_fields: the field polygons of the area (as POST /v1/field_boundaries answers, with their own receipt), or why they are missing',
      }),
    ),
  }),
  mcp: 'core',
  run: (ctx, input, call) => recallPolygon(ctx, input, { deadline: call.deadline, onProgress: call.progress }),
});

export const queryRegionOp = defineOperation({
  name: 'query_region',
  method: 'POST',
  path: '/v1/query_region',
  summary: 'Aggregate stored facts over an area (mean, median, p90, vector_centroid)',
  description:
    'Stored facts only (nothing is fetched). A bbox is sampled on a grid of at most max_cells cells and, where a few prefix seeks cover it, the store is walked for every stored cell inside. No data → value null with n_cells 0.',
  tags: ['read'],
  input: Type.Object(
    {
      geometry: Type.Optional(Type.String({ minLength: 1, maxLength: 30_000, description: 'a cell64, or "cells:c1,c2,…"' })),
      bbox: Type.Optional(Type.Array(Type.Number(), { minItems: 4, maxItems: 4, description: '[west, south, east, north] degrees' })),
      bands: { ...Bands, minItems: 1 },
      agg: Type.Optional(OneOf(AGGS, { description: 'default: mean for scalar bands, vector_centroid for vector bands' })),
      max_cells: Type.Integer({ minimum: 1, maximum: REGION_MAX_CELLS, default: REGION_DEFAULT_CELLS, description: 'ignored when geometry is given' }),
      scope: Type.Optional(Scope),
    },
    { additionalProperties: false },
  ),
  output: Signed({
    by_band: Type.Record(
      Type.String(),
      Closed({
        agg: OneOf(AGGS),
        value: Nullable(NumOrVector),
        n_cells: Type.Integer({ description: 'cells whose stored value counted' }),
        fact_cids: Strings,
        n_absences: Type.Integer({ description: 'cells whose stored fact is a signed absence (not counted)' }),
      }),
    ),
    cells_considered: Type.Integer(),
    cells_with_data: Strings,
    is_exhaustive: Type.Boolean(),
    sampling: Closed({
      method: Type.String(),
      max_cells: Type.Integer(),
      prefix_walk: Type.Optional(Closed({ prefixes: Type.Integer(), stored_cells_found: Type.Integer(), truncated: Type.Boolean() })),
    }),
    caveats: Caveats,
  }),
  mcp: 'core',
  run: (ctx, input) => queryRegion(ctx, input),
});

export const fetchOp = defineOperation({
  name: 'fetch',
  method: 'POST',
  path: '/v1/fetch',
  summary: 'One fact by fact_cid, or by cell + band (+ tslot), materializing on a miss',
  description: "Give cid, or cell with band. Without tslot the band's current slot is wanted. The receipt carries the fact's merkle_proof.",
  tags: ['read'],
  input: Type.Object(
    {
      cid: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'fact_cid' })),
      cell: Type.Optional(Cell),
      band: Type.Optional(Band),
      tslot: Type.Optional(Tslot),
      scope: Type.Optional(Scope),
    },
    { additionalProperties: false },
  ),
  output: Signed({ fact: Nullable(ServedFact), materialize_notes: Type.Array(MaterializeNote), caveats: Caveats }),
  mcp: 'core',
  run: (ctx, input, call) => fetchFact(ctx, input, { deadline: call.deadline, authorization: call.headers.authorization }),
});

export const trajectoryOp = defineOperation({
  name: 'trajectory',
  method: 'POST',
  path: '/v1/trajectory',
  summary: 'Stored time series of one band at one cell over a window (never fetches)',
  tags: ['read'],
  input: Type.Object({ cell: Cell, band: Band, window: Window, scope: Type.Optional(Scope) }, { additionalProperties: false }),
  output: Signed({
    cell: Type.String(),
    band: Type.String(),
    unit: Type.String(),
    tempo: Type.String(),
    window: Type.Array(Type.Integer()),
    tslot_range: Type.Array(Type.Integer(), { description: '[first, last] tslot of the window' }),
    points: Type.Array(
      Closed({
        tslot: Type.Integer(),
        start_unix: Type.Integer(),
        end_unix: Nullable(Type.Integer()),
        kind: Type.String(),
        value: AnyValue,
        fact_cid: Type.String(),
        absence_reason: Type.Optional(Type.String()),
      }),
    ),
    n_points: Type.Integer(),
    truncated: Type.Boolean(),
    caveats: Caveats,
  }),
  mcp: 'core',
  run: (ctx, input) => trajectory(ctx, input),
});

/** One side of a diff. */
const DiffSide = Closed({ tslot: Type.Integer(), fact_cid: Nullable(Type.String()), kind: Nullable(Type.String()), value: AnyValue, note: Type.Optional(Type.String()) });

export const diffOp = defineOperation({
  name: 'diff',
  method: 'POST',
  path: '/v1/diff',
  summary: 'Signed delta (b − a) of one band between two tslots; a missing side is null, never 0',
  tags: ['read'],
  input: Type.Object({ cell: Cell, band: Band, tslot_a: Tslot, tslot_b: Tslot, scope: Type.Optional(Scope) }, { additionalProperties: false }),
  output: Signed({
    cell: Type.String(),
    band: Type.String(),
    unit: Type.String(),
    value_kind: Type.String(),
    a: DiffSide,
    b: DiffSide,
    delta: Nullable(NumOrVector),
    percent_change: Type.Optional(Nullable(Num)),
    l2: Type.Optional(Num),
    cosine: Type.Optional(Nullable(Num)),
    changed: Type.Optional(Type.Boolean({ description: 'categorical bands: whether the class changed' })),
    notes: Strings,
  }),
  mcp: 'full',
  run: (ctx, input) => diff(ctx, input),
});

export const compareOp = defineOperation({
  name: 'compare',
  method: 'POST',
  path: '/v1/compare',
  summary: 'Compare two cells over the bands both carry (cosine for vectors, else mean scalar delta)',
  tags: ['read'],
  input: Type.Object(
    { a: Cell, b: Cell, family: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'band namespace, e.g. indices' })), scope: Type.Optional(Scope) },
    { additionalProperties: false },
  ),
  output: Signed({
    a: Type.String(),
    b: Type.String(),
    family: Type.Optional(Type.String()),
    skipped_bands: Strings,
    score: Nullable(Num),
    score_kind: Nullable(OneOf(['cosine', 'mean_scalar_delta'] as const)),
    cosines: Type.Optional(Type.Record(Type.String(), Num)),
    deltas: Type.Optional(Type.Record(Type.String(), Num)),
  }),
  mcp: 'core',
  run: (ctx, input) => compare(ctx, input),
});

/** One reading of compare_bands. */
const Reading = Closed({ band: Type.String(), tslot: Nullable(Type.Integer()), fact_cid: Nullable(Type.String()), kind: Nullable(Type.String()), value: AnyValue });

export const compareBandsOp = defineOperation({
  name: 'compare_bands',
  method: 'POST',
  path: '/v1/compare_bands',
  summary: 'Two band readings at one cell: delta and percent change, or cosine and L2 for one vector band at two tslots',
  description: 'Two different vector bands are refused with HTTP 400. delta and receipt are always present (delta null when not computable).',
  tags: ['read'],
  input: Type.Object(
    {
      cell: Type.Optional(Cell),
      cell64: Type.Optional(Cell),
      a: Band,
      b: Band,
      tslot_a: Type.Optional(Tslot),
      tslot_b: Type.Optional(Tslot),
      predicate: Type.Optional(Closed({ kind: OneOf(PREDICATE_KINDS), threshold: Type.Number() })),
      scope: Type.Optional(Scope),
    },
    { additionalProperties: false },
  ),
  output: Signed({
    cell: Type.String(),
    a: Reading,
    b: Reading,
    delta: Nullable(Num),
    percent_change: Nullable(Num),
    cosine: Nullable(Num),
    l2: Nullable(Num),
    predicate_verdict: Nullable(Closed({ holds: Type.Boolean(), kind: OneOf(PREDICATE_KINDS), threshold: Num, decidable: Type.Boolean(), reason: Type.Optional(Type.String()) })),
    notes: Strings,
  }),
  mcp: 'full',
  run: (ctx, input) => compareBands(ctx, input),
});

export const cellViewOp = defineOperation({
  name: 'cell_view',
  method: 'GET',
  path: '/v1/cell_view',
  summary: 'Cell view: centre, bbox, neighbours, latest fact per attested band, counts (also GET /v1/cells/:cell64)',
  tags: ['read'],
  input: Type.Object({ cell64: cell64Only }, { additionalProperties: false }),
  output: Signed({
    cell64: Type.String(),
    center: Closed({ lat: Num, lng: Num }),
    bbox: Closed({ min_lat: Num, min_lng: Num, max_lat: Num, max_lng: Num }),
    pitch_m: Closed({ ns_m: Num, ew_m: Num }, 'cell size in metres (north-south, east-west)'),
    neighbours: Strings,
    bands_attested: Strings,
    bands: Type.Array(
      Closed({
        band: Type.String(),
        title: Nullable(Type.String()),
        value_kind: Nullable(Type.String()),
        provenance_class: Type.String(),
        tslot: Type.Integer(),
        fact: ServedFact,
      }),
    ),
    counts: Closed({ bands: Type.Integer(), absences: Type.Integer(), versions: Type.Integer(), versions_truncated: Type.Boolean() }),
    caveats: Caveats,
  }),
  mcp: 'full',
  run: (ctx, input) => cellView(ctx, input.cell64),
});

export const verifyOp = defineOperation({
  name: 'verify',
  method: 'POST',
  path: '/v1/verify',
  summary: 'Decide a structured claim about one band at one cell against signed facts',
  description:
    'Exactly one of claim.tslot or claim.window. NaN or a type mismatch → claim_undecidable. No evidence → holds false with an explanation. mode fast reads stored facts; resolve may materialize the current slot.',
  tags: ['verify'],
  input: Type.Object(
    {
      claim: Closed({
        band: Band,
        op: OneOf(CLAIM_OPS),
        value: Type.Unknown({ description: 'number, vector (array), set (array, for in/ni) or class id; required even for exists/absent (ignored there)' }),
        tslot: Type.Optional(Tslot),
        window: Type.Optional(Window),
        agg: OneOf(CLAIM_AGGS, { default: 'any', description: 'aggregation over the window' }),
      }),
      cell: Cell,
      mode: OneOf(['fast', 'resolve'] as const, { default: 'fast' }),
      scope: Type.Optional(Scope),
    },
    { additionalProperties: false },
  ),
  output: Signed({
    holds: Type.Boolean(),
    evidence_cids: Type.Array(Type.String(), { description: 'the facts the verdict rests on' }),
    explanation: Type.String(),
    mode: OneOf(['fast', 'resolve'] as const),
    materialize_notes: Type.Array(MaterializeNote),
  }),
  mcp: 'core',
  run: (ctx, input, call) => verifyClaim(ctx, input, { deadline: call.deadline }),
});

/** Every operation of this file, in table order. */
export const READS_MORE_OPS: readonly Operation[] = [recallManyOp, recallPolygonOp, queryRegionOp, fetchOp, trajectoryOp, diffOp, compareOp, compareBandsOp, cellViewOp, verifyOp];

/**
 * REST routes with a path parameter (the table's REST adapter passes only the query string):
 * GET /v1/cells/:cell64 runs the cell_view operation and GET /v1/cells/:cell64/scene.png the
 * cell_scene_rgb primitive. Register with `await cellRoutes(app, ctx)`.
 */
export async function cellRoutes(app: FastifyInstance, ctx: ServiceContext): Promise<void> {
  app.get(
    '/v1/cells/:cell64',
    {
      schema: {
        summary: cellViewOp.summary,
        tags: cellViewOp.tags,
        params: { type: 'object', required: ['cell64'], properties: { cell64: { type: 'string', minLength: 1, maxLength: 64 } } },
      },
    },
    async (req) => runOperation(ctx, cellViewOp, { cell64: (req.params as { cell64: string }).cell64 }, req.headers, 'rest'),
  );

  app.get(
    '/v1/cells/:cell64/scene.png',
    {
      schema: {
        summary: SCENE_SUMMARY,
        description: `${SCENE_DESCRIPTION} The scene is named by the headers ${Object.values(SCENE_HEADERS).join(', ')}.`,
        tags: ['read'],
        produces: ['image/png'],
        params: { type: 'object', required: ['cell64'], properties: { cell64: { type: 'string', minLength: 1, maxLength: 64 } } },
        response: { 200: { description: 'PNG image, 8-bit RGB', type: 'string' } },
      },
    },
    async (req, reply) => {
      const t = (await runOperation(ctx, scenePngOp, { cell64: (req.params as { cell64: string }).cell64 }, req.headers, 'rest')) as SceneThumbnail;
      return (
        reply
          .type('image/png')
          // A scene's pixels never change; a newer scene for the cell shows up within the hour.
          .header('Cache-Control', 'public, max-age=3600')
          .header(SCENE_HEADERS.id, t.scene.id)
          .header(SCENE_HEADERS.datetime, t.scene.datetime)
          .header(SCENE_HEADERS.cloudCover, t.scene.cloud_cover === null ? 'unknown' : String(t.scene.cloud_cover))
          .header(SCENE_HEADERS.epsg, t.scene.epsg === null ? 'unknown' : String(t.scene.epsg))
          .send(t.png)
      );
    },
  );
}
