/**
 * region_archetype_map (POST /v1/region_archetype_map; docs/rasters.md, "region_archetype_map"):
 * the GeoTessera embeddings of a region (a place, polygon, box or cell list) clustered into k
 * archetypes. The embeddings are the tessera_field of the region's box (made, or found, through
 * tessera_field itself), kept to the pixels whose centres lie in the region, L2-normalised, and
 * clustered by archetype-kmeans.ts with a seed derived from the region's aoi_cid and k. The map is
 * a float32 grid artifact (the band_raster grid format: archetype ids, NaN outside the region and
 * where there is no embedding); the signed record `region_archetype_map@1` pins the region, the
 * field record and artifact it read, the method and seed, every centroid and the map's cid. Too
 * few pixels is a signed `inconclusive` record with the count observed.
 */
import { bytesCid } from '../../protocol/cid.js';
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import { toHex } from '../../protocol/bytes.js';
import type { Receipt } from '../../protocol/receipt.js';
import { BoundedCache } from '../../lib/cache.js';
import { Pool } from '../../lib/pool.js';
import type { StoredFact } from '../../store/contract.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import type { Affine, GriddedArtifact, LatLngBox } from './geometry.js';
import { encodeGrid, GRID_MEDIA_TYPE } from './grid-format.js';
import { KMEANS_MAX_ITERATIONS, kmeans, kmeansSeed } from './archetype-kmeans.js';
import { regionOfSigned, resolveRegion, type PlaceBlock, type Region, type RegionRequest, type SignedRegion } from './archetype-region.js';
import { pixelCentres } from './tessera-assemble.js';
import { checkYear, fieldForBox, fieldSamples, type FieldOutcome } from './tessera-field.js';
import { pixelVector, type EmbeddingField } from './tessera-format.js';
import { ARCHETYPE_RECIPE, areaToken, isRecordOf, keepRecord, TESSERA_FIELD_RECIPE, type FieldRecord } from './tessera-record.js';
import { checkDeadline } from './upstream.js';

export const ARCHETYPE_K = { min: 2, max: 16, default: 6 } as const;
/** Pixels per archetype a map needs at least: fewer in the region is `inconclusive`. */
export const MIN_PIXELS_PER_ARCHETYPE = 10;
export const ARCHETYPE_METHOD = {
  distance: 'euclidean_on_l2_normalised',
  init: 'greedy_kmeans++',
  prng: 'xoshiro128**',
  max_iterations: KMEANS_MAX_ITERATIONS,
  min_pixels_per_archetype: MIN_PIXELS_PER_ARCHETYPE,
} as const;

export interface ArchetypeRequest extends RegionRequest {
  year: number;
  k: number;
}

export interface Archetype {
  id: number;
  pixels: number;
  fraction: number;
  centroid_cid: string;
  centroid: number[];
}

/** The value of a region_archetype_map derivation record (every field is signed). */
export interface ArchetypeRecord {
  recipe: typeof ARCHETYPE_RECIPE;
  region: SignedRegion;
  aoi_cid: string;
  year: number;
  k: number;
  field: { derivation_cid: string; artifact_cid: string; aoi_cid: string };
  method: typeof ARCHETYPE_METHOD & { seed: string };
  region_pixels: number;
  valid_pixels: number;
  result: 'map' | 'inconclusive';
  reason?: 'too_few_pixels' | 'too_few_distinct';
  required_pixels?: number;
  iterations?: number;
  converged?: boolean;
  inertia?: number;
  archetypes?: Archetype[];
  grid?: { epsg: number; geotransform: Affine; width: number; height: number };
  artifact?: { cid: string; media_type: string; bytes: number };
  source_versions: Record<string, string>;
}

type RegionBlock = { kind: SignedRegion['kind']; bbox: LatLngBox; place?: PlaceBlock };
type FieldRef = { token: string; derivation_cid: string; artifact_cid: string };

