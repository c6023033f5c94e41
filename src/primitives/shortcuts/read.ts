/**
 * Place shortcuts (docs/shortcuts.md): locate → recall → aggregate. A point reads the locate cell;
 * a place with extent reads cells sampled evenly from its polygon (16 by default for the
 * single-topic shortcuts, 1 for /v1/at). Every per-cell read is an ordinary recall (it materializes
 * on a miss), and one envelope receipt signs every cell read and every fact_cid returned, so the
 * statistics can be checked against signed inputs.
 */
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import { checkTslot } from '../../protocol/tslot.js';
import type { Receipt } from '../../protocol/receipt.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import type { ServedFact } from '../facts/facts-view.js';
import type { MaterializeNote } from '../context/materialize-note.js';
import { recall, resolveBands, type RecallResult } from '../reads/recall.js';
import { READ_CONCURRENCY, mapLimit } from '../reads/common.js';
import { bandStats, parseNCells, sampleCells, samplingCaveats, type BandStats, type Reading } from './aggregate.js';
import { hasExtent, placeBlock, placeCaveats, resolvePlace, type LocateFn, type PlaceBlock, type PlaceInput } from './place.js';

export type PlaceShortcutName = 'at' | 'ndvi' | 'air' | 'lst' | 'soil' | 'water' | 'forest' | 'weather' | 'elevation' | 'buildings';

export interface PlaceShortcutSpec {
  name: PlaceShortcutName;
  bands: readonly string[];
  /** Cells read on a place with extent when n_cells is not given. */
  defaultCells: number;
  /** Caller may choose bands (band, bands). */
  chooseBands?: boolean;
  /** Accepts a cell64 instead of a place. */
  cell64?: boolean;
  mcp: 'core' | 'full';
  summary: string;
  /**
   * Where a band's fact at a cell is a signed absence, another band read at that cell instead
   * (both facts are returned and signed by the envelope); `why` is the caveat's explanation.
   */
  fallback?: Readonly<Record<string, { band: string; why: string }>>;
}

/** The band sets of docs/shortcuts.md, "Place shortcuts". */
export const PLACE_SHORTCUTS: Readonly<Record<PlaceShortcutName, PlaceShortcutSpec>> = {
  at: {
    name: 'at',
    bands: ['indices.ndvi', 'copdem30m.elevation_mean', 'landcover.esa_worldcover_2021', 'weather.temperature_2m'],
    defaultCells: 1,
    chooseBands: true,
    mcp: 'core',
    summary: 'What is at a place: vegetation, elevation, land cover, recent weather (or the bands you name)',
  },
  ndvi: { name: 'ndvi', bands: ['indices.ndvi'], defaultCells: 16, mcp: 'core', summary: 'Vegetation index (NDVI, Sentinel-2, 10 m) at a place' },
  air: {
    name: 'air',
    bands: ['air.pm2_5', 'air.nitrogen_dioxide', 'air.ozone'],
    defaultCells: 16,
    mcp: 'core',
    summary: 'Air quality at a place: fine particles, nitrogen dioxide, ozone (reanalysis, about 0.4 degrees native)',
  },
  lst: { name: 'lst', bands: ['lst.day_8day', 'lst.night_8day'], defaultCells: 16, mcp: 'full', summary: 'Land-surface temperature day and night (MODIS 8-day, 1 km) at a place' },
  soil: {
    name: 'soil',
    bands: ['soil.bdod_0_30cm', 'soil.clay_0_30cm', 'soil.nitrogen_0_30cm', 'soil.phh2o_0_30cm', 'soil.sand_0_30cm', 'soil.soc_0_30cm'],
    defaultCells: 16,
    mcp: 'full',
    summary: 'Topsoil 0-30 cm (SoilGrids, 250 m) at a place: bulk density, clay, nitrogen, pH, sand, organic carbon',
  },
  water: {
    name: 'water',
    bands: ['water.gsw_recurrence', 'water.gsw_occurrence', 's1.vv_db'],
    defaultCells: 16,
    mcp: 'full',
    summary: 'Surface water at a place: JRC recurrence and occurrence, Sentinel-1 VV backscatter',
  },
  forest: {
    name: 'forest',
    bands: ['forest.treecover2000', 'forest.lossyear', 'forest.gain', 'landcover.esa_worldcover_2021'],
    defaultCells: 16,
    mcp: 'full',
    summary: 'Forest at a place: tree cover 2000, loss year, gain (Hansen GFC) and land cover 2021',
  },
  weather: {
    name: 'weather',
    bands: ['weather.temperature_2m', 'weather.precipitation', 'weather.wind_speed_10m', 'weather.relative_humidity_2m', 'weather.cloud_cover'],
    defaultCells: 16,
    mcp: 'core',
    summary: 'Current weather at a place: temperature, precipitation, wind, humidity, cloud cover',
  },
  elevation: {
    name: 'elevation',
    bands: ['copdem30m.elevation_mean'],
    defaultCells: 16,
    cell64: true,
    mcp: 'full',
    summary: 'Elevation (Copernicus DEM) at a place or cell; over open water, GEBCO 2024 topobathymetry (negative below sea level)',
    fallback: {
      'copdem30m.elevation_mean': {
        band: 'gebco.elevation_m',
        why: 'the Copernicus DEM has no land value there (open water), so the GEBCO 2024 grid answers: 15 arc-seconds (about 460 m), metres relative to mean sea level, negative over the sea floor',
      },
    },
  },
  buildings: {
    name: 'buildings',
    bands: ['overture.building_count_1km', 'overture.building_footprint_fraction_1km', 'overture.place_count_1km', 'overture.road_length_km_1km'],
    defaultCells: 16,
    mcp: 'full',
    summary: 'Buildings, their footprint share, points of interest and road length in the square kilometre around a place (Overture Maps)',
  },
};

