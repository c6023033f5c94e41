/**
 * Resolving a cube token (POST /v1/cube/resolve, tool cube_resolve; docs/rasters.md): the signed
 * band_cube record the token names and the cube artifact it pins. An evicted cube is rebuilt from
 * the record alone: each slice's asset file is opened, must still be on the cube's grid at the
 * pinned window, the same windows are read and the same recipe applied, and the bytes must hash
 * to the record's artifact cid before they are stored again; otherwise nothing is stored and the
 * answer is source_format_mismatch. No STAC search is made.
 */
import { bytesCid } from '../../protocol/cid.js';
import { SvcError } from '../../protocol/errors.js';
import type { Receipt } from '../../protocol/receipt.js';
import { parseCubeToken } from '../../protocol/token-grammar.js';
import type { StoredFact } from '../../store/contract.js';
import { issueReceipt, type ServiceContext } from '../context/context.js';
import { serveFact, type ServedFact } from '../facts/facts-view.js';
import { CUBE_MEDIA_TYPE } from './cube-format.js';
import { alignedWindow, BAND_CUBE_RECIPE, cubeBytes, readPlanes, slicePool, type BandCubeRecord } from './cube-recipe.js';
import { isRecordOf } from './derivation.js';
import { checkDeadline, sentinel2RasterOf, upstreamFailure } from './upstream.js';

export interface CubeResolveAnswer {
  token: string;
  aoi_cid: string;
  band: string;
  tslots: { lo: number; hi: number; tempo: string };
  derivation_cid: string;
  record: ServedFact;
  artifact: { cid: string; media_type: string; bytes: number; url: string; state: 'stored' | 'rebuilt' };
  receipt: Receipt;
}

/** Cube rebuilds in progress per responder: one evicted cube asked for twice at once is read once. */
const rebuilds = new WeakMap<ServiceContext, Map<string, Promise<void>>>();

/** Make the cube of `v` again and store it; refuses a slice off its pinned grid and bytes that differ from the signed cid. */
async function rebuild(ctx: ServiceContext, v: BandCubeRecord, token: string, deadline: number): Promise<void> {
  const s2 = sentinel2RasterOf(ctx);
  const o = { deadline };
  let bytes: Uint8Array;
  try {
    await Promise.all(
      v.slices.map(async (s) => {
        const g = await s2.gridAt(s.scene.href, v.grid.epsg, o);
        const at = alignedWindow(v.grid, g.epsg, g.transform);
        if (!at || at.col0 !== s.window.col0 || at.row0 !== s.window.row0) {
          throw new SvcError(
            'source_format_mismatch',
            `cube_resolve: ${s.scene.href} (tslot ${s.tslot}) is no longer on the grid the record pins (EPSG:${g.epsg}, transform ${g.transform.join(', ')}); the cube cannot be rebuilt`,
            {
              reason: 'upstream_changed',
              artifact_cid: v.artifact.cid,
              tslot: s.tslot,
            },
          );
        }
      }),
    );
    bytes = cubeBytes(v.grid, v.slices, await readPlanes(s2, v.grid, v.slices, slicePool(ctx), o));
  } catch (e) {
    throw upstreamFailure(e, 'cube_resolve', { artifact_cid: v.artifact.cid });
  }
  const cid = bytesCid(bytes);
  if (cid !== v.artifact.cid) {
    throw new SvcError('source_format_mismatch', `cube_resolve: the rebuilt cube hashes to ${cid}, not to the signed artifact_cid ${v.artifact.cid}: an upstream file changed; nothing was stored`, {
      reason: 'upstream_changed',
      artifact_cid: v.artifact.cid,
      rebuilt_cid: cid,
    });
  }
  checkDeadline(deadline, 'cube_resolve');
  await ctx.store.artifacts.put(CUBE_MEDIA_TYPE, bytes, token);
}

/** The record a cube token names, checked against the token's claims. */
async function cubeRecord(ctx: ServiceContext, token: string): Promise<StoredFact & { body: { value: BandCubeRecord } }> {
  const t = parseCubeToken(ctx.config.prefix, token);
  const f = await ctx.store.getFact(t.derivation_cid);
  if (!isRecordOf(f, BAND_CUBE_RECIPE)) {
    throw new SvcError('cid_not_found', `token: no band_cube record ${t.derivation_cid} is stored here (records are per deployment)`, { field: 'token', derivation_cid: t.derivation_cid });
  }
  const v = f!.body.value as BandCubeRecord;
  const claimed = { aoi_cid: t.aoi_cid, band: t.band, lo: t.lo, hi: t.hi };
  const signed = { aoi_cid: v.aoi_cid, band: v.band, lo: v.tslots.lo, hi: v.tslots.hi };
  if (claimed.aoi_cid !== signed.aoi_cid || claimed.band !== signed.band || claimed.lo !== signed.lo || claimed.hi !== signed.hi) {
    throw new SvcError('token_claim_mismatch', `token: states ${JSON.stringify(claimed)} but the signed record has ${JSON.stringify(signed)}`, { field: 'token', claimed, signed });
  }
  return f as StoredFact & { body: { value: BandCubeRecord } };
}

export async function resolveCube(ctx: ServiceContext, input: { token: string }, o: { deadline: number }): Promise<CubeResolveAnswer> {
  const f = await cubeRecord(ctx, input.token);
  const v = f.body.value;
  const token = input.token;
  let state: 'stored' | 'rebuilt' = 'stored';
  if ((await ctx.store.artifacts.info(v.artifact.cid))?.state !== 'stored') {
    let inflight = rebuilds.get(ctx);
    if (!inflight) rebuilds.set(ctx, (inflight = new Map()));
    let p = inflight.get(v.artifact.cid);
    if (!p) {
      p = rebuild(ctx, v, token, o.deadline).finally(() => inflight.delete(v.artifact.cid));
      inflight.set(v.artifact.cid, p);
    }
    await p;
    state = 'rebuilt';
  }
  return {
    token,
    aoi_cid: v.aoi_cid,
    band: v.band,
    tslots: v.tslots,
    derivation_cid: f.fact_cid,
    record: await serveFact(ctx, f),
    artifact: { cid: v.artifact.cid, media_type: v.artifact.media_type, bytes: v.artifact.bytes, url: `/v1/artifacts/${v.artifact.cid}`, state },
    receipt: issueReceipt(ctx, 'cube_resolve', [f.cell], [f.fact_cid], {
      field: { aoi_cid: v.aoi_cid, derivation_cid: f.fact_cid },
      merkle_proof: f.proof,
      source_versions: v.source_versions,
    }),
  };
}
