/**
 * recall_many and recall_polygon (docs/reads.md, "Several cells: recall_many and
 * recall_polygon"): recall over several cells with one
 * independently signed receipt per cell. The flattened `merged_facts` carries no aggregate
 * signature on purpose: each fact keeps its own receipt, and each cell's receipt covers exactly
 * that cell's facts, so a consumer can drop cells without invalidating anything.
 */
import { invalidArgument } from '../../protocol/errors.js';
import type { ServiceContext } from '../context/context.js';
import type { ServedFact } from '../facts/facts-view.js';
import { provenanceFilter, recall, resolveBands, resolveCell, type RecallInclude, type RecallRequest, type SignedResponse } from './recall.js';
import { READ_CONCURRENCY, counting, mapLimit, type ProgressFn } from './common.js';
import { requestScope } from '../scopes/request.js';
import { contains, parsePolygon, parsePolygonBbox, sampleArea, type Area } from './geometry.js';
import { fieldsForRecallArea, type FieldsAnswer, type FieldsUnavailable } from '../fields/field-boundaries.js';

/** Cells per recall_many call (docs/security.md, "Fixed bounds per request"). */
export const MAX_RECALL_MANY = 256;
/** Cells a recall_polygon may read: sampling cap default and hard cap. */
export const POLYGON_DEFAULT_CELLS = 64;
export const POLYGON_MAX_CELLS = 256;
export const POLYGON_DEFAULT_BUDGET_MS = 10_000;

export type RecallFields = Omit<RecallRequest, 'cell'>;
/** One cell's SignedResponse inside a multi-cell answer (no ETag: there is no per-cell conditional read). */
export type CellResponse = SignedResponse;

export interface RecallManyRequest extends RecallFields {
  cells: string[];
}

export interface RecallManyResult {
  cells: string[];
  by_cell: Record<string, CellResponse>;
  merged_facts: ServedFact[];
}

/** Validate the request-wide recall fields once, so a bad band fails fast instead of per cell. */
function precheck(ctx: ServiceContext, req: RecallFields): void {
  resolveBands(ctx, req.bands);
  provenanceFilter(req.provenance, req.deterministic);
  requestScope(req.scope);
}

/**
 * Resolve `cells` (cell64 or place names) in order, de-duplicated; errors name `cells[i]`. The
 * count is checked here too: internal callers (entity recall) pass lists no schema bounded.
 */
async function resolveCells(ctx: ServiceContext, cells: readonly string[], max: number): Promise<{ cells: string[]; places: Map<string, SignedResponse['place']> }> {
  if (cells.length === 0) throw invalidArgument('cells', `expected 1..${max} cells`);
  if (cells.length > max) throw invalidArgument('cells', `at most ${max} cells per call (got ${cells.length})`);
  const out: string[] = [];
  const places = new Map<string, SignedResponse['place']>();
  for (let i = 0; i < cells.length; i++) {
    const r = await resolveCell(ctx, cells[i], `cells[${i}]`);
    if (!out.includes(r.cell)) out.push(r.cell);
    if (r.place) places.set(r.cell, r.place);
  }
  return { cells: out, places };
}

/** One cell's response, with the place name it was asked by (each recall response is its own object). */
function withPlace(r: SignedResponse, place?: SignedResponse['place']): CellResponse {
  if (place) r.place = place;
  return r;
}

function merge(byCell: Record<string, CellResponse>, order: readonly string[]): ServedFact[] {
  const seen = new Set<string>();
  const out: ServedFact[] = [];
  for (const c of order)
    for (const f of byCell[c]?.facts ?? []) {
      if (seen.has(f.fact_cid)) continue;
      seen.add(f.fact_cid);
      out.push(f);
    }
  return out;
}

function recallFields(req: RecallFields): RecallFields {
  const { bands, tslot, as_of_tslot, as_of_signed_at, provenance, deterministic, scope, include } = req;
  return { bands, tslot, as_of_tslot, as_of_signed_at, provenance, deterministic, scope, include };
}

/** recall over up to 256 cells with bounded concurrency; one receipt per cell. */
export async function recallMany(ctx: ServiceContext, req: RecallManyRequest, opts: { deadline?: number; onProgress?: ProgressFn } = {}): Promise<RecallManyResult> {
  precheck(ctx, req);
  const { cells, places } = await resolveCells(ctx, req.cells, MAX_RECALL_MANY);
  const fields = recallFields(req);
  const read = (cell: string) => recall(ctx, { ...fields, cell }, { primitive: 'recall_many', deadline: opts.deadline });
  const results = await mapLimit(cells, READ_CONCURRENCY, counting(read, cells.length, opts.onProgress, 'cells read'));
  const by_cell: Record<string, CellResponse> = {};
  cells.forEach((c, i) => {
    by_cell[c] = withPlace(results[i]!, places.get(c));
  });
  return { cells, by_cell, merged_facts: merge(by_cell, cells) };
}

