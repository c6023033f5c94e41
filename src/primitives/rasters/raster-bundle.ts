/**
 * raster_bundle (POST /v1/raster_bundle, POST /v1/raster_bundle/resolve; docs/rasters.md,
 * "raster_bundle"): a named set of 2 to 64 rasters. Each member is an existing svc:raster: token
 * or a band_raster request made on the spot; the set is the members' derivation_cids, sorted
 * and without repeats, and its anchor `set_cid` is a function of them alone, so the same set
 * always gives the same svc:rasterset: token. A signed record of the band `raster.derivation`
 * (recipe raster_bundle@1) lists the members; the receipt binds the record and every member's
 * record. Resolving the token gives every member's record and artifact, rebuilding those evicted.
 */
import { anchorId } from '../../protocol/cid.js';
import { SvcError } from '../../protocol/errors.js';
import type { Receipt } from '../../protocol/receipt.js';
import { parseRastersetToken, rastersetToken, rasterToken } from '../../protocol/token-grammar.js';
import { Pool } from '../../lib/pool.js';
import type { StoredFact } from '../../store/contract.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import { serveFact, type ServedFact } from '../facts/facts-view.js';
import { bandRaster, type BandRasterRequest } from './band-raster.js';
import { isBandRasterRecord, isRecordOf, keepRecord, type BandRasterRecord } from './derivation.js';
import { aoiCid, type LatLngBox } from './geometry.js';
import { RASTERS_AT_ONCE } from './recipe.js';
import { ensureRasterArtifact, rasterRecord } from './resolve.js';

export const RASTER_BUNDLE_RECIPE = 'raster_bundle@1';
/** Distinct rasters a bundle holds (`raster_bundle` at /v1/limits). */
export const RASTER_BUNDLE_LIMITS = { min: 2, max: 64 } as const;

/** A member as asked: an existing raster token, or a band_raster request. */
export type BundleItem = { token: string } | BandRasterRequest;

export interface RasterBundleRequest {
  rasters: BundleItem[];
}

/** A member as the record lists it. */
export interface BundleItemRecord {
  derivation_cid: string;
  token: string;
  aoi_cid: string;
  band: string;
  tslot: number;
  artifact: { cid: string; media_type: string; bytes: number };
}

/** The value of a raster_bundle record. */
export interface RasterBundleRecord {
  recipe: typeof RASTER_BUNDLE_RECIPE;
  set_cid: string;
  /** The smallest box holding every member's box, and its anchor (the receipt's field segment). */
  aoi: LatLngBox;
  aoi_cid: string;
  /** By derivation_cid. */
  members: BundleItemRecord[];
  source_versions: Record<string, string>;
}

export interface BundleItemAnswer {
  token: string;
  derivation_cid: string;
  aoi_cid: string;
  band: string;
  tslot: number;
  artifact_cid: string;
  artifact_url: string;
  media_type: string;
  bytes: number;
  /** Positions in `rasters` of the request items that gave this member. */
  from_request: number[];
}

export type RasterBundleAnswer =
  | { status: 'rasterset'; token: string; set_cid: string; aoi_cid: string; bbox: LatLngBox; derivation_cid: string; record: string; count: number; members: BundleItemAnswer[]; receipt: Receipt }
  | { status: 'absence'; absences: Array<{ index: number; aoi_cid: string; band: string; reason: string; detail: string }>; receipt: Receipt };

export interface RasterBundleResolveAnswer {
  token: string;
  set_cid: string;
  aoi_cid: string;
  bbox: LatLngBox;
  derivation_cid: string;
  record: ServedFact;
  members: Array<{
    token: string;
    derivation_cid: string;
    aoi_cid: string;
    band: string;
    tslot: number;
    record: ServedFact;
    artifact: { cid: string; media_type: string; bytes: number; url: string; state: 'stored' | 'rebuilt' };
  }>;
  receipt: Receipt;
}

type RasterFact = StoredFact & { body: { value: BandRasterRecord } };

/** The anchor of a set of derivation_cids (sorted, without repeats). */
export function setCid(derivationCids: readonly string[]): string {
  return anchorId({ kind: 'rasterset', members: [...new Set(derivationCids)].sort() });
}

/** `e` with the position of the bundle item it came from. */
function atItem(e: unknown, i: number): unknown {
  if (!(e instanceof SvcError)) return e;
  const field = typeof e.details.field === 'string' ? `rasters[${i}].${e.details.field}` : `rasters[${i}]`;
  return new SvcError(e.code, `rasters[${i}]: ${e.message}`, { ...e.details, field, index: i }, { status: e.httpStatus });
}

