/**
 * Agent notes (docs/memory.md): an agent writes `memory.note` records signed with its own key
 * through the ordinary batch path, and searches them here. Ranking is the store's own full-text
 * engine (SQLite FTS5 bm25, PostgreSQL ts_rank_cd) plus, when the caller sends a vector, cosine
 * over the vectors agents supplied with their notes; the blend is fixed and documented so a
 * caller can reproduce every score from the returned parts.
 */
import { cellBbox, cellCenter } from '../../protocol/cell64.js';
import { isAnchorId } from '../../protocol/cid.js';
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import { isoSeconds, type Scope } from '../../protocol/receipt.js';
import { parseRfc3339 } from '../../protocol/rfc3339.js';
import { NOTE_BAND, recordRef, type NoteHit, type NoteSearch } from '../../store/memory.js';
import { acceptBatch, type AttestRequest } from '../write/attest.js';
import { reserveDaily } from '../write/attester-quota.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import { serveFact, type ServedFact } from '../facts/facts-view.js';
import { mapLimit, READ_CONCURRENCY } from '../reads/common.js';
import { requestScope } from '../scopes/request.js';
import { scopeKey } from '../../store/entry.js';
import { resolveCell } from '../reads/recall.js';

export const MAX_NOTES_PER_WRITE = 256;
export const MAX_RESULTS = 50;
/** Distinct words a query keeps, on both stores (sqlite/memory-text.ts, postgres/memory-queries.ts); the rest are ignored. */
export const MAX_QUERY_WORDS = 32;
/** Text candidates blended with vectors: the engine's best this many. */
export const TEXT_CANDIDATES = 200;
/** Vector scoring covers at most this many of the newest notes carrying a vector (the store's cap per read). */
export const VECTOR_SCAN = 1000;
/** Radius filters: up to 100 km around a cell. */
export const MAX_RADIUS_M = 100_000;
/** Default blend when both text and vector are given. */
export const DEFAULT_WEIGHTS = { text: 0.5, vector: 0.5 } as const;

/**
 * Write 1..256 notes: the attest envelope whose facts are all memory.note records. A key's notes
 * are metered by SVC_NOTE_DAILY_QUOTA (attester-quota.ts): checked once the batch is
 * authenticated (only a key that signed it learns its count), held until the append settles,
 * and refused whole, before anything is written.
 */
export async function writeNotes(ctx: ServiceContext, req: AttestRequest) {
  const facts = req?.facts;
  if (!Array.isArray(facts) || facts.length === 0) throw invalidArgument('facts', 'expected 1..256 memory.note records');
  if (facts.length > MAX_NOTES_PER_WRITE) throw invalidArgument('facts', `at most ${MAX_NOTES_PER_WRITE} notes per write`);
  facts.forEach((f, i) => {
    if ((f as { band?: unknown })?.band !== NOTE_BAND) throw invalidArgument(`facts[${i}].band`, `expected ${NOTE_BAND} (other records go through /v1/attest, /v1/edges or /v1/entity/alias)`);
  });
  let release: (() => void) | undefined;
  const quota = { name: 'notes', limit: ctx.config.noteDailyQuota, variable: 'SVC_NOTE_DAILY_QUOTA' } as const;
  try {
    const res = await acceptBatch(ctx, req, 'memory_notes', {
      beforeAppend: async (_scope, attester) => {
        // The responder's own key is never metered, as in every daily quota.
        if (attester !== ctx.keys.publicKeyB32) release = await reserveDaily(ctx, quota, attester, facts.length);
      },
    });
    return { ...res, notes: res.fact_cids.map((fact_cid, i) => ({ fact_cid, subject: (facts[i] as { cell: string }).cell })) };
  } finally {
    release?.();
  }
}

/**
 * Searches running now, per store (one per process in a deployment). A search holds the event
 * loop while SQLite ranks, so searches beyond a few only queue behind each other: 50 heavy ones
 * at once answered in seconds. Past the limit a search is refused at once, 503 overloaded with
 * retry_after, rather than queued.
 */
const running = new WeakMap<object, number>();

/**
 * Let the event loop read what arrived. The embedded store ranks synchronously, so a search
 * that never yields runs to its end before the next request is even read: the others wait
 * unseen in the socket buffers (never refused, answered seconds later, 50 heavy ones at once:
 * p99 1.7 s with no refusal, measured). A search therefore yields before and after each store
 * call, and the requests that arrived meanwhile meet the limit while it is still running.
 */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function admitSearch(ctx: ServiceContext): () => void {
  const limit = ctx.config.memorySearchConcurrency;
  const now = running.get(ctx.store) ?? 0;
  if (now >= limit) {
    throw new SvcError('overloaded', `memory search: ${limit} searches are running, as many as this responder runs at once (SVC_MEMORY_SEARCH_CONCURRENCY); retry after 1 s`, {
      reason: 'memory_search_concurrency',
      limit,
      retry_after: 1,
    });
  }
  running.set(ctx.store, now + 1);
  let done = false;
  return () => {
    if (done) return;
    done = true;
    const left = (running.get(ctx.store) ?? 1) - 1;
    if (left > 0) running.set(ctx.store, left);
    else running.delete(ctx.store);
  };
}

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
}