/** A polygon recall, as the operation's schema admits it (types, bounds and defaults applied). */
export interface RecallPolygonRequest extends Omit<RecallFields, 'include'> {
  cells?: string[];
  /** GeoJSON Polygon or MultiPolygon: its rings are checked by parsePolygon. */
  polygon?: { type: 'Polygon' | 'MultiPolygon'; coordinates: unknown[] };
  /** Its ranges are checked by parsePolygonBbox. */
  polygon_bbox?: { min_lat: number; min_lng: number; max_lat: number; max_lng: number; source?: string };
  max_cells: number;
  budget_ms: number;
  include?: ReadonlyArray<RecallInclude | 'ftw_fields'>;
}

export interface RecallPolygonResult extends RecallManyResult {
  cells_sampled: string[];
  is_exhaustive: boolean;
  sampling: { method: string; max_cells: number; bbox_cells?: number; area: string };
  pending: string[];
  converged: boolean;
  budget_ms: number;
  elapsed_ms: number;
  /** include ftw_fields: the Fields of The World polygons of the area, with their own receipt. */
  ftw_fields?: FieldsAnswer | FieldsUnavailable;
}

/**
 * Cells inside a polygon (or the given cells), read under a time budget: when `budget_ms` ends,
 * no new cell is started; cells not done come back in `pending[]` with `converged: false`.
 */
export async function recallPolygon(ctx: ServiceContext, req: RecallPolygonRequest, opts: { deadline?: number; onProgress?: ProgressFn } = {}): Promise<RecallPolygonResult> {
  const started = Date.now();
  const given = (['cells', 'polygon', 'polygon_bbox'] as const).filter((k) => req[k] !== undefined);
  if (given.length !== 1) throw invalidArgument(given.length === 0 ? 'polygon' : given[1], 'give exactly one of cells, polygon, polygon_bbox');
  const { max_cells: maxCells, budget_ms: budgetMs } = req;
  const include = req.include ?? [];
  const fields = recallFields({ ...req, include: include.filter((x): x is RecallInclude => x !== 'ftw_fields') });
  if (fields.include?.length === 0) delete fields.include;
  precheck(ctx, fields);

  let cells: string[];
  let places = new Map<string, SignedResponse['place']>();
  let exhaustive: boolean;
  let sampling: RecallPolygonResult['sampling'];
  let area: Area | undefined;
  if (req.cells !== undefined) {
    // The caller's own cell list is read as given: it is the whole selection, so exhaustive.
    ({ cells, places } = await resolveCells(ctx, req.cells, POLYGON_MAX_CELLS));
    exhaustive = true;
    sampling = { method: 'given', max_cells: maxCells, area: 'cells' };
  } else {
    area = req.polygon !== undefined ? parsePolygon(req.polygon) : parsePolygonBbox(req.polygon_bbox);
    const s = sampleArea(area, maxCells);
    cells = s.cells;
    exhaustive = s.exhaustive;
    sampling = { method: s.method, max_cells: maxCells, bbox_cells: s.bbox_cells, area: area.source };
  }

  // include ftw_fields: read beside the cells, over the area's box, kept inside its polygon.
  const a = area;
  const ftw = !include.includes('ftw_fields')
    ? undefined
    : a
      ? fieldsForRecallArea(ctx, a.bbox, { deadline: opts.deadline, keep: a.source === 'bbox' ? undefined : (lat, lng) => contains(a, lat, lng) })
      : Promise.resolve<FieldsUnavailable>({
          status: 'unavailable',
          code: 'invalid_argument',
          reason: 'cells: a list of cells selects no area, so no field-boundary polygons were read or signed; give polygon or polygon_bbox',
        });
  ftw?.catch(() => {}); // awaited below; this only keeps an early failure from counting as unhandled

  const budgetEnd = started + budgetMs;
  // Upstream work inside a started cell also stops at the budget, so the answer returns on time.
  const deadline = Math.min(opts.deadline ?? Infinity, budgetEnd);
  const results = await mapLimit(
    cells,
    READ_CONCURRENCY,
    counting((cell: string) => recall(ctx, { ...fields, cell }, { primitive: 'recall_polygon', deadline }), cells.length, opts.onProgress, 'cells read'),
    () => Date.now() < budgetEnd,
  );
  const by_cell: Record<string, CellResponse> = {};
  const pending: string[] = [];
  cells.forEach((c, i) => {
    const r = results[i];
    if (r) by_cell[c] = withPlace(r, places.get(c));
    else pending.push(c);
  });
  const done = cells.filter((c) => by_cell[c]);
  const out: RecallPolygonResult = {
    cells: done,
    cells_sampled: cells,
    is_exhaustive: exhaustive,
    sampling,
    by_cell,
    merged_facts: merge(by_cell, done),
    pending,
    converged: pending.length === 0,
    budget_ms: budgetMs,
    elapsed_ms: Date.now() - started,
  };
  if (ftw) out.ftw_fields = await ftw;
  return out;
}
