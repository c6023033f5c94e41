/**
 * Where the embedding analytics read (docs/embeddings.md, "Analytics over regions"): a region
 * named by exactly one of place, polygon, bbox or cells is turned into at most `max_cells` cells
 * the way query_region does it (areaCells: the lattice sampled, the store walked for stored
 * cells), and each cell's newest STORED primary vector of the encoder is read — public facts, or
 * the request scope's when one is named. Nothing is fetched: a region never fans out upstream.
 */
import { requireCell } from '../../protocol/cell-token.js';
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import type { Scope } from '../../protocol/receipt.js';
import type { BandEntry } from '../../registry/registry.js';
import type { StoredFact } from '../../store/contract.js';
import type { ServiceContext } from '../context/context.js';
import { resolveRegion as resolvePlaceRegion } from '../rasters/archetype-region.js';
import { READ_CONCURRENCY, mapLimit, newestPerTslot, norm, requireBand, usableValue } from '../reads/common.js';
import { parseBboxArray, parsePolygon, parsePolygonBbox, type Area } from '../reads/geometry.js';
import { REGION_DEFAULT_CELLS, REGION_MAX_CELLS, areaCells, type AreaCells } from '../reads/region.js';
import { BINARY_SUFFIX, isBinaryBand } from './vector-index.js';

export const DEFAULT_ENCODER = 'geotessera';
/** Cells one region reads: a cell list of more is refused; an area is sampled down to max_cells. */
export const ANALYTICS_MAX_CELLS = REGION_MAX_CELLS;
export const ANALYTICS_DEFAULT_CELLS = REGION_DEFAULT_CELLS;

/** A region as the operations' schemas admit it: exactly one of place, polygon, bbox, cells. */
export interface RegionInput {
  place?: string;
  radius_m?: number;
  polygon?: { type: 'Polygon' | 'MultiPolygon'; coordinates: unknown[] };
  bbox?: number[];
  cells?: string[];
}

export interface RegionBlock {
  kind: 'place' | 'polygon' | 'bbox' | 'cells';
  /** [west, south, east, north] of the area read (absent for a cell list). */
  bbox?: number[];
  place?: { query: string; label: string; lat: number; lng: number; via: string; is_high_confidence: boolean; radius_m?: number };
}

export interface RegionCells {
  region: RegionBlock;
  cells: string[];
  is_exhaustive: boolean;
  sampling: AreaCells['sampling'];
  caveats: string[];
}

/** A real-valued vector band (an encoder), or a typed refusal naming the field. */
export function encoderBand(ctx: ServiceContext, key: unknown, field = 'encoder'): BandEntry {
  const band = requireBand(ctx, key, field);
  const encoders = ctx.registry.bandList.filter((b) => b.value_kind === 'vector' && !isBinaryBand(b.key)).map((b) => b.key);
  if (band.value_kind !== 'vector') throw invalidArgument(field, `${band.key} is a ${band.value_kind} band, not an embedding; encoders: ${encoders.join(', ')}`);
  if (isBinaryBand(band.key)) {
    const real = band.key.slice(0, -BINARY_SUFFIX.length);
    throw invalidArgument(field, `${band.key} holds binary sign codes for Hamming search, not an embedding: use ${real} (encoders: ${encoders.join(', ')})`);
  }
  if (band.dim === undefined) throw invalidArgument(field, `${band.key} declares no dimension`);
  return band;
}

const boxOf = (a: Area) => [a.bbox.min_lng, a.bbox.min_lat, a.bbox.max_lng, a.bbox.max_lat];

