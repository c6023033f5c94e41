/**
 * find_similar (docs/embeddings.md, "find_similar"): the k stored cells whose embedding is nearest
 * a query, which is a cell's own vector or an inline literal. Modes:
 *   cosine               cosine of the real-valued vectors, in [-1, 1];
 *   hamming              agreement of the binary sibling codes (`<band>.bin128`), 1 − d/bits, in [0, 1];
 *   hamming_then_rerank  triage by Hamming, then the survivors re-ranked by cosine.
 * Only public (unscoped) primary facts are searched, each cell at its newest vector. Scores are
 * not signed, but the receipt lists every neighbour's cell and the fact_cid whose value produced
 * its score, in rank order, so anyone holding the facts recomputes the ranking.
 */
import { cellCenter } from '../../protocol/cell64.js';
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import type { BandEntry } from '../../registry/registry.js';
import { gazetteer } from '../../geo/gazetteer.js';
import { signBits } from '../../sources/geotessera.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import { resolveCell } from '../reads/recall.js';
import { requireBand, round } from '../reads/common.js';
import { join } from 'node:path';
import { ANN_PARAMS } from './ann.js';
import { BINARY_SUFFIX, VectorIndex, indexedVector, isBinaryBand, type IndexState, type IndexedVector } from './vector-index.js';
import { cosineOf, cosineTopK, hammingTopK, rank, type Scored } from './vector-scan.js';

/** Neighbours find_similar returns: bounds and default (/v1/limits lists them). */
export const FIND_SIMILAR_K = { min: 1, max: 1000, default: 10 } as const;

export const SIMILAR_MODES = ['cosine', 'hamming', 'hamming_then_rerank'] as const;
export type SimilarMode = (typeof SIMILAR_MODES)[number];

/**
 * A search, as the operation's schema admits it (key length, k's bounds, the mode checked; band
 * and k filled in). Internal callers (ask, the bench) may leave band and k out: the defaults stay.
 */
export interface FindSimilarRequest {
  key: string;
  /** Default geotessera. */
  band?: string;
  /** Default FIND_SIMILAR_K.default. */
  k?: number;
  /** Default: hamming for a binary band, else cosine. */
  mode?: SimilarMode;
  /** Default: exact when the band holds at most EXACT_MAX_CELLS vectors, else the approximate graph. */
  exact?: boolean;
}

/** Cells held per band by the index (about 0.9 KB each for a 128-D band: docs/performance.md). */
export const INDEX_MAX_CELLS_PER_BAND = 4_000_000;
/** Up to this many vectors a band is scanned exactly (a few ms); above it the graph answers unless `exact: true`. */
export const EXACT_MAX_CELLS = 20_000;
/** Candidates the graph proposes per neighbour asked, all re-scored exactly. */
const ANN_OVERSAMPLE = 2;
/** Radius of place_label_cached (docs/embeddings.md: nearest named place within about 25 km). */
const LABEL_RADIUS_KM = 25;
const INLINE_PREFIX = 'inline:';
/** The registered function of `geotessera.bin128`: sign bits of a fixed rotation (sources/geotessera.ts). */
const SIGN_BITS_FUNCTION = 'sign_bits_rotation@1';

const indexes = new WeakMap<object, VectorIndex>();

/** The responder's vector index, saved under the data directory (docs/embeddings.md, "The index on disk"). */
export function vectorIndexOf(ctx: ServiceContext): VectorIndex {
  let ix = indexes.get(ctx);
  if (!ix) {
    ix = new VectorIndex(ctx.store.log, ctx.registry.bands, { maxPerBand: INDEX_MAX_CELLS_PER_BAND, dir: join(ctx.config.dataDir, 'vector-index'), save: ctx.config.workerId <= 1 });
    indexes.set(ctx, ix);
  }
  return ix;
}

/** Loads the saved index and follows the log from the responder's start (not from the first query). */
export function startVectorIndex(ctx: ServiceContext): void {
  const ix = vectorIndexOf(ctx);
  ix.follow();
  void ix.refresh(Date.now()).catch(() => undefined);
}

/** Saves the index and stops following (at the responder's close). */
export async function closeVectorIndex(ctx: ServiceContext): Promise<void> {
  await indexes.get(ctx)?.close();
}

/** The literal vector of an `inline:[x, y, …]` key. */
function parseInline(key: string, band: BandEntry): number[] {
  let v: unknown;
  try {
    v = JSON.parse(key.slice(INLINE_PREFIX.length));
  } catch {
    throw invalidArgument('key', 'inline: expected a JSON array of numbers, e.g. inline:[0.1,-0.2,…]');
  }
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'number' && Number.isFinite(x))) throw invalidArgument('key', 'inline: expected a JSON array of finite numbers');
  if (band.dim !== undefined && v.length !== band.dim) throw invalidArgument('key', `inline: ${band.key} vectors have ${band.dim} values, got ${v.length}`);
  return v as number[];
}

