/**
 * query_region (docs/reads.md, "Region aggregates: query_region"): aggregates over STORED facts in
 * an area. Nothing is materialized — a region aggregate must not fan out to upstreams — so cells
 * without a stored fact simply do not count, and an area with no data answers `value: null,
 * n_cells: 0` (never a zero value).
 */
import { cellCenter, isCell } from '../../protocol/cell64.js';
import { requireCell } from '../../protocol/cell-token.js';
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import type { BandEntry } from '../../registry/registry.js';
import type { StoredFact } from '../../store/contract.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import type { Receipt, Scope } from '../../protocol/receipt.js';
import { READ_CONCURRENCY, evenPick, mapLimit, requireBand, round, usableValue } from './common.js';
import { requestScope } from '../scopes/request.js';
import { cellAt, contains, indexRange, latLngIndex, parseBboxArray, sampleArea, type Area } from './geometry.js';

export const AGGS = ['mean', 'median', 'p90', 'vector_centroid'] as const;
export type Agg = (typeof AGGS)[number];
export const REGION_MAX_CELLS = 1024;
export const REGION_DEFAULT_CELLS = 256;
/** Prefix queries one walk may issue before it is not worth it (each is an index seek). */
const MAX_PREFIX_QUERIES = 64;
/** Latitude bands (1 024 rows, about 10 km each) a walk may scan; the row cap bounds the cost either way. */
const MAX_BAND_PREFIXES = 16;

/** A region query, as the operation's schema admits it (types, bounds, enums and defaults applied). */
export interface QueryRegionRequest {
  geometry?: string;
  bbox?: number[];
  bands: string[];
  agg?: Agg;
  max_cells: number;
  scope?: Scope;
}

export interface BandAggregate {
  agg: Agg;
  /** Number (mean/median/p90), number[] (vector_centroid), or null when no stored cell has a value. */
  value: number | number[] | null;
  n_cells: number;
  fact_cids: string[];
  /** Cells whose stored fact for the band is a signed absence (not counted in the value). */
  n_absences: number;
}

export interface QueryRegionResult {
  by_band: Record<string, BandAggregate>;
  cells_considered: number;
  cells_with_data: string[];
  is_exhaustive: boolean;
  sampling: { method: string; max_cells: number; prefix_walk?: { prefixes: number; stored_cells_found: number; truncated: boolean } };
  caveats: string[];
  receipt: Receipt;
}

/** The aggregate a band gets: the explicit `agg` if compatible, else the kind's default. */
function aggFor(band: BandEntry, agg: Agg | undefined): Agg {
  if (band.value_kind === 'categorical') {
    throw invalidArgument('agg', `${agg ?? 'mean'} is undefined for categorical band ${band.key} (class ids are labels, not quantities)`);
  }
  if (band.value_kind === 'vector') {
    if (agg !== undefined && agg !== 'vector_centroid') throw invalidArgument('agg', `${agg} is undefined for vector band ${band.key}; use vector_centroid`);
    return 'vector_centroid';
  }
  if (agg === 'vector_centroid') throw invalidArgument('agg', `vector_centroid needs a vector band; ${band.key} is scalar`);
  return agg ?? 'mean';
}