/** The cells a region reads: a cell list whole (≤ ANALYTICS_MAX_CELLS), an area sampled to maxCells. */
export async function regionCells(ctx: ServiceContext, req: RegionInput, maxCells: number, scope: Scope | null, prefix = ''): Promise<RegionCells> {
  const given = (['place', 'polygon', 'bbox', 'cells'] as const).filter((k) => req[k] !== undefined);
  if (given.length !== 1) {
    const names = (given.length > 0 ? given : ['place', 'polygon', 'bbox', 'cells']).map((k) => prefix + k);
    throw new SvcError('invalid_argument', `${names.join(', ')}: give exactly one of place, polygon, bbox, cells${prefix ? ` in ${prefix.slice(0, -1)}` : ''}`, {
      field: names[given.length > 1 ? 1 : 0],
      fields: names,
    });
  }
  if (req.radius_m !== undefined && req.place === undefined) throw invalidArgument(`${prefix}radius_m`, 'only with place');
  if (req.cells !== undefined) {
    if (req.cells.length === 0) throw invalidArgument(`${prefix}cells`, `expected 1..${ANALYTICS_MAX_CELLS} cells`);
    if (req.cells.length > ANALYTICS_MAX_CELLS)
      throw invalidArgument(`${prefix}cells`, `at most ${ANALYTICS_MAX_CELLS} cells per region (got ${req.cells.length}); split the list or give a polygon or bbox, which is sampled`);
    const cells = [...new Set(req.cells.map((c, i) => requireCell(ctx.config.prefix, c, `${prefix}cells[${i}]`)))];
    return { region: { kind: 'cells' }, cells, is_exhaustive: true, sampling: { method: 'given', max_cells: maxCells }, caveats: [] };
  }
  let area: Area;
  let region: RegionBlock;
  if (req.place !== undefined) {
    const r = await resolvePlaceRegion(ctx, { place: req.place, radius_m: req.radius_m });
    const s = r.signed;
    area =
      s.kind === 'bbox' ? parsePolygonBbox(s, `${prefix}place`) : s.kind === 'polygon' ? parsePolygon({ type: 'MultiPolygon', coordinates: s.polygons }, `${prefix}place`) : parsePolygonBbox(r.bbox);
    region = { kind: 'place', bbox: boxOf(area), ...(r.place ? { place: r.place } : {}) };
  } else if (req.polygon !== undefined) {
    area = parsePolygon(req.polygon, `${prefix}polygon`);
    region = { kind: 'polygon', bbox: boxOf(area) };
  } else {
    area = parseBboxArray(req.bbox, `${prefix}bbox`);
    region = { kind: 'bbox', bbox: boxOf(area) };
  }
  const picked = await areaCells(ctx, area, maxCells, scope);
  const caveats = picked.exhaustive
    ? []
    : [`${prefix ? `${prefix.slice(0, -1)}: ` : ''}the area holds about ${picked.bbox_cells} cells; ${picked.cells.length} were read (max_cells ${maxCells}, deterministic sample).`];
  return { region, cells: picked.cells, is_exhaustive: picked.exhaustive, sampling: picked.sampling, caveats };
}

/** A cell's vector as read: the fact it comes from and its values. */
export interface CellVector {
  cell: string;
  fact_cid: string;
  tslot: number;
  values: number[];
  fact: StoredFact;
}

export interface VectorRead {
  /** Cells with a usable vector, in the order the cells were given. */
  vectors: CellVector[];
  /** Per input cell: its vector, or undefined. */
  byCell: Array<CellVector | undefined>;
  /** Cells whose newest fact of the band is a signed absence (and no older primary vector). */
  absences: number;
  /** Cells whose stored value is not a non-zero vector of the band's dimension. */
  unusable: number;
}

/**
 * The newest stored primary vector of `band` at each cell (the highest tslot, or exactly `tslot`;
 * the newest version of a slot wins), visible to `scope` (null: public facts only). A zero
 * vector has no direction and is counted as unusable.
 */
export async function readVectors(ctx: ServiceContext, band: BandEntry, cells: readonly string[], scope: Scope | null, tslot?: number): Promise<VectorRead> {
  type One = { v?: CellVector; absence?: boolean; unusable?: boolean };
  const asVector = (f: StoredFact): CellVector | undefined => {
    const v = usableValue(f, band);
    if (!Array.isArray(v) || !(norm(v) > 0)) return undefined;
    return { cell: f.cell, fact_cid: f.fact_cid, tslot: f.tslot, values: v, fact: f };
  };
  const one = async (cell: string): Promise<One> => {
    const [f] = await ctx.store.latest({ cell, bands: [band.key], scope, ...(tslot !== undefined ? { tslot } : {}) });
    if (!f) return {};
    if (f.kind === 'primary') {
      const v = asVector(f);
      return v ? { v } : { unusable: true };
    }
    // A signed absence (or a derivative) in the newest slot: an older slot may hold the newest primary vector.
    if (tslot === undefined && f.tslot > 0) {
      const older = newestPerTslot(await ctx.store.history({ cell, bands: [band.key], scope, tslot_to: f.tslot - 1 }));
      for (let i = older.length - 1; i >= 0; i--) {
        if (older[i].kind !== 'primary') continue;
        const v = asVector(older[i]);
        if (v) return { v };
      }
    }
    return f.kind === 'absence' ? { absence: true } : { unusable: true };
  };
  const results = await mapLimit(cells, READ_CONCURRENCY, one);
  const byCell = results.map((r) => r?.v);
  return {
    vectors: byCell.filter((v): v is CellVector => v !== undefined),
    byCell,
    absences: results.filter((r) => r?.absence).length,
    unusable: results.filter((r) => r?.unusable).length,
  };
}

/** Distinct tslots of the vectors, ascending. */
export function tslotsOf(vectors: readonly CellVector[]): number[] {
  return [...new Set(vectors.map((v) => v.tslot))].sort((a, b) => a - b);
}

/** The caveat of an answer combining vectors of several slots (no tslot asked). */
export function mixedSlotCaveat(tslots: readonly number[]): string[] {
  return tslots.length > 1 ? [`The vectors come from ${tslots.length} different tslots (${tslots.join(', ')}): each cell's newest was used; pass tslot to compare one vintage.`] : [];
}