/** A place shortcut's input, as its schema admits it (POST: bands a CSV string or an array; GET: a CSV string). */
export interface PlaceShortcutInput extends PlaceInput {
  band?: string;
  bands?: string | string[];
  tslot?: number;
  /** Left untyped by the schemas: anything but an integer 1..64 is HTTP 400 (parseNCells). */
  n_cells?: unknown;
}

/** A shortcut answer: a SignedResponse plus the place, and with extent a polygon block and stats. */
export interface PlaceShortcutResult {
  shortcut: PlaceShortcutName;
  cell: string;
  mode: 'point' | 'sampled';
  bands: string[];
  facts: ServedFact[];
  receipt: Receipt;
  bands_already_attested_at_cell: string[];
  caveats: string[];
  materialize_notes: MaterializeNote[];
  place: PlaceBlock;
  polygon?: { bbox: { min_lat: number; min_lng: number; max_lat: number; max_lng: number }; source: string; cells_sampled: string[]; n_cells: number; cells_pending: string[] };
  stats?: Record<string, BandStats>;
}

/** band + bands (CSV or array), de-duplicated in order; undefined when neither is given. */
export function parseBandList(band: string | undefined, bands: string | readonly string[] | undefined): string[] | undefined {
  const out: string[] = [];
  if (band !== undefined) {
    if (band.trim() === '') throw invalidArgument('band', 'expected a band key (see /v1/bands)');
    out.push(band.trim());
  }
  if (bands !== undefined) {
    for (const b of typeof bands === 'string' ? bands.split(',') : bands) if (b.trim() !== '') out.push(b.trim());
  }
  if (band === undefined && bands === undefined) return undefined;
  if (out.length === 0) throw invalidArgument('bands', 'no band key given');
  if (out.length > 64) throw invalidArgument('bands', 'at most 64 bands');
  return [...new Set(out)];
}

/**
 * Static bands have the single tslot 0, so a caller's tslot applies to the others only; the
 * static ones are read without it rather than refused (the shortcut mixes tempos by design).
 */
function tslotGroups(ctx: ServiceContext, bands: string[], tslot: number | undefined): Array<{ bands: string[]; tslot?: number }> {
  if (tslot === undefined) return [{ bands }];
  const stat = bands.filter((b) => ctx.registry.bands.get(b)?.tempo === 'static');
  const rest = bands.filter((b) => !stat.includes(b));
  return [...(rest.length ? [{ bands: rest, tslot }] : []), ...(stat.length ? [{ bands: stat }] : [])];
}

