/**
 * Resolving a raster token (POST /v1/raster/resolve, tool raster_resolve; docs/rasters.md): the
 * signed derivation record the token names and the artifact it pins. An artifact evicted from
 * the store is rebuilt from the record alone (the same asset file, the same window, the same
 * recipe), checked to hash to the record's artifact_cid, and stored again: the bytes a client
 * fetches are always the bytes the record signed. If the upstream file no longer gives those
 * bytes, nothing is stored and the answer is source_format_mismatch.
 */
import { bytesCid } from '../../protocol/cid.js';
import { SvcError } from '../../protocol/errors.js';
import type { Receipt } from '../../protocol/receipt.js';
import { parseRasterToken } from '../../protocol/token-grammar.js';
import type { StoredFact } from '../../store/contract.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import { serveFact, type ServedFact } from '../facts/facts-view.js';
import { isBandRasterRecord, type BandRasterRecord } from './derivation.js';
import { GRID_MEDIA_TYPE } from './grid-format.js';
import { makeGrid } from './recipe.js';
import { checkDeadline, sentinel2RasterOf, upstreamFailure } from './upstream.js';

export interface RasterResolveAnswer {
  token: string;
  aoi_cid: string;
  band: string;
  tslot: number;
  derivation_cid: string;
  /** The signed derivation record, served with its own receipt. */
  record: ServedFact;
  artifact: { cid: string; media_type: string; bytes: number; url: string; state: 'stored' | 'rebuilt' };
  receipt: Receipt;
}

/** Rebuilds in progress per responder: one evicted artifact asked for twice at once is read once. */
const rebuilds = new WeakMap<ServiceContext, Map<string, Promise<void>>>();

/** Make the artifact of `v` again and store it; refuses bytes that differ from the signed cid. */
async function rebuild(ctx: ServiceContext, v: BandRasterRecord, token: string, deadline: number): Promise<void> {
  const s2 = sentinel2RasterOf(ctx);
  const o = { deadline };
  const g = v.grid;
  let bytes: Uint8Array;
  try {
    const grid = await s2.gridAt(v.scene.href, g.epsg, o);
    const t = grid.transform;
    const origin = [t[2] + t[0] * g.col0, t[5] + t[4] * g.row0];
    if (grid.epsg !== g.epsg || t[0] !== g.geotransform[1] || t[4] !== g.geotransform[5] || origin[0] !== g.geotransform[0] || origin[1] !== g.geotransform[3]) {
      throw new SvcError(
        'source_format_mismatch',
        `raster_resolve: ${v.scene.href} is no longer on the grid the record pins (EPSG:${grid.epsg}, transform ${t.join(', ')}); the artifact cannot be rebuilt`,
        {
          reason: 'upstream_changed',
          artifact_cid: v.artifact.cid,
        },
      );
    }
    const window = { col0: g.col0, row0: g.row0, width: g.width, height: g.height };
    ({ bytes } = await makeGrid(
      s2,
      { href: v.scene.href, epsg: g.epsg, window, geotransform: g.geotransform, scale: v.reflectance.scale, offset: v.reflectance.offset, nodata: v.reflectance.nodata },
      o,
    ));
  } catch (e) {
    throw upstreamFailure(e, 'raster_resolve', { artifact_cid: v.artifact.cid });
  }
  const cid = bytesCid(bytes);
  if (cid !== v.artifact.cid) {
    throw new SvcError('source_format_mismatch', `raster_resolve: the rebuilt grid hashes to ${cid}, not to the signed artifact_cid ${v.artifact.cid}: the upstream file changed; nothing was stored`, {
      reason: 'upstream_changed',
      artifact_cid: v.artifact.cid,
      rebuilt_cid: cid,
    });
  }
  checkDeadline(deadline, 'raster_resolve');
  await ctx.store.artifacts.put(GRID_MEDIA_TYPE, bytes, token);
}

/** The band_raster record a raster token names, checked against the token's claims. */
export async function rasterRecord(ctx: ServiceContext, token: string): Promise<StoredFact & { body: { value: BandRasterRecord } }> {
  const t = parseRasterToken(ctx.config.prefix, token);
  const f = await ctx.store.getFact(t.derivation_cid);
  if (!isBandRasterRecord(f)) {
    throw new SvcError('cid_not_found', `token: no raster derivation record ${t.derivation_cid} is stored here (records are per responder)`, { field: 'token', derivation_cid: t.derivation_cid });
  }
  const v = f.body.value;
  const claimed = { aoi_cid: t.aoi_cid, band: t.band, tslot: t.tslot };
  const signed = { aoi_cid: v.aoi_cid, band: v.band, tslot: v.tslot };
  if (claimed.aoi_cid !== signed.aoi_cid || claimed.band !== signed.band || claimed.tslot !== signed.tslot) {
    throw new SvcError('token_claim_mismatch', `token: states ${JSON.stringify(claimed)} but the signed record has ${JSON.stringify(signed)}`, { field: 'token', claimed, signed });
  }
  return f;
}

/** Whether the artifact of `v` is held (`stored`) or had to be made again from the record (`rebuilt`). */
export async function ensureRasterArtifact(ctx: ServiceContext, v: BandRasterRecord, token: string, deadline: number): Promise<'stored' | 'rebuilt'> {
  if ((await ctx.store.artifacts.info(v.artifact.cid))?.state === 'stored') return 'stored';
  let inflight = rebuilds.get(ctx);
  if (!inflight) rebuilds.set(ctx, (inflight = new Map()));
  let p = inflight.get(v.artifact.cid);
  if (!p) {
    p = rebuild(ctx, v, token, deadline).finally(() => inflight.delete(v.artifact.cid));
    inflight.set(v.artifact.cid, p);
  }
  await p;
  return 'rebuilt';
}

export async function resolveRaster(ctx: ServiceContext, input: { token: string }, o: { deadline: number }): Promise<RasterResolveAnswer> {
  const f = await rasterRecord(ctx, input.token);
  const v = f.body.value;
  const token = input.token;
  const state = await ensureRasterArtifact(ctx, v, token, o.deadline);
  const record = await serveFact(ctx, f);
  return {
    token,
    aoi_cid: v.aoi_cid,
    band: v.band,
    tslot: v.tslot,
    derivation_cid: f.fact_cid,
    record,
    artifact: { cid: v.artifact.cid, media_type: v.artifact.media_type, bytes: v.artifact.bytes, url: `/v1/artifacts/${v.artifact.cid}`, state },
    receipt: issueReceipt(ctx, 'raster_resolve', [f.cell], [f.fact_cid], {
      field: { aoi_cid: v.aoi_cid, derivation_cid: f.fact_cid },
      merkle_proof: f.proof,
      source_versions: v.source_versions,
    }),
  };
}