interface Query {
  kind: 'cell' | 'inline';
  cell?: string;
  /** The query's vector under each band the mode reads (real-valued and/or binary). */
  real?: IndexedVector;
  code?: IndexedVector;
}

/** The newest public primary vector of a cell under a band: the store first, then the index. */
async function cellVector(ctx: ServiceContext, ix: VectorIndex, band: BandEntry, cell: string): Promise<IndexedVector | undefined> {
  const [f] = await ctx.store.latest({ cell, bands: [band.key], scope: null });
  if (f && f.kind === 'primary') {
    const v = indexedVector(band, cell, f.tslot, f.fact_cid, f.body.value);
    if (v) return v;
  }
  return ix.get(band.key, cell);
}

async function noVector(ctx: ServiceContext, cell: string, band: string): Promise<SvcError> {
  const attested = await ctx.store.bandsAt(cell, null);
  const vectors = attested.filter((b) => ctx.registry.bands.get(b)?.value_kind === 'vector');
  const hint =
    vectors.length > 0
      ? `vector bands attested at this cell: ${vectors.join(', ')}`
      : `no vector band is attested at this cell (bands here: ${attested.join(', ') || 'none'}); recall it with bands ["${band}"] to materialize one`;
  return new SvcError('cid_not_found', `key: the cell has no ${band} vector; ${hint}`, { field: 'key', cell, band, bands_attested_at_cell: attested, hint });
}

/** How many codes the Hamming triage hands to the cosine re-rank. */
export function triageSize(k: number): number {
  return Math.max(100, 10 * k);
}

function placeLabel(lat: number, lng: number): string | null {
  const g = gazetteer();
  const near = g.grid.within(lat, lng, LABEL_RADIUS_KM)[0];
  if (!near) return null;
  return `${g.cities.name[near.i]}, ${g.cities.country[near.i]}`;
}

/**
 * A neighbour as docs/embeddings.md ("find_similar") shapes it: lat and lng are the cell's centre,
 * null (never absent) for an undecodable cell and for every neighbour of an inline query; the place
 * label comes from the cell itself either way.
 */
function neighbour(score: number, v: IndexedVector, inlineQuery: boolean) {
  let centre: { lat: number; lng: number } | null = null;
  try {
    centre = cellCenter(v.cell);
  } catch {
    // An undecodable cell has no centre and no label.
  }
  return {
    cell: v.cell,
    score: round(score),
    lat: inlineQuery || !centre ? null : centre.lat,
    lng: inlineQuery || !centre ? null : centre.lng,
    fact_cid: v.fact_cid,
    tslot: v.tslot,
    place_label_cached: centre ? placeLabel(centre.lat, centre.lng) : null,
  };
}

