/**
 * Where a shortcut reads (docs/shortcuts.md, "Place shortcuts"; docs/locate.md): a place name goes
 * through the locate primitive; a lat/lng pair or a cell64 is resolved here, without locate,
 * because a coordinate is already a point and needs no gazetteer. Either way the shortcut gets a
 * LocateResp, so the fan-out rules only look at one shape.
 */
import { cellBbox, cellCenter, cellOf, isCell, neighbours } from '../../protocol/cell64.js';
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import type { LocateRequest, LocateResp } from '../../geo/types.js';
import { requireCell } from '../../protocol/cell-token.js';
import type { ServiceContext } from '../context/context.js';

/** The locate primitive's signature (src/primitives/locate/locate.ts). */
export type LocateFn = (ctx: ServiceContext, req: LocateRequest) => Promise<LocateResp>;

/**
 * Location fields every shortcut accepts (place and its aliases: docs/shortcuts.md, "Place
 * shortcuts"), as the operations' schemas admit them: types and coordinate ranges checked (query
 * strings coerced), which way the place is named is checked here.
 */
export interface PlaceInput {
  place?: string;
  name?: string;
  q?: string;
  query?: string;
  lat?: number;
  lng?: number;
  lon?: number;
  cell64?: string;
}

export interface ResolvedPlace {
  loc: LocateResp;
  /** How the caller named the place. */
  input: 'place' | 'latlng' | 'cell64';
  /** The caller's place text (place input only). */
  query?: string;
}

/** The LocateResp essentials a shortcut answer carries (unsigned: docs/protocol-notes.md §5). */
export interface PlaceBlock {
  query?: string;
  cell64: string;
  via: LocateResp['via'];
  label: string;
  lat: number;
  lng: number;
  is_high_confidence: boolean;
  reason: string;
  selected: { label: string; kind: string; is_high_confidence: boolean; reason: string; score: number };
}

const NAME_FIELDS = ['place', 'name', 'q', 'query'] as const;

type Parsed = { kind: 'place'; text: string; field: string } | { kind: 'latlng'; lat: number; lng: number } | { kind: 'cell64'; cell: string };

/**
 * Which way the caller named the location; exactly one way is allowed (as for locate). With the
 * deployment `prefix`, cell64 also takes the cell token `<prefix>:cell:<cell64>` that locate mints.
 */
export function parseLocation(input: PlaceInput, opts: { allowCell64?: boolean; optional?: boolean; prefix?: string } = {}): Parsed | undefined {
  const names = NAME_FIELDS.filter((k) => input[k] !== undefined);
  const texts = names.map((k) => input[k] as string);
  for (const [i, t] of texts.entries()) {
    if (t.trim().length === 0) throw invalidArgument(names[i], 'expected a non-empty place name');
  }
  if (new Set(texts).size > 1) throw invalidArgument(names[1], `conflicts with ${names[0]}: give one place name (place, name, q and query are aliases)`);
  const lngField = input.lng !== undefined ? 'lng' : 'lon';
  if (input.lng !== undefined && input.lon !== undefined && input.lng !== input.lon) {
    throw invalidArgument('lon', 'conflicts with lng (lon is an alias of lng)');
  }
  const hasCoords = input.lat !== undefined || input.lng !== undefined || input.lon !== undefined;
  const hasCell = input.cell64 !== undefined;
  if (hasCell && !opts.allowCell64) throw invalidArgument('cell64', 'is not accepted here; give place or lat and lng');
  const ways = [names.length > 0, hasCoords, hasCell].filter(Boolean).length;
  if (ways === 0) {
    if (opts.optional) return undefined;
    throw invalidArgument('place', `give place (or name, q, query) or lat and lng${opts.allowCell64 ? ', or cell64' : ''}`);
  }
  if (ways > 1) throw invalidArgument(hasCell ? 'cell64' : 'lat', 'give only one of: a place name, lat and lng, cell64');
  if (names.length > 0) return { kind: 'place', text: texts[0].trim(), field: names[0] };
  if (hasCell) {
    if (opts.prefix !== undefined) return { kind: 'cell64', cell: requireCell(opts.prefix, input.cell64, 'cell64') };
    if (!isCell(input.cell64)) throw new SvcError('invalid_cell', `cell64: ${JSON.stringify(String(input.cell64).slice(0, 64))} is not a cell64`, { field: 'cell64' });
    return { kind: 'cell64', cell: input.cell64 };
  }
  if (input.lat === undefined) throw invalidArgument('lat', `is required with ${lngField}`);
  if (input.lng === undefined && input.lon === undefined) throw invalidArgument('lng', 'is required with lat (lon is an alias)');
  const lat = input.lat;
  const lng = (input.lng ?? input.lon)!;
  cellOf(lat, lng); // range checks name the field (invalid_argument)
  return { kind: 'latlng', lat, lng };
}

