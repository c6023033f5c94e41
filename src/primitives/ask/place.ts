/**
 * The place of an ask (docs/ask.md, "Place"): the caller's `place`, `cell` or `lat`+`lng` when
 * given (at most one way; a bad one fails like it would on locate), else what the question names,
 * resolved by the locate primitive so the answer carries the same LocateResp — confidence,
 * alternatives and inventory included. A place named in the question that cannot be resolved does
 * not fail the ask: the answer says so and points at locate.
 */
import type { LocateResp } from '../../geo/types.js';
import { cellCenter } from '../../protocol/cell64.js';
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import { requireCell } from '../../protocol/cell-token.js';
import type { ServiceContext } from '../context/context.js';
import { locate } from '../locate/locate.js';
import type { Understanding } from './understand.js';

export interface AskPlace {
  loc: LocateResp | null;
  /** How the place was given. */
  source: 'place' | 'cell' | 'latlng' | 'question' | null;
  /** The place text (caller's or the question's), when named by words. */
  query?: string;
  /** Why a place named in the question could not be resolved. */
  error?: { code: string; message: string; text: string };
  /** A loose match that was not used (shown in place_resolved, not read). */
  candidate?: LocateResp;
}

export interface PlaceFields {
  place?: string;
  cell?: string;
  lat?: number;
  lng?: number;
}

/** Exactly one way, or none: place, cell, or both lat and lng. */
export function checkPlaceFields(req: PlaceFields): void {
  const ways = [req.place !== undefined, req.cell !== undefined, req.lat !== undefined || req.lng !== undefined].filter(Boolean).length;
  if (ways > 1) throw invalidArgument(req.cell !== undefined ? 'cell' : 'lat', 'give at most one of: place, cell, or lat and lng');
  if (req.lat !== undefined && req.lng === undefined) throw invalidArgument('lng', 'is required with lat');
  if (req.lng !== undefined && req.lat === undefined) throw invalidArgument('lat', 'is required with lng');
  if (req.place !== undefined && req.place.trim() === '') throw invalidArgument('place', 'expected a non-empty place name');
}

async function atCell(ctx: ServiceContext, cell: string, deadline: number): Promise<LocateResp> {
  const c = cellCenter(cell);
  const loc = await locate(ctx, { lat: c.lat, lng: c.lng }, { deadline });
  return loc.cell64 === cell ? loc : { ...loc, cell64: cell };
}

/**
 * A name taken from the question and matched only loosely (a fuzzy spelling, or a place of
 * another class than asked: "Lake Taihu" → the town of Taipu) is not read: the answer would be
 * about somewhere else. An exact name shared by several places (Springfield) is read, and the
 * answer states the ambiguity.
 */
function looseMatch(loc: LocateResp): boolean {
  return loc.selected?.is_high_confidence === false && /fuzzy match|class mismatch/.test(loc.selected.reason);
}

async function byName(ctx: ServiceContext, text: string, deadline: number): Promise<AskPlace> {
  try {
    const loc = await locate(ctx, { place: text }, { deadline });
    if (looseMatch(loc)) {
      return {
        loc: null,
        source: 'question',
        query: text,
        candidate: loc,
        error: { code: 'low_confidence', message: `only a loose match, ${loc.label} (${loc.selected.reason}); nothing was read there`, text },
      };
    }
    return { loc, source: 'question', query: text };
  } catch (e) {
    if (!(e instanceof SvcError) || !['place_not_found', 'no_geocoder_match', 'source_fetch_failed', 'invalid_argument'].includes(e.code)) throw e;
    return { loc: null, source: 'question', query: text, error: { code: e.code, message: e.message, text } };
  }
}

/** Resolve where the question is about (see the module note for the order). */
export async function resolveAskPlace(ctx: ServiceContext, req: PlaceFields, u: Understanding, opts: { deadline: number; offlineOnly: boolean }): Promise<AskPlace> {
  const { deadline } = opts;
  if (req.place !== undefined) return { loc: await locate(ctx, { place: req.place }, { deadline }), source: 'place', query: req.place.trim() };
  if (req.cell !== undefined) return { loc: await atCell(ctx, requireCell(ctx.config.prefix, req.cell, 'cell'), deadline), source: 'cell' };
  if (req.lat !== undefined && req.lng !== undefined) return { loc: await locate(ctx, { lat: req.lat, lng: req.lng }, { deadline }), source: 'latlng' };
  const p = u.extraction.place;
  if (p?.kind === 'point') return { loc: await locate(ctx, { lat: p.lat, lng: p.lng }, { deadline }), source: 'question' };
  if (p?.kind === 'cell') return { loc: await atCell(ctx, p.cell, deadline), source: 'question' };
  if (p?.kind === 'name') return byName(ctx, p.text, deadline);
  // A capitalised name no offline table knows: only the network tiers might, and only for a real question.
  if (u.extraction.unknown && !opts.offlineOnly) return byName(ctx, u.extraction.unknown, deadline);
  return { loc: null, source: null };
}