export async function findSimilar(ctx: ServiceContext, req: FindSimilarRequest, opts: { deadline?: number } = {}) {
  const band = requireBand(ctx, req.band ?? 'geotessera', 'band');
  if (band.value_kind !== 'vector')
    throw invalidArgument(
      'band',
      `${band.key} is not a vector band (vector bands: ${ctx.registry.bandList
        .filter((b) => b.value_kind === 'vector')
        .map((b) => b.key)
        .join(', ')})`,
    );
  const binary = isBinaryBand(band.key);
  const mode: SimilarMode = req.mode ?? (binary ? 'hamming' : 'cosine');
  if (binary && mode !== 'hamming') throw invalidArgument('mode', `${band.key} holds binary codes: only hamming applies (use the real-valued band for ${mode})`);
  const k = req.k ?? FIND_SIMILAR_K.default;
  // The bands the mode reads: codes for Hamming, real vectors for cosine.
  const codeBand = binary ? band : mode === 'cosine' ? undefined : ctx.registry.bands.get(band.key + BINARY_SUFFIX);
  if (mode !== 'cosine' && !codeBand) throw invalidArgument('mode', `${band.key} has no binary sibling ${band.key}${BINARY_SUFFIX} in the registry: use mode cosine`);
  const realBand = binary ? undefined : mode === 'hamming' ? undefined : band;

  const ix = vectorIndexOf(ctx);
  const query: Query = { kind: req.key.startsWith(INLINE_PREFIX) ? 'inline' : 'cell' };
  if (query.kind === 'inline') {
    const values = parseInline(req.key, band);
    const real = binary ? undefined : indexedVector(band, '', 0, '', values);
    if (realBand && !real) throw invalidArgument('key', 'inline: the vector does not fit the band');
    query.real = real;
    if (codeBand) {
      // A real-valued query is coded with the binary band's own registered function.
      const bits = binary ? values : codeBand.function === SIGN_BITS_FUNCTION ? signBits(values) : undefined;
      query.code = bits && indexedVector(codeBand, '', 0, '', bits);
      if (!query.code) throw invalidArgument('key', binary ? 'inline: a binary code holds only 0 and 1' : `inline: no coding rule for ${band.key} → ${codeBand.key}; use mode cosine`);
    }
  } else {
    const { cell } = await resolveCell(ctx, req.key, 'key');
    query.cell = cell;
    if (realBand) {
      query.real = await cellVector(ctx, ix, realBand, cell);
      if (!query.real) throw await noVector(ctx, cell, realBand.key);
    }
    if (codeBand) {
      query.code = await cellVector(ctx, ix, codeBand, cell);
      if (!query.code) throw await noVector(ctx, cell, codeBand.key);
    }
  }

  // Catch up with the log, leaving time to answer; an unfinished catch-up is stated, not hidden.
  const deadline = opts.deadline ?? Date.now() + 10_000;
  const state: IndexState = await ix.refresh(Date.now() + Math.max(50, (deadline - Date.now()) * 0.8));

  let ranked: Scored[];
  let candidates: number;
  let exact = true;
  let rescored: number | undefined;
  if (mode === 'cosine') {
    const arena = ix.arena(band.key)!;
    const graph = ix.graph(band.key)!;
    candidates = arena.live;
    exact = req.exact ?? candidates <= EXACT_MAX_CELLS;
    if (exact) ranked = cosineTopK(arena, query.real!, k, query.cell);
    else {
      // The graph proposes; vectors not yet in it are scanned; every candidate is scored exactly.
      const proposed = new Set<number>(graph.search(query.real!.values!, ANN_OVERSAMPLE * k + 1));
      for (const s of graph.pending) proposed.add(s);
      rescored = proposed.size;
      ranked = cosineTopK(arena, query.real!, k, query.cell, proposed);
    }
  } else if (mode === 'hamming') {
    const codes = ix.arena(codeBand!.key)!;
    candidates = codes.live;
    ranked = hammingTopK(codes, query.code!, k, query.cell);
  } else {
    const codes = ix.arena(codeBand!.key)!;
    candidates = codes.live;
    const triaged = hammingTopK(codes, query.code!, triageSize(k), query.cell);
    const survivors = triaged.map((t) => ix.get(band.key, t.v.cell)).filter((v): v is IndexedVector => v !== undefined);
    ranked = rank(survivors, k, query.cell, (v) => cosineOf(query.real!, v));
  }

  const neighbors = ranked.map((r) => neighbour(r.score, r.v, query.kind === 'inline'));
  const queryFacts = [query.real, query.code].filter((v): v is IndexedVector => v !== undefined && v.fact_cid !== '');
  const cells = [...new Set([...(query.cell ? [query.cell] : []), ...neighbors.map((n) => n.cell)])];
  const factCids = [...new Set([...queryFacts.map((v) => v.fact_cid), ...neighbors.map((n) => n.fact_cid)])];
  const first = factCids.length > 0 ? await ctx.store.getFact(factCids[0]) : null;
  const receipt = issueReceipt(ctx, 'find_similar', cells, factCids, { merkle_proof: first?.proof, cost: { credits: 0, was_cached: false } });

  const caveats: string[] = [];
  if (!state.complete)
    caveats.push(`the search index had read ${state.entries_read} of ${state.log_size} log entries when time ran out: later facts were not searched; repeat the call to search them`);
  const capped = [band.key, codeBand?.key].filter((b): b is string => b !== undefined && ix.isCapped(b));
  if (!exact) caveats.push(`approximate search (HNSW graph, ${rescored} candidates re-scored exactly): a true neighbour can be missed, never misscored; pass exact: true for the full scan`);
  if (capped.length > 0) caveats.push(`the search index holds at most ${INDEX_MAX_CELLS_PER_BAND} cells per band and is full for ${capped.join(', ')}: cells first stored after that are not searched`);
  if (neighbors.length < k) caveats.push(`${neighbors.length} neighbour(s) found for k = ${k}: only stored public vectors are searched (nothing is fetched)`);
  return {
    band: band.key,
    mode,
    k,
    query: {
      kind: query.kind,
      ...(query.cell ? { cell: query.cell } : {}),
      ...(query.real?.fact_cid ? { fact_cid: query.real.fact_cid, tslot: query.real.tslot } : {}),
      ...(query.code?.fact_cid ? { code_fact_cid: query.code.fact_cid } : {}),
    },
    neighbors,
    searched: {
      candidates,
      exact,
      index: exact ? null : { kind: 'hnsw', ...ANN_PARAMS, rescored: rescored! },
      index_complete: state.complete,
      log_entries_read: state.entries_read,
      log_size: state.log_size,
    },
    caveats,
    receipt,
  };
}