export interface ArchetypeMapAnswer extends GriddedArtifact {
  status: 'map';
  token: string;
  aoi_cid: string;
  region: RegionBlock;
  year: number;
  k: number;
  nodata: 'NaN';
  archetypes: Archetype[];
  region_pixels: number;
  valid_pixels: number;
  inertia: number;
  iterations: number;
  converged: boolean;
  method: ArchetypeRecord['method'];
  field: FieldRef;
  receipt: Receipt;
}

export interface ArchetypeInconclusive {
  status: 'inconclusive';
  aoi_cid: string;
  region: RegionBlock;
  year: number;
  k: number;
  derivation_cid: string;
  record: string;
  reason: 'too_few_pixels' | 'too_few_distinct';
  observed_pixels: number;
  required_pixels: number;
  region_pixels: number;
  field: FieldRef;
  receipt: Receipt;
}

export interface ArchetypeAbsence {
  status: 'absence';
  aoi_cid: string;
  region: RegionBlock;
  year: number;
  k: number;
  absence: Extract<FieldOutcome, { kind: 'absence' }>['absence'];
  receipt: Receipt;
}

export type ArchetypeAnswer = ArchetypeMapAnswer | ArchetypeInconclusive | ArchetypeAbsence;

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;
const LE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** centroid_cid: b32 of the BLAKE3 of the centroid's 128 float32 values, little-endian. */
export function centroidCid(c: Float32Array): string {
  if (LE) return bytesCid(new Uint8Array(c.buffer, c.byteOffset, c.byteLength));
  const b = new Uint8Array(c.length * 4);
  const dv = new DataView(b.buffer);
  c.forEach((v, i) => dv.setFloat32(4 * i, v, true));
  return bytesCid(b);
}

export interface Clustering {
  region_pixels: number;
  valid_pixels: number;
  result: 'map' | 'inconclusive';
  reason?: 'too_few_pixels' | 'too_few_distinct';
  iterations?: number;
  converged?: boolean;
  inertia?: number;
  archetypes?: Archetype[];
  bytes?: Uint8Array;
}

/** The region's pixels of `f`, normalised and clustered; the map's bytes when there is one. */
export async function cluster(f: EmbeddingField, region: Region, aoi: string, k: number, deadline: number): Promise<Clustering> {
  const n = f.width * f.height;
  const { lat, lng } = pixelCentres(f);
  const dim = f.channels;
  const idx: number[] = [];
  let regionPixels = 0;
  const v = new Float32Array(dim);
  const x = new Float32Array(n * dim);
  for (let p = 0; p < n; p++) {
    if (!region.contains(lat[p], lng[p])) continue;
    regionPixels++;
    if (!pixelVector(f, p, v)) continue;
    let s = 0;
    for (let d = 0; d < dim; d++) s += v[d] * v[d];
    if (!(s > 0)) continue;
    const norm = Math.sqrt(s);
    const o = idx.length * dim;
    for (let d = 0; d < dim; d++) x[o + d] = v[d] / norm;
    idx.push(p);
  }
  const valid = idx.length;
  if (valid < MIN_PIXELS_PER_ARCHETYPE * k) return { region_pixels: regionPixels, valid_pixels: valid, result: 'inconclusive', reason: 'too_few_pixels' };
  // Between passes: let other requests run, and stop once the request's deadline has passed.
  const pause = () =>
    new Promise<void>((resolve, reject) =>
      setImmediate(() => {
        try {
          checkDeadline(deadline, 'region_archetype_map');
          resolve();
        } catch (e) {
          reject(e);
        }
      }),
    );
  const r = await kmeans(x.subarray(0, valid * dim), valid, dim, k, kmeansSeed(aoi, k), pause);
  if (!r) return { region_pixels: regionPixels, valid_pixels: valid, result: 'inconclusive', reason: 'too_few_distinct' };
  const values = new Float64Array(n).fill(Number.NaN);
  idx.forEach((p, i) => {
    values[p] = r.labels[i];
  });
  const bytes = encodeGrid({ width: f.width, height: f.height, epsg: f.epsg, geotransform: f.geotransform, values });
  const archetypes: Archetype[] = r.counts.map((count, j) => {
    const c = r.centroids.subarray(j * dim, (j + 1) * dim);
    return { id: j, pixels: count, fraction: round6(count / valid), centroid_cid: centroidCid(c), centroid: Array.from(c) };
  });
  return { region_pixels: regionPixels, valid_pixels: valid, result: 'map', iterations: r.iterations, converged: r.converged, inertia: round6(r.inertia), archetypes, bytes };
}