function envelope(boxes: LatLngBox[]): LatLngBox {
  return {
    min_lat: Math.min(...boxes.map((b) => b.min_lat)),
    min_lng: Math.min(...boxes.map((b) => b.min_lng)),
    max_lat: Math.max(...boxes.map((b) => b.max_lat)),
    max_lng: Math.max(...boxes.map((b) => b.max_lng)),
  };
}

function mergedVersions(values: Array<Record<string, string>>): Record<string, string> {
  const out: Record<string, Set<string>> = {};
  for (const v of values) for (const [k, x] of Object.entries(v)) for (const part of x.split(',')) (out[k] ??= new Set()).add(part);
  return Object.fromEntries(
    Object.entries(out)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, s]) => [k, [...s].sort().join(',')]),
  );
}

export async function rasterBundle(ctx: ServiceContext, input: RasterBundleRequest, o: { deadline: number }): Promise<RasterBundleAnswer> {
  const items = input.rasters;
  const { min, max } = RASTER_BUNDLE_LIMITS;
  if (!Array.isArray(items) || items.length < min || items.length > max) {
    throw new SvcError('invalid_argument', `rasters: a bundle holds ${min} to ${max} rasters, got ${Array.isArray(items) ? items.length : 'none'} (cap raster_bundle at /v1/limits)`, {
      field: 'rasters',
      cap: 'raster_bundle',
      min,
      max,
      got: Array.isArray(items) ? items.length : null,
    });
  }
  const got = await Promise.all(
    items.map(async (item, i): Promise<{ fact: RasterFact } | { absence: { index: number; aoi_cid: string; band: string; reason: string; detail: string } }> => {
      try {
        if ('token' in item) return { fact: await rasterRecord(ctx, item.token) };
        const r = await bandRaster(ctx, item, o);
        if (r.status === 'absence') return { absence: { index: i, aoi_cid: r.aoi_cid, band: r.band, reason: r.absence.reason, detail: r.absence.detail } };
        const f = await ctx.store.getFact(r.derivation_cid);
        if (!isBandRasterRecord(f)) throw new Error(`internal: raster record ${r.derivation_cid} cannot be read back`);
        return { fact: f };
      } catch (e) {
        throw atItem(e, i);
      }
    }),
  );
  const absences = got.flatMap((g) => ('absence' in g ? [g.absence] : []));
  if (absences.length > 0) return { status: 'absence', absences, receipt: issueReceipt(ctx, 'raster_bundle', [], []) };
  const byCid = new Map<string, { fact: RasterFact; from: number[] }>();
  got.forEach((g, i) => {
    if (!('fact' in g)) return;
    const m = byCid.get(g.fact.fact_cid);
    if (m) m.from.push(i);
    else byCid.set(g.fact.fact_cid, { fact: g.fact, from: [i] });
  });
  if (byCid.size < min) {
    throw new SvcError(
      'invalid_argument',
      `rasters: the ${items.length} items name ${byCid.size} distinct raster; a bundle holds ${min} to ${max} distinct rasters (cap raster_bundle at /v1/limits)`,
      {
        field: 'rasters',
        cap: 'raster_bundle',
        min,
        max,
        distinct: byCid.size,
      },
    );
  }
  const members = [...byCid.values()].sort((a, b) => (a.fact.fact_cid < b.fact.fact_cid ? -1 : 1));
  const prefix = ctx.config.prefix;
  const memberRecords: BundleItemRecord[] = members.map(({ fact }) => {
    const v = fact.body.value;
    return {
      derivation_cid: fact.fact_cid,
      token: rasterToken(prefix, { aoi_cid: v.aoi_cid, band: v.band, tslot: v.tslot, derivation_cid: fact.fact_cid }),
      aoi_cid: v.aoi_cid,
      band: v.band,
      tslot: v.tslot,
      artifact: { cid: v.artifact.cid, media_type: v.artifact.media_type, bytes: v.artifact.bytes },
    };
  });
  const aoi = envelope(members.map((m) => m.fact.body.value.aoi));
  const record: RasterBundleRecord = {
    recipe: RASTER_BUNDLE_RECIPE,
    set_cid: setCid(memberRecords.map((m) => m.derivation_cid)),
    aoi,
    aoi_cid: aoiCid(aoi),
    members: memberRecords,
    source_versions: mergedVersions(members.map((m) => m.fact.body.value.source_versions)),
  };
  const fact = await keepRecord(ctx, record, {
    primitive: 'raster_bundle',
    fn: RASTER_BUNDLE_RECIPE,
    sources: Object.keys(record.source_versions),
    args: { set_cid: record.set_cid, members: memberRecords.length },
  });
  const token = rastersetToken(prefix, { set_cid: record.set_cid, derivation_cid: fact.fact_cid });
  return {
    status: 'rasterset',
    token,
    set_cid: record.set_cid,
    aoi_cid: record.aoi_cid,
    bbox: aoi,
    derivation_cid: fact.fact_cid,
    record: `${prefix}:fact:${fact.cell}:${fact.fact_cid}`,
    count: memberRecords.length,
    members: memberRecords.map((m, k) => ({
      token: m.token,
      derivation_cid: m.derivation_cid,
      aoi_cid: m.aoi_cid,
      band: m.band,
      tslot: m.tslot,
      artifact_cid: m.artifact.cid,
      artifact_url: `/v1/artifacts/${m.artifact.cid}`,
      media_type: m.artifact.media_type,
      bytes: m.artifact.bytes,
      from_request: members[k].from,
    })),
    receipt: bundleReceipt(
      ctx,
      'raster_bundle',
      fact,
      record,
      members.map((m) => m.fact),
    ),
  };
}