/** A LocateResp for a point given directly: the cell itself, no extent, high confidence. */
export function pointLocate(cell: string, lat: number, lng: number, label: string, reason: string): LocateResp {
  return {
    cell64: cell,
    via: 'direct_latlng',
    label,
    lat,
    lng,
    localized_names: {},
    neighborhood_cells: neighbours(cell),
    polygon_bbox: { ...cellBbox(cell), source: 'centre_cell_bbox' },
    polygon_sample_cells: [cell],
    data_at_this_cell: {},
    selected: { label, kind: 'coordinates', is_high_confidence: true, reason, score: 1 },
    alternatives: [],
  };
}

let loading: Promise<LocateFn | undefined> | undefined;

/**
 * The locate primitive, loaded on first use. It is developed alongside the shortcuts; until the
 * module exists, place names fall back to ctx.locate (no extent) or are refused with a hint.
 */
export async function loadLocate(): Promise<LocateFn | undefined> {
  loading ??= import(new URL('../locate.js', import.meta.url).href).then(
    (m: { locate?: unknown }) => (typeof m.locate === 'function' ? (m.locate as LocateFn) : undefined),
    (e: { code?: string; message?: string }) => {
      loading = undefined; // retried next time: the module may land later, and real errors surface
      // Only the locate module itself being absent means "not wired"; a missing import inside it is a bug.
      if (e?.code === 'ERR_MODULE_NOT_FOUND' && /primitives[\\/]locate\.(js|ts)/.test(e.message ?? '')) return undefined;
      throw e;
    },
  );
  return loading;
}

async function locateName(ctx: ServiceContext, text: string, field: string, injected?: LocateFn): Promise<LocateResp> {
  const locate = injected ?? (await loadLocate());
  if (locate) return locate(ctx, { place: text });
  if (ctx.locate) {
    const r = await ctx.locate(text);
    const c = cellCenter(r.cell64);
    const loc = pointLocate(r.cell64, c.lat, c.lng, r.label ?? text, 'resolved by the context locate tier (no extent information)');
    return { ...loc, via: 'cache', selected: { ...loc.selected, kind: 'place', is_high_confidence: r.is_high_confidence ?? false } };
  }
  throw new SvcError('not_yet_implemented', `${field}: place names need the locate primitive, which is not wired on this responder; pass lat and lng`, {
    field,
    workaround: 'pass lat and lng (or cell64 where accepted)',
  });
}

/** Resolve the caller's location to a LocateResp (locate for names; directly for coordinates and cells). */
export async function resolvePlace(ctx: ServiceContext, input: PlaceInput, opts: { allowCell64?: boolean; locate?: LocateFn } = {}): Promise<ResolvedPlace> {
  const p = parseLocation(input, { ...opts, prefix: ctx.config.prefix })!;
  if (p.kind === 'place') return { loc: await locateName(ctx, p.text, p.field, opts.locate), input: 'place', query: p.text };
  if (p.kind === 'cell64') {
    const c = cellCenter(p.cell);
    return { loc: pointLocate(p.cell, c.lat, c.lng, p.cell, 'cell64 given by the caller'), input: 'cell64' };
  }
  const cell = cellOf(p.lat, p.lng);
  return { loc: pointLocate(cell, p.lat, p.lng, `${p.lat},${p.lng}`, 'coordinates given by the caller'), input: 'latlng' };
}

/** True when the place is a feature with extent that can be sampled (not a point's own cell box). */
export function hasExtent(loc: LocateResp): boolean {
  return !!loc.polygon_bbox && loc.polygon_bbox.source !== 'centre_cell_bbox' && Array.isArray(loc.polygon_sample_cells) && loc.polygon_sample_cells.length > 0;
}

/** The place block of an answer. */
export function placeBlock(r: ResolvedPlace): PlaceBlock {
  const s = r.loc.selected;
  const out: PlaceBlock = {
    cell64: r.loc.cell64,
    via: r.loc.via,
    label: r.loc.label,
    lat: r.loc.lat,
    lng: r.loc.lng,
    is_high_confidence: s?.is_high_confidence ?? false,
    reason: s?.reason ?? '',
    selected: { label: s?.label ?? r.loc.label, kind: s?.kind ?? 'unknown', is_high_confidence: s?.is_high_confidence ?? false, reason: s?.reason ?? '', score: s?.score ?? 0 },
  };
  if (r.query !== undefined) out.query = r.query;
  return out;
}

/** Caveats every place-anchored answer carries: the geocode is not signed (docs/protocol-notes.md §5). */
export function placeCaveats(r: ResolvedPlace): string[] {
  if (r.input !== 'place') return [];
  const out: string[] = [];
  if (!r.loc.selected?.is_high_confidence) {
    out.push(
      `"${r.query}" resolved with low confidence to ${r.loc.cell64} (${r.loc.label}; ${r.loc.selected?.reason ?? 'no reason given'}): the receipt signs the cells read, not the place name, so a wrong geocode yields a valid signature for the wrong cell — check the place block before trusting the answer.`,
    );
  } else {
    out.push('The place name is not signed: the receipt covers the cells read; check the place block.');
  }
  return out;
}