/** Maps clustered at once per process (each holds its field and ~33 MiB of normalised vectors at the cap). */
export const MAPS_AT_ONCE = 2;

type Made = { kind: 'absence'; absence: ArchetypeAbsence['absence'] } | { kind: 'record'; f: StoredFact & { body: { value: ArchetypeRecord } }; field: StoredFact & { body: { value: FieldRecord } } };

interface PerContext {
  pool: Pool;
  /** Identical requests in flight are made once. */
  inflight: Map<string, Promise<Made>>;
  /** Request (aoi_cid, year, k) → the record made for it. */
  made: BoundedCache<string, string>;
}
const perContext = new WeakMap<ServiceContext, PerContext>();
function stateOf(ctx: ServiceContext): PerContext {
  let s = perContext.get(ctx);
  if (!s) perContext.set(ctx, (s = { pool: new Pool(MAPS_AT_ONCE), inflight: new Map(), made: new BoundedCache('archetype_map_records', { max: 1024, ttlMs: 10 * 60_000 }) }));
  return s;
}

function regionBlock(region: Region): RegionBlock {
  return { kind: region.signed.kind, bbox: region.bbox, ...(region.place ? { place: region.place } : {}) };
}

/** The answer from a signed record (made now or found). */
export function archetypeAnswer(
  ctx: ServiceContext,
  region: RegionBlock,
  f: StoredFact & { body: { value: ArchetypeRecord } },
  field: StoredFact & { body: { value: FieldRecord } },
): ArchetypeMapAnswer | ArchetypeInconclusive {
  const v = f.body.value;
  const fieldRef: FieldRef = {
    token: areaToken(ctx.config.prefix, 'tessera', { aoi_cid: field.body.value.aoi_cid, n: field.body.value.year, derivation_cid: field.fact_cid }),
    derivation_cid: field.fact_cid,
    artifact_cid: field.body.value.artifact.cid,
  };
  const receipt = issueReceipt(ctx, 'region_archetype_map', [f.cell, field.cell], [f.fact_cid, field.fact_cid], {
    field: { aoi_cid: v.aoi_cid, derivation_cid: f.fact_cid },
    merkle_proof: f.proof,
    source_versions: v.source_versions,
  });
  const base = { aoi_cid: v.aoi_cid, region, year: v.year, k: v.k, derivation_cid: f.fact_cid, record: `${ctx.config.prefix}:fact:${f.cell}:${f.fact_cid}` };
  if (v.result === 'inconclusive') {
    return { status: 'inconclusive', ...base, reason: v.reason!, observed_pixels: v.valid_pixels, required_pixels: v.required_pixels!, region_pixels: v.region_pixels, field: fieldRef, receipt };
  }
  const g = v.grid!;
  return {
    status: 'map',
    token: areaToken(ctx.config.prefix, 'archetypes', { aoi_cid: v.aoi_cid, n: v.k, derivation_cid: f.fact_cid }),
    ...base,
    artifact_cid: v.artifact!.cid,
    artifact_url: `/v1/artifacts/${v.artifact!.cid}`,
    media_type: v.artifact!.media_type,
    bytes: v.artifact!.bytes,
    width: g.width,
    height: g.height,
    epsg: g.epsg,
    geotransform: g.geotransform,
    pixel_size_m: g.geotransform[1],
    nodata: 'NaN',
    archetypes: v.archetypes!,
    region_pixels: v.region_pixels,
    valid_pixels: v.valid_pixels,
    inertia: v.inertia!,
    iterations: v.iterations!,
    converged: v.converged!,
    method: v.method,
    field: fieldRef,
    receipt,
  };
}

