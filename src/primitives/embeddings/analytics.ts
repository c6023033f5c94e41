/**
 * Embedding analytics over regions (docs/embeddings.md, "Analytics over regions"), each answer
 * signed over every cell and fact_cid it used and citing its registry algorithm:
 *   embedding_centroid        the unit mean of a region's vectors, named by a centroid_cid;
 *   region_similarity         the cosine of two regions' centroids;
 *   embedding_diversity       the mean pairwise cosine distance of a region's vectors;
 *   neighborhood_consistency  the mean cosine of a cell's vector to its 8 neighbours'.
 * Stored facts only (nothing is fetched). Too few vectors answer `status: "inconclusive"` with
 * the counts seen and a reason — never a zero vector or a made-up score.
 */
import { cellCenter, neighbours as gridNeighbours } from '../../protocol/cell64.js';
import type { Receipt, Scope } from '../../protocol/receipt.js';
import type { BandEntry } from '../../registry/registry.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import { optionalTslot } from '../reads/common.js';
import { requestScope } from '../scopes/request.js';
import { placeCaveats, resolvePlace, type PlaceInput } from '../shortcuts/place.js';
import { ALGORITHMS, DIVERSITY_EXACT_MAX, centroidCid, centroidRecord, cosineOf, meanPairwiseDistance, score, seededSubset, unitCentroid } from './analytics-math.js';
import { ANALYTICS_DEFAULT_CELLS, DEFAULT_ENCODER, encoderBand, mixedSlotCaveat, readVectors, regionCells, tslotsOf, type CellVector, type RegionCells, type RegionInput } from './analytics-region.js';

const STORED_ONLY = 'Stored facts only: nothing is fetched, and cells without a stored vector do not count.';

interface Common {
  encoder?: string;
  tslot?: number;
  scope?: Scope;
}

export interface CentroidRequest extends RegionInput, Common {
  max_cells?: number;
}

export interface SimilarityRequest extends Common {
  a: RegionInput;
  b: RegionInput;
  max_cells?: number;
}

export interface DiversityRequest extends CentroidRequest {
  seed?: number;
}

export type ConsistencyRequest = Pick<PlaceInput, 'place' | 'lat' | 'lng' | 'cell64'> & Common;

/** What every analytics read starts from: the encoder, the slot asked and the scope read. */
function setup(ctx: ServiceContext, req: Common) {
  const band = encoderBand(ctx, req.encoder ?? DEFAULT_ENCODER);
  const tslot = optionalTslot(ctx, req.tslot, band, 'tslot');
  const scope = requestScope(req.scope);
  return { band, tslot, scope, dim: band.dim as number };
}

/** A receipt over the cells and fact_cids used; merkle_proof proves fact_cids[0]. */
function sign(ctx: ServiceContext, primitive: string, cells: readonly string[], used: readonly CellVector[], factCids: readonly string[], scope: Scope | undefined): Receipt {
  const first = used.find((v) => v.fact_cid === factCids[0]);
  return issueReceipt(ctx, primitive, [...new Set(cells)], [...new Set(factCids)], { scope, merkle_proof: first?.fact.proof, cost: { credits: 0, was_cached: false } });
}

const sorted = (vs: readonly CellVector[]) => vs.map((v) => v.fact_cid).sort();

/** The counts of a region read that every region answer carries. */
function regionCounts(rc: RegionCells, read: Awaited<ReturnType<typeof readVectors>>) {
  return {
    cells_sampled: rc.cells.length,
    cells_with_vector: read.vectors.length,
    cells_absent: read.absences,
    cells_unusable: read.unusable,
  };
}