/** Read one cell: one recall per tslot group. */
async function readGroups(ctx: ServiceContext, name: string, cell: string, groups: Array<{ bands: string[]; tslot?: number }>, deadline?: number): Promise<RecallResult[]> {
  return Promise.all(groups.map((g) => recall(ctx, { cell, bands: g.bands, ...(g.tslot !== undefined ? { tslot: g.tslot } : {}) }, { primitive: name, deadline })));
}

/** Read one cell, then the spec's fallback bands of those bands whose fact there is a signed absence. */
async function readCell(
  ctx: ServiceContext,
  spec: PlaceShortcutSpec,
  cell: string,
  groups: Array<{ bands: string[]; tslot?: number }>,
  tslot: number | undefined,
  deadline?: number,
): Promise<RecallResult[]> {
  const first = await readGroups(ctx, spec.name, cell, groups, deadline);
  const fallback = spec.fallback;
  if (!fallback) return first;
  const instead = new Set<string>();
  for (const r of first) for (const f of r.facts) if (f.kind === 'absence' && fallback[String(f.band)]) instead.add(fallback[String(f.band)]!.band);
  if (instead.size === 0) return first;
  return [...first, ...(await readGroups(ctx, spec.name, cell, tslotGroups(ctx, [...instead], tslot), deadline))];
}

