/**
 * Note search (docs/memory.md, "Notes and search"). Text is ranked by this service's own BM25F
 * over the store's candidates and the searched scope's statistics (note-text.ts, note-rank.ts),
 * the same on SQLite and PostgreSQL; a caller's vector is compared by cosine with the vectors
 * agents stored on their notes; the blend is fixed and documented, so a caller can reproduce
 * every score from the returned parts.
 */
import { cellBbox, cellCenter } from '../../protocol/cell64.js';
import { isAnchorId } from '../../protocol/cid.js';
import { invalidArgument } from '../../protocol/errors.js';
import { isoSeconds, type Scope } from '../../protocol/receipt.js';
import { parseRfc3339 } from '../../protocol/rfc3339.js';
import { recordRef, type NoteHit, type NoteSearch } from '../../store/memory.js';
import type { ServiceContext } from '../context/context.js';
import { resolveCell } from '../reads/recall.js';
import { requestScope } from '../scopes/request.js';
import { admitSearch, nextTurn } from './note-admission.js';
import { analyseQuery } from './note-query.js';
import { RANKING } from './note-rank.js';
import { serveSearch, type Ranked } from './note-serve.js';
import { CANDIDATE_BUDGET, rankText } from './note-text.js';

export const MAX_RESULTS = 50;
/** Distinct terms a query ranks by at most (note-query.ts); the rest are ignored. */
export { MAX_QUERY_TERMS as MAX_QUERY_WORDS } from './note-query.js';
/** Text candidates in all per first pass (note-text.ts). */
export const TEXT_CANDIDATES = CANDIDATE_BUDGET;
/** Text candidates a blend with a vector reads whole (the best by text score). */
export const HYBRID_TEXT_POOL = 200;
/** Vector scoring covers at most this many of the newest notes carrying a vector (the store's cap per read). */
export const VECTOR_SCAN = 1000;
/** Radius filters: up to 100 km around a cell. */
export const MAX_RADIUS_M = 100_000;
/** Neighbours a result may bring from its thread, on each side. */
export const MAX_CONTEXT = 5;
/** Default blend when both text and vector are given. */
export const DEFAULT_WEIGHTS = { text: 0.5, vector: 0.5 } as const;

/** A note search, as the operation's schema admits it (types and bounds already checked). */
export interface SearchRequest {
  query?: string;
  vector?: number[];
  scope?: Record<string, string | undefined>;
  tags?: string[];
  entity?: string;
  cell?: string;
  radius_m?: number;
  observed_from?: string;
  observed_to?: string;
  as_of?: string;
  authors?: string[];
  limit: number;
  weights?: { text?: number; vector?: number };
  /** 'auto': a time expression in the query boosts notes observed inside it; 'off': words only. */
  time?: 'auto' | 'off';
  /** Pseudo-relevance feedback (default false). */
  feedback?: boolean;
  /** Neighbours in the hit's thread to return on each side (0..5). */
  context?: number;
}

function timeField(v: string | undefined, field: string): number | undefined {
  if (v === undefined) return undefined;
  const ms = parseRfc3339(v);
  if (!Number.isFinite(ms)) throw invalidArgument(field, 'expected an RFC 3339 timestamp');
  return Math.floor(ms / 1000);
}

/** Cosine of the query (its norm computed once) with a stored float32 vector; null for a zero vector. */
function cosineWith(q: readonly number[], qNorm: number, v: Float32Array): number | null {
  let dot = 0;
  let vv = 0;
  for (let i = 0; i < q.length; i++) {
    dot += q[i] * v[i];
    vv += v[i] * v[i];
  }
  return vv === 0 ? null : Math.max(-1, Math.min(1, dot / (qNorm * Math.sqrt(vv))));
}