async function centroidSide(ctx: ServiceContext, band: BandEntry, region: RegionInput, maxCells: number, scope: Scope | undefined, tslot: number | undefined, prefix = '') {
  const rc = await regionCells(ctx, region, maxCells, scope ?? null, prefix);
  const read = await readVectors(ctx, band, rc.cells, scope ?? null, tslot);
  const c = unitCentroid(read.vectors.map((v) => v.values));
  const factCids = sorted(read.vectors);
  const tslots = tslotsOf(read.vectors);
  const base = { ...regionCounts(rc, read), fact_cids: factCids, tslots, region: rc.region, is_exhaustive: rc.is_exhaustive, sampling: rc.sampling };
  const caveats = [...rc.caveats, ...(tslot === undefined ? mixedSlotCaveat(tslots) : [])];
  if (c === null) {
    const none = read.vectors.length === 0;
    return {
      side: {
        status: 'inconclusive' as const,
        reason: none ? ('no_vectors' as const) : ('zero_mean' as const),
        detail: none
          ? `no stored ${band.key} vector${tslot !== undefined ? ` at tslot ${tslot}` : ''} in the region (${rc.cells.length} cell(s) read, ${read.absences} signed absence(s), ${read.unusable} unusable value(s)); a recall of ${band.key} at a cell stores one`
          : `the ${read.vectors.length} vectors cancel out: their mean has no direction`,
        centroid: null,
        centroid_cid: null,
        ...base,
      },
      used: read.vectors,
      caveats,
    };
  }
  const record = centroidRecord(band.key, band.dim as number, c, factCids);
  return { side: { status: 'ok' as const, centroid: c, centroid_cid: centroidCid(record), ...base }, used: read.vectors, caveats };
}

/** The unit mean of a region's vectors and its centroid_cid. */
export async function embeddingCentroid(ctx: ServiceContext, req: CentroidRequest) {
  const { band, tslot, scope, dim } = setup(ctx, req);
  const { side, used, caveats } = await centroidSide(ctx, band, req, req.max_cells ?? ANALYTICS_DEFAULT_CELLS, scope, tslot);
  const receipt = sign(
    ctx,
    'embedding_centroid',
    used.map((v) => v.cell),
    used,
    side.fact_cids,
    scope,
  );
  return { ...side, algorithm: ALGORITHMS.centroid, encoder: band.key, dim, caveats: [STORED_ONLY, ...caveats], receipt };
}

/** The cosine of two regions' centroids. */
export async function regionSimilarity(ctx: ServiceContext, req: SimilarityRequest) {
  const { band, tslot, scope, dim } = setup(ctx, req);
  const maxCells = req.max_cells ?? ANALYTICS_DEFAULT_CELLS;
  const a = await centroidSide(ctx, band, req.a, maxCells, scope, tslot, 'a.');
  const b = await centroidSide(ctx, band, req.b, maxCells, scope, tslot, 'b.');
  const used = [...a.used, ...b.used];
  const receipt = sign(
    ctx,
    'region_similarity',
    used.map((v) => v.cell),
    used,
    [...new Set([...a.side.fact_cids, ...b.side.fact_cids])].sort(),
    scope,
  );
  const head = { algorithm: ALGORITHMS.similarity, centroid_algorithm: ALGORITHMS.centroid, encoder: band.key, dim };
  const caveats = [STORED_ONLY, ...a.caveats, ...b.caveats];
  if (a.side.centroid === null || b.side.centroid === null) {
    const sides = [a.side.centroid === null ? `a: ${a.side.detail}` : '', b.side.centroid === null ? `b: ${b.side.detail}` : ''].filter(Boolean);
    return { status: 'inconclusive' as const, reason: 'side_inconclusive' as const, detail: sides.join('; '), ...head, similarity: null, a: a.side, b: b.side, caveats, receipt };
  }
  return { status: 'ok' as const, ...head, similarity: cosineOf(a.side.centroid, b.side.centroid), a: a.side, b: b.side, caveats, receipt };
}

/** The mean pairwise cosine distance of a region's vectors (a seeded subset above DIVERSITY_EXACT_MAX). */
export async function embeddingDiversity(ctx: ServiceContext, req: DiversityRequest) {
  const { band, tslot, scope, dim } = setup(ctx, req);
  const seed = req.seed ?? 0;
  const rc = await regionCells(ctx, req, req.max_cells ?? ANALYTICS_DEFAULT_CELLS, scope ?? null);
  const read = await readVectors(ctx, band, rc.cells, scope ?? null, tslot);
  const used = seededSubset(read.vectors, DIVERSITY_EXACT_MAX, seed);
  const { diversity, pairs } = meanPairwiseDistance(used.map((v) => v.values));
  const sampled = used.length < read.vectors.length;
  const factCids = sorted(used);
  const tslots = tslotsOf(used);
  const vectorSample = {
    method: sampled ? ('seeded_subset' as const) : ('all' as const),
    threshold: DIVERSITY_EXACT_MAX,
    seed,
    vectors_available: read.vectors.length,
    vectors_used: used.length,
    pairs,
  };
  const caveats = [STORED_ONLY, ...rc.caveats, ...(tslot === undefined ? mixedSlotCaveat(tslots) : [])];
  if (sampled)
    caveats.push(
      `${read.vectors.length} vectors exceed ${DIVERSITY_EXACT_MAX}: the mean is over every pair of the ${used.length} whose BLAKE3("${ALGORITHMS.diversity}|${seed}|" fact_cid) is smallest (the same request gives the same subset; another seed draws another).`,
    );
  const receipt = sign(
    ctx,
    'embedding_diversity',
    used.map((v) => v.cell),
    used,
    factCids,
    scope,
  );
  const body = {
    algorithm: ALGORITHMS.diversity,
    encoder: band.key,
    dim,
    diversity,
    ...regionCounts(rc, read),
    vector_sample: vectorSample,
    fact_cids: factCids,
    tslots,
    region: rc.region,
    is_exhaustive: rc.is_exhaustive,
    sampling: rc.sampling,
    caveats,
    receipt,
  };
  if (diversity === null) {
    return {
      status: 'inconclusive' as const,
      reason: 'too_few_vectors' as const,
      detail: `${read.vectors.length} of the ${rc.cells.length} cells read hold a stored ${band.key} vector; diversity needs at least 2`,
      ...body,
    };
  }
  return { status: 'ok' as const, ...body };
}