/** Checks k against its bounds (the schema does too; internal callers do not pass through it). */
export function checkK(k: number): void {
  if (!Number.isInteger(k) || k < ARCHETYPE_K.min || k > ARCHETYPE_K.max) throw invalidArgument('k', `${k} is not an integer in ${ARCHETYPE_K.min}..${ARCHETYPE_K.max}`);
}

/** The field, the clustering and the signed record of a region (or the field's absence). */
async function make(ctx: ServiceContext, region: Region, year: number, k: number, deadline: number): Promise<Made> {
  const out = await fieldForBox(ctx, region.bbox, year, deadline);
  if (out.kind === 'absence') return { kind: 'absence', absence: out.absence };
  const samples = await fieldSamples(ctx, out, deadline);
  const c = await cluster(samples, region, region.aoi_cid, k, deadline);
  checkDeadline(deadline, 'region_archetype_map');
  const fv = out.record;
  const record: ArchetypeRecord = {
    recipe: ARCHETYPE_RECIPE,
    region: region.signed,
    aoi_cid: region.aoi_cid,
    year,
    k,
    field: { derivation_cid: out.fact.fact_cid, artifact_cid: fv.artifact.cid, aoi_cid: fv.aoi_cid },
    method: { ...ARCHETYPE_METHOD, seed: toHex(kmeansSeed(region.aoi_cid, k)) },
    region_pixels: c.region_pixels,
    valid_pixels: c.valid_pixels,
    result: c.result,
    ...(c.result === 'inconclusive'
      ? { reason: c.reason, required_pixels: MIN_PIXELS_PER_ARCHETYPE * k }
      : {
          iterations: c.iterations,
          converged: c.converged,
          inertia: c.inertia,
          archetypes: c.archetypes,
          grid: { epsg: samples.epsg, geotransform: samples.geotransform, width: samples.width, height: samples.height },
          artifact: { cid: bytesCid(c.bytes!), media_type: GRID_MEDIA_TYPE, bytes: c.bytes!.length },
        }),
    source_versions: fv.source_versions,
  };
  const fact = await keepRecord(ctx, record as unknown as ArchetypeRecord & Record<string, unknown>, 'region_archetype_map', { k, year, field: out.fact.fact_cid });
  if (c.bytes) await ctx.store.artifacts.put(GRID_MEDIA_TYPE, c.bytes, areaToken(ctx.config.prefix, 'archetypes', { aoi_cid: region.aoi_cid, n: k, derivation_cid: fact.fact_cid }));
  stateOf(ctx).made.set(`${region.aoi_cid}|${year}|${k}`, fact.fact_cid);
  return { kind: 'record', f: fact as StoredFact & { body: { value: ArchetypeRecord } }, field: out.fact as StoredFact & { body: { value: FieldRecord } } };
}

/** POST /v1/region_archetype_map. */
export async function regionArchetypeMap(ctx: ServiceContext, input: ArchetypeRequest, o: { deadline: number }): Promise<ArchetypeAnswer> {
  const k = input.k;
  checkK(k);
  checkYear(ctx, input.year);
  const region = await resolveRegion(ctx, input);
  const block = regionBlock(region);
  const st = stateOf(ctx);
  const key = `${region.aoi_cid}|${input.year}|${k}`;
  const known = st.made.get(key);
  if (known) {
    const f = await ctx.store.getFact(known);
    const field = isRecordOf<ArchetypeRecord>(f, ARCHETYPE_RECIPE) ? await ctx.store.getFact(f.body.value.field.derivation_cid) : null;
    if (isRecordOf<ArchetypeRecord>(f, ARCHETYPE_RECIPE) && isRecordOf<FieldRecord>(field, TESSERA_FIELD_RECIPE)) {
      if (f.body.value.artifact) await ensureArchetypeArtifact(ctx, f, o.deadline);
      return archetypeAnswer(ctx, block, f, field);
    }
  }
  let p = st.inflight.get(key);
  if (!p) {
    p = st.pool.run(() => make(ctx, region, input.year, k, o.deadline)).finally(() => st.inflight.delete(key));
    st.inflight.set(key, p);
  }
  const m = await p;
  if (m.kind === 'absence') {
    return { status: 'absence', aoi_cid: region.aoi_cid, region: block, year: input.year, k, absence: m.absence, receipt: issueReceipt(ctx, 'region_archetype_map', [], []) };
  }
  return archetypeAnswer(ctx, block, m.f, m.field);
}