/** The receipt of a bundle: the set record first (with its batch proof), then every member's record. */
function bundleReceipt(ctx: ServiceContext, primitive: string, fact: StoredFact, record: RasterBundleRecord, members: StoredFact[]): Receipt {
  return issueReceipt(ctx, primitive, [fact.cell, ...members.map((m) => m.cell)], [fact.fact_cid, ...members.map((m) => m.fact_cid)], {
    field: { aoi_cid: record.aoi_cid, derivation_cid: fact.fact_cid },
    merkle_proof: fact.proof,
    source_versions: record.source_versions,
  });
}

export async function resolveRasterBundle(ctx: ServiceContext, input: { token: string }, o: { deadline: number }): Promise<RasterBundleResolveAnswer> {
  const t = parseRastersetToken(ctx.config.prefix, input.token);
  const f = await ctx.store.getFact(t.derivation_cid);
  if (!f || !isRecordOf(f, RASTER_BUNDLE_RECIPE)) {
    throw new SvcError('cid_not_found', `token: no raster_bundle record ${t.derivation_cid} is stored here (records are per deployment)`, { field: 'token', derivation_cid: t.derivation_cid });
  }
  const v = f.body.value as RasterBundleRecord;
  const signed = setCid(v.members.map((m) => m.derivation_cid));
  if (t.set_cid !== v.set_cid || signed !== v.set_cid) {
    throw new SvcError('token_claim_mismatch', `token: states set_cid ${t.set_cid} but the signed record's members anchor to ${signed}`, {
      field: 'token',
      claimed: { set_cid: t.set_cid },
      signed: { set_cid: signed },
    });
  }
  const pool = new Pool(RASTERS_AT_ONCE);
  const members = await Promise.all(
    v.members.map((m) =>
      pool.run(async () => {
        const mf = await ctx.store.getFact(m.derivation_cid);
        if (!isBandRasterRecord(mf)) throw new SvcError('cid_not_found', `member ${m.derivation_cid} of the set has no raster record here`, { field: 'token', derivation_cid: m.derivation_cid });
        const state = await ensureRasterArtifact(ctx, mf.body.value, m.token, o.deadline);
        return { fact: mf, state };
      }),
    ),
  );
  const record = await serveFact(ctx, f);
  return {
    token: input.token,
    set_cid: v.set_cid,
    aoi_cid: v.aoi_cid,
    bbox: v.aoi,
    derivation_cid: f.fact_cid,
    record,
    members: await Promise.all(
      v.members.map(async (m, k) => ({
        token: m.token,
        derivation_cid: m.derivation_cid,
        aoi_cid: m.aoi_cid,
        band: m.band,
        tslot: m.tslot,
        record: await serveFact(ctx, members[k].fact),
        artifact: { cid: m.artifact.cid, media_type: m.artifact.media_type, bytes: m.artifact.bytes, url: `/v1/artifacts/${m.artifact.cid}`, state: members[k].state },
      })),
    ),
    receipt: bundleReceipt(
      ctx,
      'raster_bundle_resolve',
      f,
      v,
      members.map((m) => m.fact),
    ),
  };
}