/** mean, median, p90 (linear interpolation between closest ranks) over finite numbers. */
export function scalarAgg(values: readonly number[], agg: 'mean' | 'median' | 'p90'): number | null {
  if (values.length === 0) return null;
  if (agg === 'mean') return round(values.reduce((a, b) => a + b, 0) / values.length);
  const s = [...values].sort((a, b) => a - b);
  const q = agg === 'median' ? 0.5 : 0.9;
  const pos = q * (s.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return round(s[lo] + (s[hi] - s[lo]) * (pos - lo));
}

/** Elementwise mean of equal-length vectors (not normalised). */
export function centroid(vectors: readonly number[][]): number[] | null {
  if (vectors.length === 0) return null;
  const out = new Array<number>(vectors[0].length).fill(0);
  for (const v of vectors) for (let i = 0; i < out.length; i++) out[i] += v[i];
  return out.map((x) => round(x / vectors.length));
}

/** Cells named by `geometry`: one cell64 (or cell token), or `cells:c1,c2,…`. */
function geometryCells(g: string, prefix: string): string[] {
  if (!g.startsWith('cells:')) {
    return [requireCell(prefix, g, 'geometry')];
  }
  const list = g
    .slice(6)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (list.length === 0) throw invalidArgument('geometry', 'cells: list is empty');
  if (list.length > REGION_MAX_CELLS) throw invalidArgument('geometry', `at most ${REGION_MAX_CELLS} cells (got ${list.length})`);
  list.forEach((c, i) => {
    if (!isCell(c)) throw new SvcError('invalid_cell', `geometry[${i}]: ${JSON.stringify(String(c).slice(0, 64))} is not a cell64`, { field: `geometry[${i}]` });
  });
  return [...new Set(list)];
}

/**
 * Stored cells inside the area, found by cell-text prefix (a prefix selects a latitude band:
 * three lanes pin one row and a 65 536-column block, two lanes pin 1 024 rows). Used only when a
 * handful of seeks cover the area; the scan is capped at the deployment's per-walk row limit.
 * Only cells with a fact visible to `scope` (null: unscoped) are walked.
 */
export async function walkStored(ctx: ServiceContext, area: Area, scope: Scope | null = null): Promise<{ cells: string[]; prefixes: number; truncated: boolean } | null> {
  const r = indexRange(area);
  const rows = r.lat1 - r.lat0 + 1;
  const blocks = (r.lng1 >> 16) - (r.lng0 >> 16) + 1;
  const prefixes: string[] = [];
  if (rows * blocks <= MAX_PREFIX_QUERIES) {
    for (let la = r.lat1; la >= r.lat0; la--)
      for (let bl = r.lng0 >> 16; bl <= r.lng1 >> 16; bl++)
        prefixes.push(
          cellAt(la, bl << 16)
            .split('.')
            .slice(0, 3)
            .join('.') + '.',
        );
  } else if ((r.lat1 >> 10) - (r.lat0 >> 10) + 1 <= MAX_BAND_PREFIXES) {
    for (let g = r.lat1 >> 10; g >= r.lat0 >> 10; g--)
      prefixes.push(
        cellAt(g << 10, 0)
          .split('.')
          .slice(0, 2)
          .join('.') + '.',
      );
  } else {
    return null;
  }
  let remaining = ctx.config.scanCellLimit;
  let truncated = false;
  const found: string[] = [];
  for (const p of prefixes) {
    if (remaining <= 0) {
      truncated = true;
      break;
    }
    const res = await ctx.store.cellsWithPrefix(p, remaining, scope);
    remaining -= res.cells.length;
    truncated ||= res.truncated;
    for (const c of res.cells) {
      const { latq, lngq } = latLngIndex(c);
      if (latq < r.lat0 || latq > r.lat1 || lngq < r.lng0 || lngq > r.lng1) continue;
      const { lat, lng } = cellCenter(c);
      if (contains(area, lat, lng)) found.push(c);
    }
  }
  return { cells: found, prefixes: prefixes.length, truncated };
}

/** The cells a region read covers in an area: at most `maxCells`, deterministic (areaCells). */
export interface AreaCells {
  cells: string[];
  /** True when `cells` is every cell of the area that can hold a stored fact. */
  exhaustive: boolean;
  sampling: QueryRegionResult['sampling'];
  /** Lattice cells in the area's bounding box (an upper bound on the cells inside). */
  bbox_cells: number;
}

/**
 * At most `maxCells` cells of `area`, the same cells for the same request: the area sampled on
 * the lattice (sampleArea) and, when that is not exhaustive and a few prefix seeks cover the
 * area, the store walked for every stored cell inside (visible to `scope`), so a sample does not
 * miss the cells that hold data.
 */
export async function areaCells(ctx: ServiceContext, area: Area, maxCells: number, scope: Scope | null): Promise<AreaCells> {
  const s = sampleArea(area, maxCells);
  let cells = s.cells;
  let exhaustive = s.exhaustive;
  const sampling: QueryRegionResult['sampling'] = { method: s.method, max_cells: maxCells };
  if (!s.exhaustive) {
    const walk = await walkStored(ctx, area, scope);
    if (walk) {
      sampling.prefix_walk = { prefixes: walk.prefixes, stored_cells_found: walk.cells.length, truncated: walk.truncated };
      if (!walk.truncated) {
        // Every stored cell inside the area is known: the grid adds only cells without data.
        cells = evenPick(walk.cells, maxCells);
        exhaustive = walk.cells.length <= maxCells;
        sampling.method = 'prefix_walk';
      } else {
        const known = evenPick(walk.cells, maxCells);
        cells = [...new Set([...known, ...s.cells])].slice(0, maxCells);
        sampling.method = 'prefix_walk+grid';
      }
    }
  }
  return { cells, exhaustive, sampling, bbox_cells: s.bbox_cells };
}

/** Aggregate stored facts of `bands` over a cell set or a sampled bbox. */
export async function queryRegion(ctx: ServiceContext, req: QueryRegionRequest): Promise<QueryRegionResult> {
  if ((req.geometry === undefined) === (req.bbox === undefined)) throw invalidArgument(req.geometry === undefined ? 'geometry' : 'bbox', 'give exactly one of geometry, bbox');
  const maxCells = req.max_cells;
  const bands = [...new Set(req.bands)].map((b, i) => requireBand(ctx, b, `bands[${i}]`));
  const aggs = new Map(bands.map((b) => [b.key, aggFor(b, req.agg)]));
  const scope = requestScope(req.scope);
  const caveats: string[] = ['Aggregates cover stored facts only: nothing is fetched, and cells without a stored fact do not count.'];

  let cells: string[];
  let exhaustive: boolean;
  let sampling: QueryRegionResult['sampling'];
  if (req.geometry !== undefined) {
    cells = geometryCells(req.geometry, ctx.config.prefix);
    exhaustive = true;
    sampling = { method: 'given', max_cells: maxCells };
  } else {
    const picked = await areaCells(ctx, parseBboxArray(req.bbox), maxCells, scope ?? null);
    cells = picked.cells;
    exhaustive = picked.exhaustive;
    sampling = picked.sampling;
    if (!exhaustive) caveats.push(`The box holds about ${picked.bbox_cells} cells; ${cells.length} were read (deterministic sample).`);
  }

  const reads = await mapLimit(cells, READ_CONCURRENCY, (cell) => ctx.store.latest({ cell, bands: bands.map((b) => b.key), scope: scope ?? null }));
  const by_band: Record<string, BandAggregate> = {};
  const usedCells = new Set<string>();
  const usedCids: string[] = [];
  let firstFact: StoredFact | undefined;
  for (const b of bands) {
    const agg = aggs.get(b.key)!;
    const nums: number[] = [];
    const vecs: number[][] = [];
    const cids: string[] = [];
    let absences = 0;
    let unusable = 0;
    cells.forEach((cell, i) => {
      const f = reads[i]!.find((x) => x.band === b.key);
      if (!f) return;
      if (f.kind === 'absence') {
        absences++;
        return;
      }
      const v = usableValue(f, b);
      if (v === undefined) {
        unusable++;
        return;
      }
      if (Array.isArray(v)) vecs.push(v);
      else nums.push(v);
      cids.push(f.fact_cid);
      usedCells.add(cell);
      firstFact ??= f;
    });
    if (unusable > 0) caveats.push(`${b.key}: ${unusable} stored value(s) did not match the band's ${b.value_kind} shape and were left out.`);
    const value = agg === 'vector_centroid' ? centroid(vecs) : scalarAgg(nums, agg);
    by_band[b.key] = { agg, value, n_cells: cids.length, fact_cids: cids, n_absences: absences };
    usedCids.push(...cids);
  }
  const cellsWithData = cells.filter((c) => usedCells.has(c));
  // merkle_proof proves fact_cids[0], so it must be the proof of the first cid listed.
  const receipt = issueReceipt(ctx, 'query_region', cellsWithData, usedCids, {
    scope,
    merkle_proof: firstFact?.fact_cid === usedCids[0] ? firstFact?.proof : undefined,
    cost: { credits: 0, was_cached: false },
  });
  return { by_band, cells_considered: cells.length, cells_with_data: cellsWithData, is_exhaustive: exhaustive, sampling, caveats, receipt };
}