export interface SearchResult {
  fact_cid: string;
  score: number | null;
  text_score: number | null;
  cosine: number | null;
  distance_m?: number;
  attester: string;
  accepted_at: string;
  note: unknown;
  fact: ServedFact;
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

/** The filters of a search request, checked; no store access. */
async function parseSearch(ctx: ServiceContext, req: SearchRequest) {
  const scope: Scope | null = requestScope(req.scope) ?? null;
  const query = req.query;
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
  const limit = req.limit;
  const w = req.weights ?? {};
  const weights = { text: w.text ?? DEFAULT_WEIGHTS.text, vector: w.vector ?? DEFAULT_WEIGHTS.vector };
  if (!(weights.text >= 0 && weights.vector >= 0 && weights.text + weights.vector > 0)) throw invalidArgument('weights', 'expected non-negative text and vector weights, not both 0');
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
  const hasWords = query !== undefined && /[\p{L}\p{N}]/u.test(query);
  const vectorNorm = vector ? Math.sqrt(vector.reduce((a, x) => a + x * x, 0)) : 0;
  return { scope, query, hasWords, vector, vectorNorm, centre, radius, base, limit, weights, asOf };
}

/**
 * Ranked search over notes. Score: with text and vector, `weights.text·t + weights.vector·v`
 * (divided by the weights' sum), t = text_score / the best text_score among the candidates,
 * v = (cosine + 1) / 2; with text only, t; with a vector only, v; with filters only, no score and
 * newest first. A candidate without a vector has v = 0.
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
  const candidates = new Map<string, NoteHit>();
  let vectorScanTruncated = false;
  const wantRefine = p.radius !== undefined;
  const pool = Math.min(1000, p.vector || wantRefine ? Math.max(TEXT_CANDIDATES, p.limit * 10) : p.limit);
  if (p.hasWords) {
    for (const h of await ctx.store.memory.searchNotes({ ...p.base, text: p.query, limit: pool })) candidates.set(h.fact_cid, h);
    await nextTurn();
  }
  if (p.vector) {
    const scan = await ctx.store.memory.searchNotes({ ...p.base, with_vector: true, limit: VECTOR_SCAN });
    vectorScanTruncated = scan.length >= VECTOR_SCAN;
    for (const h of scan) if (!candidates.has(h.fact_cid)) candidates.set(h.fact_cid, { ...h, text_score: 0 });
    await nextTurn();
  }
  if (!p.hasWords && !p.vector) {
    for (const h of await ctx.store.memory.searchNotes({ ...p.base, limit: pool })) candidates.set(h.fact_cid, h);
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
  const maxText = Math.max(0, ...hits.map((h) => h.text_score));
  const wsum = p.weights.text + p.weights.vector;
  const scored = hits.map((h) => {
    const t = p.hasWords ? (maxText > 0 ? h.text_score / maxText : 0) : null;
    const cos = p.vector && h.vector && h.vector.length === p.vector.length ? cosineWith(p.vector, p.vectorNorm, h.vector) : null;
    const v = p.vector ? (cos === null ? 0 : (cos + 1) / 2) : null;
    let score: number | null = null;
    if (t !== null && v !== null) score = (p.weights.text * t + p.weights.vector * v) / wsum;
    else if (t !== null) score = t;
    else if (v !== null) score = v;
    return { h, score, cos, t };
  });
  if (p.hasWords || p.vector) scored.sort((a, b) => (b.score ?? 0) - (a.score ?? 0) || (a.h.fact_cid < b.h.fact_cid ? -1 : 1));
  const top = scored.slice(0, p.limit);
  const wanted = scopeKey(p.scope);
  // Every item runs (no shouldStart), so no slot is left undefined.
  const results = (await mapLimit(top, READ_CONCURRENCY, async ({ h, score, cos, t }): Promise<SearchResult> => {
    const f = await ctx.store.getFact(h.fact_cid);
    // The index is scope-exact; a fact that does not match is an index fault, never served.
    if (!f || f.band !== NOTE_BAND || scopeKey(f.scope) !== wanted) {
      throw new SvcError('internal', `memory index: note ${h.fact_cid} does not match its store row`);
    }
    const r: SearchResult = {
      fact_cid: h.fact_cid,
      score: score === null ? null : Number(score.toFixed(6)),
      // Normalized to the best candidate: the engine's raw bm25 folds in corpus-wide statistics
      // (row count, mean length) that other scopes' notes move, so it is never served.
      text_score: t === null ? null : Number(t.toFixed(6)),
      cosine: cos === null ? null : Number(cos.toFixed(6)),
      attester: h.attester,
      accepted_at: h.accepted_at,
      note: f.body.value,
      fact: await serveFact(ctx, f),
    };
    const d = distance.get(h.fact_cid);
    if (d !== undefined) r.distance_m = d;
    return r;
  })) as SearchResult[];
  const cids = results.map((r) => r.fact_cid);
  const cells = [...new Set(results.map((r) => r.fact.cell as string))];
  return {
    query: p.query ?? null,
    ranking: p.hasWords && p.vector ? 'hybrid' : p.hasWords ? 'text' : p.vector ? 'vector' : 'newest',
    engine: ctx.store.driver === 'sqlite' ? 'sqlite_fts5_bm25' : 'postgres_ts_rank_cd',
    weights: p.hasWords && p.vector ? p.weights : undefined,
    results,
    ...(p.vector ? { vector_scan_truncated: vectorScanTruncated } : {}),
    receipt: issueReceipt(ctx, 'memory_search', cells, cids, { scope: p.scope ?? undefined, ...(p.asOf ? { as_of: { transaction_time: p.asOf } } : {}) }),
  };
}