/** The mean cosine of a cell's vector to its 8 grid neighbours' vectors. */
export async function neighborhoodConsistency(ctx: ServiceContext, req: ConsistencyRequest) {
  const { band, tslot, scope, dim } = setup(ctx, req);
  const where = await resolvePlace(ctx, { place: req.place, lat: req.lat, lng: req.lng, cell64: req.cell64 }, { allowCell64: true });
  const cell = where.loc.cell64;
  const ring = gridNeighbours(cell);
  const read = await readVectors(ctx, band, [cell, ...ring], scope ?? null, tslot);
  const centre = read.byCell[0];
  const around = ring.map((c, i) => ({ cell: c, v: read.byCell[i + 1] }));
  const scored = around.map(({ cell: c, v }) => ({
    cell: c,
    fact_cid: v?.fact_cid ?? null,
    tslot: v?.tslot ?? null,
    cosine: centre && v ? cosineOf(centre.values, v.values) : null,
  }));
  const withVector = around.filter((n) => n.v !== undefined).map((n) => n.v as CellVector);
  const used = centre ? [centre, ...withVector] : [];
  const receipt = sign(
    ctx,
    'neighborhood_consistency',
    centre ? [cell, ...withVector.map((v) => v.cell)] : [cell],
    used,
    used.map((v) => v.fact_cid),
    scope,
  );
  const tslots = tslotsOf(used);
  const caveats = [STORED_ONLY, ...placeCaveats(where), ...(tslot === undefined ? mixedSlotCaveat(tslots) : [])];
  const { lat, lng } = cellCenter(cell);
  const place =
    where.input === 'place'
      ? {
          place: {
            query: where.query ?? '',
            label: where.loc.label,
            lat: where.loc.lat,
            lng: where.loc.lng,
            via: String(where.loc.via),
            is_high_confidence: where.loc.selected?.is_high_confidence ?? false,
          },
        }
      : {};
  const body = {
    algorithm: ALGORITHMS.consistency,
    encoder: band.key,
    dim,
    cell,
    lat,
    lng,
    ...place,
    fact_cid: centre?.fact_cid ?? null,
    tslot: centre?.tslot ?? null,
    neighbours: scored,
    neighbours_total: ring.length,
    neighbours_with_vector: withVector.length,
    caveats,
    receipt,
  };
  const cosines = scored.map((s) => s.cosine).filter((c): c is number => c !== null);
  if (!centre || cosines.length === 0) {
    const reason = !centre ? ('no_vector_at_cell' as const) : ('no_neighbour_vectors' as const);
    const detail = !centre
      ? `the cell holds no stored ${band.key} vector${tslot !== undefined ? ` at tslot ${tslot}` : ''}; recall ${band.key} at the cell to store one`
      : `none of the ${ring.length} neighbouring cells holds a stored ${band.key} vector${tslot !== undefined ? ` at tslot ${tslot}` : ''}`;
    return { status: 'inconclusive' as const, reason, detail, ...body, consistency: null, outlier_score: null };
  }
  const consistency = Math.max(-1, Math.min(1, cosines.reduce((s, c) => s + c, 0) / cosines.length));
  return { status: 'ok' as const, ...body, consistency: score(consistency), outlier_score: score(1 - consistency) };
}