/** Run a place shortcut: locate → recall per sampled cell → aggregate, under one envelope receipt. */
export async function placeShortcut(
  ctx: ServiceContext,
  name: PlaceShortcutName,
  input: PlaceShortcutInput,
  opts: { deadline?: number; locate?: LocateFn; fromQuery?: boolean } = {},
): Promise<PlaceShortcutResult> {
  const spec = PLACE_SHORTCUTS[name];
  if (!spec) throw new SvcError('internal', `unknown shortcut ${name}`);
  const started = performance.now();
  // Cheap checks first, so a bad request never resolves a place or touches upstream.
  const nCells = parseNCells(input.n_cells, opts.fromQuery);
  if (!spec.chooseBands && (input.band !== undefined || input.bands !== undefined))
    throw invalidArgument(input.band !== undefined ? 'band' : 'bands', `/v1/${name} reads a fixed band set; use /v1/at to choose bands`);
  const bands = (spec.chooseBands ? parseBandList(input.band, input.bands) : undefined) ?? [...spec.bands];
  const { known } = resolveBands(ctx, bands);
  const tslot = input.tslot;
  if (tslot !== undefined) for (const b of known) if (b.tempo !== 'static') checkTslot(tslot, b.tempo, b.key, ctx.now().getTime());

  const resolved = await resolvePlace(ctx, input, { allowCell64: spec.cell64, locate: opts.locate });
  const sampling = sampleCells(resolved.loc, nCells, spec.defaultCells);
  const groups = tslotGroups(ctx, bands, tslot);
  const deadline = opts.deadline;
  const results = await mapLimit(
    sampling.cells,
    READ_CONCURRENCY,
    (cell) => readCell(ctx, spec, cell, groups, tslot, deadline),
    // Past the deadline no new cell starts: the answer signs what was read and lists the rest.
    () => deadline === undefined || Date.now() < deadline,
  );

  const cellsRead: string[] = [];
  const pending: string[] = [];
  const facts: ServedFact[] = [];
  const seen = new Set<string>();
  const notes: MaterializeNote[] = [];
  const caveats: string[] = [];
  const attested = new Set<string>();
  const versions: Record<string, string> = {};
  const perCell = new Map<string, Map<string, Reading>>();
  let allCached = true;
  sampling.cells.forEach((cell, i) => {
    const rs = results[i];
    if (!rs) {
      pending.push(cell);
      return;
    }
    cellsRead.push(cell);
    const readings = new Map<string, Reading>();
    for (const r of rs) {
      for (const f of r.facts) {
        readings.set(String(f.band), { cell, kind: String(f.kind), value: f.value });
        if (!seen.has(f.fact_cid)) {
          seen.add(f.fact_cid);
          facts.push(f);
        }
      }
      notes.push(...r.materialize_notes);
      for (const c of r.caveats) if (!caveats.includes(c)) caveats.push(c);
      for (const b of r.bands_already_attested_at_cell) attested.add(b);
      Object.assign(versions, r.receipt.source_versions ?? {});
      allCached &&= r.receipt.cost?.was_cached ?? false;
    }
    perCell.set(cell, readings);
  });

  // A fallback band read at some cell joins the answer's bands; its stats cover those cells only.
  const fallbacks: Array<{ band: string; cells: string[] }> = [];
  for (const [primary, fb] of Object.entries(spec.fallback ?? {})) {
    if (!bands.includes(primary) || bands.includes(fb.band)) continue;
    const cells = cellsRead.filter((c) => perCell.get(c)?.get(primary)?.kind === 'absence');
    if (cells.length === 0) continue;
    fallbacks.push({ band: fb.band, cells });
    const where = cellsRead.length === 1 ? 'at the cell' : `at ${cells.length} of the ${cellsRead.length} cells read`;
    caveats.push(`${fb.band} answers ${where}, where ${primary} is a signed absence: ${fb.why}.`);
  }
  const outBands = [...bands, ...fallbacks.map((f) => f.band)];

  caveats.push(...placeCaveats(resolved), ...samplingCaveats(sampling, cellsRead.length));
  if (tslot !== undefined && groups.some((g) => g.tslot === undefined)) {
    caveats.push(`tslot ${tslot} applies to the non-static bands; static bands (${groups.find((g) => g.tslot === undefined)!.bands.join(', ')}) have the single tslot 0.`);
  }
  if (pending.length > 0) caveats.push(`${pending.length} sampled cells were not read before the request deadline (polygon.cells_pending); the receipt covers only the cells read.`);
  if (hasExtent(resolved.loc) && sampling.mode === 'point') {
    caveats.push(`${resolved.loc.label} has extent; this answer reads only its centre cell${nCells === 1 ? ' (n_cells 1)' : ''}: pass n_cells 2..64 to sample the area.`);
  }

  const lat = ctx.metrics.latency(name);
  const elapsed = Number((performance.now() - started).toFixed(2));
  const receipt = issueReceipt(
    ctx,
    name,
    cellsRead,
    facts.map((f) => f.fact_cid),
    {
      merkle_proof: facts[0]?.receipt?.merkle_proof,
      source_versions: Object.keys(versions).length > 0 ? versions : undefined,
      cost: { credits: 0, was_cached: allCached && cellsRead.length > 0, latency_p50_ms: lat?.p50_ms ?? elapsed, latency_p99_ms: lat?.p99_ms ?? elapsed },
    },
  );

  const out: PlaceShortcutResult = {
    shortcut: name,
    cell: resolved.loc.cell64,
    mode: sampling.mode,
    bands: outBands,
    facts,
    receipt,
    bands_already_attested_at_cell: [...attested].sort(),
    caveats,
    materialize_notes: notes,
    place: placeBlock(resolved),
  };
  if (hasExtent(resolved.loc)) {
    const bb = resolved.loc.polygon_bbox!;
    out.polygon = {
      bbox: { min_lat: bb.min_lat, min_lng: bb.min_lng, max_lat: bb.max_lat, max_lng: bb.max_lng },
      source: bb.source,
      cells_sampled: cellsRead,
      n_cells: cellsRead.length,
      cells_pending: pending,
    };
    out.stats = Object.fromEntries(
      bands.map((b) => [
        b,
        bandStats(
          b,
          ctx.registry.bands.get(b),
          cellsRead.map((c) => perCell.get(c)?.get(b)),
        ),
      ]),
    );
    for (const f of fallbacks)
      out.stats[f.band] = bandStats(
        f.band,
        ctx.registry.bands.get(f.band),
        f.cells.map((c) => perCell.get(c)?.get(f.band)),
      );
  }
  return out;
}