function haversineM(aLat: number, aLng: number, bLat: number, bLng: number): number {
  const r = Math.PI / 180;
  const dLat = (bLat - aLat) * r;
  const dLng = (bLng - aLng) * r;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(aLat * r) * Math.cos(bLat * r) * Math.sin(dLng / 2) ** 2;
  return 2 * 6_371_008.8 * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** The filters of a search request, checked; no store access but the place lookup. */
async function parseSearch(ctx: ServiceContext, req: SearchRequest) {
  const scope: Scope | null = requestScope(req.scope) ?? null;
  const vector = req.vector;
  if (vector?.every((x) => x === 0)) throw invalidArgument('vector', 'a zero vector has no direction');
  let entity: string | undefined;
  if (req.entity !== undefined) {
    const ref = recordRef(req.entity);
    if (!ref || !isAnchorId(ref)) throw invalidArgument('entity', 'expected an entity_cid or svc:entity:<entity_cid>');
    entity = ref;
  }
  let centre: { lat: number; lng: number; cell: string } | undefined;
  let radius: number | undefined;
  let bbox: NoteSearch['bbox'];
  if (req.cell !== undefined) {
    const { cell } = await resolveCell(ctx, req.cell, 'cell');
    const c = cellCenter(cell);
    centre = { ...c, cell };
    if (req.radius_m !== undefined) {
      radius = req.radius_m;
      const dLat = radius / 111_320;
      const dLng = radius / (111_320 * Math.max(0.01, Math.cos((c.lat * Math.PI) / 180)));
      bbox = { min_lat: c.lat - dLat, max_lat: c.lat + dLat, min_lng: c.lng - dLng, max_lng: c.lng + dLng };
    } else {
      const b = cellBbox(cell);
      bbox = { min_lat: b.min_lat, max_lat: b.max_lat, min_lng: b.min_lng, max_lng: b.max_lng };
    }
  } else if (req.radius_m !== undefined) {
    throw invalidArgument('radius_m', 'needs cell (the centre)');
  }
  const observedFrom = timeField(req.observed_from, 'observed_from');
  const observedTo = timeField(req.observed_to, 'observed_to');
  if (observedFrom !== undefined && observedTo !== undefined && observedTo < observedFrom) throw invalidArgument('observed_to', 'must not be before observed_from');
  const asOf = req.as_of === undefined ? undefined : isoSeconds(timeField(req.as_of, 'as_of')! * 1000);
  const w = req.weights ?? {};
  const weights = { text: w.text ?? DEFAULT_WEIGHTS.text, vector: w.vector ?? DEFAULT_WEIGHTS.vector };
  if (!(weights.text >= 0 && weights.vector >= 0 && weights.text + weights.vector > 0)) throw invalidArgument('weights', 'expected non-negative text and vector weights, not both 0');
  const context = req.context ?? 0;
  if (!Number.isInteger(context) || context < 0 || context > MAX_CONTEXT) throw invalidArgument('context', `expected an integer 0..${MAX_CONTEXT}`);
  const base: Omit<NoteSearch, 'limit'> = {
    scope,
    ...(req.tags !== undefined ? { tags: req.tags } : {}),
    ...(entity ? { entity } : {}),
    ...(bbox ? { bbox } : {}),
    ...(observedFrom !== undefined ? { observed_from: observedFrom } : {}),
    ...(observedTo !== undefined ? { observed_to: observedTo } : {}),
    ...(asOf ? { accepted_before: asOf } : {}),
    ...(req.authors !== undefined ? { authors: req.authors } : {}),
  };
  // Relative time ("last week") is relative to the transaction time asked for, else to now.
  const now = asOf ? new Date(parseRfc3339(asOf)) : ctx.now();
  const analysed = analyseQuery(req.query ?? '', now, req.time !== 'off');
  // An explicit observed window wins over one read from the words (those words still leave the query).
  const window = analysed.time && observedFrom === undefined && observedTo === undefined ? { from: analysed.time.start_unix, to: analysed.time.end_unix } : undefined;
  const vectorNorm = vector ? Math.sqrt(vector.reduce((a, x) => a + x * x, 0)) : 0;
  return { scope, vector, vectorNorm, centre, radius, base, limit: req.limit, weights, asOf, analysed, window, context, feedback: req.feedback === true };
}

/**
 * Ranked search over notes. Score: with text and vector, `weights.text·t + weights.vector·v`
 * (divided by the weights' sum), t = the note's BM25F score / the best candidate's, v =
 * max(0, cosine) / the best candidate's cosine (both 0..1, so the weights mean what they say);
 * with text only, t; with a vector only, v; then × RANKING.time_boost for a
 * note observed inside the query's time expression. Filters only: no score, newest first (inside
 * the time expression's window, when the words held one and nothing else).
 */
export async function searchNotes(ctx: ServiceContext, req: SearchRequest) {
  const release = admitSearch(ctx);
  try {
    await nextTurn();
    return await rankNotes(ctx, req);
  } finally {
    release();
  }
}

async function rankNotes(ctx: ServiceContext, req: SearchRequest) {
  const p = await parseSearch(ctx, req);
  const own = p.analysed.terms.map((t) => t.term);
  const hasWords = own.length > 0;
  const candidates = new Map<string, NoteHit>();
  const textScore = new Map<string, number>();
  let vectorScanTruncated = false;
  let expanded: Array<{ term: string; weight: number }> = [];
  if (hasWords) {
    // The best text candidates are read whole: the page, or for a radius refined afterwards ten
    // pages, or for a blend with vectors HYBRID_TEXT_POOL (the vector part may lift any of them).
    const take = p.vector ? HYBRID_TEXT_POOL : p.radius !== undefined ? Math.min(1000, p.limit * 10) : p.limit;
    const need = Math.max(take, p.feedback ? RANKING.feedback.docs : 1);
    const text = await rankText(ctx.store.memory, p.base, own, { window: p.window, feedback: p.feedback, need, yieldTurn: nextTurn });
    expanded = text.expanded;
    const best = text.hits.filter((h) => h.score > 0).slice(0, take);
    const score = new Map(best.map((h) => [h.seq, h.score]));
    for (const h of await ctx.store.memory.notesAt({ scope: p.scope, seqs: best.map((b) => b.seq), vectors: p.vector !== undefined })) {
      candidates.set(h.fact_cid, h);
      textScore.set(h.fact_cid, score.get(h.seq)!);
    }
  }
  if (p.vector) {
    const scan = await ctx.store.memory.searchNotes({ ...p.base, with_vector: true, limit: VECTOR_SCAN });
    vectorScanTruncated = scan.length >= VECTOR_SCAN;
    for (const h of scan) if (!candidates.has(h.fact_cid)) candidates.set(h.fact_cid, h);
    await nextTurn();
  }
  const newest = !hasWords && !p.vector;
  if (newest) {
    const windowed = p.window && req.query !== undefined ? { observed_from: p.window.from, observed_to: p.window.to } : {};
    const pool = p.radius !== undefined ? Math.min(1000, p.limit * 10) : p.limit;
    for (const h of await ctx.store.memory.searchNotes({ ...p.base, ...windowed, limit: pool })) candidates.set(h.fact_cid, h);
    await nextTurn();
  }
  let hits = [...candidates.values()];
  const distance = new Map<string, number>();
  if (p.centre && p.radius !== undefined) {
    hits = hits.filter((h) => {
      if (h.lat === null || h.lng === null) return false;
      const d = haversineM(p.centre!.lat, p.centre!.lng, h.lat, h.lng);
      distance.set(h.fact_cid, Math.round(d));
      return d <= p.radius!;
    });
  }
  const maxText = Math.max(0, ...hits.map((h) => textScore.get(h.fact_cid) ?? 0));
  const cosines = new Map<string, number | null>();
  if (p.vector) for (const h of hits) cosines.set(h.fact_cid, h.vector && h.vector.length === p.vector.length ? cosineWith(p.vector, p.vectorNorm, h.vector) : null);
  const maxCos = Math.max(0, ...[...cosines.values()].map((c) => c ?? 0));
  const wsum = p.weights.text + p.weights.vector;
  const inWindow = (h: NoteHit) => p.window !== undefined && h.observed_at !== null && h.observed_at >= p.window.from && h.observed_at <= p.window.to;
  const scored: Ranked[] = hits.map((h) => {
    const t = hasWords ? (maxText > 0 ? (textScore.get(h.fact_cid) ?? 0) / maxText : 0) : null;
    const cos = cosines.get(h.fact_cid) ?? null;
    const v = p.vector ? (cos === null || maxCos === 0 ? 0 : Math.max(0, cos) / maxCos) : null;
    let score: number | null = null;
    if (t !== null && v !== null) score = (p.weights.text * t + p.weights.vector * v) / wsum;
    else if (t !== null) score = t;
    else if (v !== null) score = v;
    const boosted = score !== null && !newest && inWindow(h);
    if (boosted) score = score! * RANKING.time_boost;
    return { h, score, cos, t, inWindow: p.window !== undefined ? inWindow(h) : undefined, distance: distance.get(h.fact_cid) };
  });
  // Ties go to the newer note: log order is the same on every store, whatever its seq values.
  if (!newest) scored.sort((a, b) => (b.score ?? 0) - (a.score ?? 0) || b.h.seq - a.h.seq);
  const ranking = hasWords && p.vector ? 'hybrid' : hasWords ? 'text' : p.vector ? 'vector' : 'newest';
  return serveSearch(ctx, {
    query: req.query ?? null,
    ranking,
    weights: ranking === 'hybrid' ? p.weights : undefined,
    scope: p.scope,
    asOf: p.asOf,
    top: scored.slice(0, p.limit),
    context: p.context,
    interpretation: {
      terms: own,
      set_aside: p.analysed.set_aside,
      ...(expanded.length > 0 ? { feedback: expanded } : {}),
      ...(p.analysed.time
        ? {
            time: {
              expression: p.analysed.time.expression,
              from: isoSeconds(p.analysed.time.start_unix * 1000),
              to: isoSeconds(p.analysed.time.end_unix * 1000),
              applied: p.window !== undefined ? (newest ? 'filter' : 'boost') : 'none',
              ...(p.window !== undefined && !newest ? { boost: RANKING.time_boost } : {}),
            },
          }
        : {}),
    },
    vectorScanTruncated: p.vector ? vectorScanTruncated : undefined,
    bestCosine: p.vector ? (maxCos > 0 ? Number(maxCos.toFixed(6)) : null) : undefined,
  });
}