/** Rebuilds in flight per responder (one evicted map asked for twice at once is made once). */
const rebuilds = new WeakMap<ServiceContext, Map<string, Promise<void>>>();

/**
 * Makes the map of `f` again when its artifact is not held: the pinned field (itself rebuilt if
 * evicted), the signed region, k and seed; the bytes and every centroid must match the record.
 */
export async function ensureArchetypeArtifact(ctx: ServiceContext, f: StoredFact & { body: { value: ArchetypeRecord } }, deadline: number): Promise<'stored' | 'rebuilt'> {
  const v = f.body.value;
  if (!v.artifact) throw new SvcError('cid_not_found', `record ${f.fact_cid} is an inconclusive archetype map: it has no artifact`, { derivation_cid: f.fact_cid });
  if ((await ctx.store.artifacts.info(v.artifact.cid))?.state === 'stored') return 'stored';
  let inflight = rebuilds.get(ctx);
  if (!inflight) rebuilds.set(ctx, (inflight = new Map()));
  let p = inflight.get(v.artifact.cid);
  if (!p) {
    const cid = v.artifact.cid;
    p = rebuildMap(ctx, f, deadline).finally(() => inflight.delete(cid));
    inflight.set(cid, p);
  }
  await p;
  return 'rebuilt';
}

async function rebuildMap(ctx: ServiceContext, f: StoredFact & { body: { value: ArchetypeRecord } }, deadline: number): Promise<void> {
  const v = f.body.value;
  const field = await ctx.store.getFact(v.field.derivation_cid);
  if (!isRecordOf<FieldRecord>(field, TESSERA_FIELD_RECIPE)) {
    throw new SvcError('cid_not_found', `the field record ${v.field.derivation_cid} this map was made from is not stored here`, { derivation_cid: v.field.derivation_cid });
  }
  const token = areaToken(ctx.config.prefix, 'tessera', { aoi_cid: field.body.value.aoi_cid, n: field.body.value.year, derivation_cid: field.fact_cid });
  const samples = await fieldSamples(ctx, { kind: 'field', fact: field, record: field.body.value, token }, deadline);
  const c = await cluster(samples, regionOfSigned(ctx, v.region), v.aoi_cid, v.k, deadline);
  const cid = c.bytes ? bytesCid(c.bytes) : null;
  const same = cid === v.artifact!.cid && c.archetypes!.every((a, i) => a.centroid_cid === v.archetypes![i].centroid_cid && a.pixels === v.archetypes![i].pixels);
  if (!same) {
    throw new SvcError('source_format_mismatch', `region_archetype_map rebuild: the map made again hashes to ${cid}, not to the signed ${v.artifact!.cid}; nothing was stored`, {
      reason: 'upstream_changed',
      artifact_cid: v.artifact!.cid,
      rebuilt_cid: cid,
    });
  }
  checkDeadline(deadline, 'region_archetype_map rebuild');
  await ctx.store.artifacts.put(GRID_MEDIA_TYPE, c.bytes!, areaToken(ctx.config.prefix, 'archetypes', { aoi_cid: v.aoi_cid, n: v.k, derivation_cid: f.fact_cid }));
}
