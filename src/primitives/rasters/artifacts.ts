/**
 * Serving stored artifacts (GET /v1/artifacts/<cid>; docs/rasters.md, "Fetching an artifact"):
 * the description of an artifact held here and its bytes, whole or a range. An artifact never
 * made here, or evicted to keep the store within SVC_ARTIFACT_MAX_BYTES, is the typed
 * `artifact_not_found`, whose details say how to rebuild it: the resolve call with its token.
 */
import { SvcError, invalidArgument } from '../../protocol/errors.js';
import type { ArtifactBytes, ArtifactInfo } from '../../store/contract.js';
import type { ServiceContext } from '../context/context.js';

const CID_RE = /^[a-z2-7]{52}$/;
/** Token kinds whose artifacts resolve (and rebuild) at a route of their own (docs/rasters.md). */
const OWN_ROUTES: Record<string, string> = { cube: '/v1/cube/resolve', tessera: '/v1/tessera_field/resolve', archetypes: '/v1/region_archetype_map/resolve' };

/** The literal call that rebuilds an artifact from its token. */
function rebuildCall(token: string) {
  const own = OWN_ROUTES[token.split(':')[1]];
  if (own) return { method: 'POST', path: own, body: { token } };
  return { method: 'POST', path: '/v1/raster/resolve', body: { token } };
}

/** artifact_not_found for `cid`, with what is known about it. */
function notFound(cid: string, info: ArtifactInfo | null, prefix: string): SvcError {
  if (info && info.rebuild) {
    const call = rebuildCall(info.rebuild);
    return new SvcError(
      'artifact_not_found',
      `artifact ${cid} was evicted at ${info.evicted_at ?? 'an earlier time'} to keep the artifact store within its size bound; rebuild it (byte for byte) with POST ${call.path} {token: ${JSON.stringify(info.rebuild)}}`,
      {
        cid,
        state: 'evicted',
        evicted_at: info.evicted_at,
        media_type: info.media_type,
        size: info.size,
        rebuild: call,
      },
    );
  }
  if (info) return new SvcError('artifact_not_found', `artifact ${cid} was evicted and this responder kept no way to rebuild it`, { cid, state: 'evicted', evicted_at: info.evicted_at });
  return new SvcError(
    'artifact_not_found',
    `no artifact ${cid} was ever stored here; if you hold the ${prefix}:raster: token that named it, POST /v1/raster/resolve {token} rebuilds it (a ${prefix}:cube: token: POST /v1/cube/resolve)`,
    {
      cid,
      state: 'unknown',
      rebuild: { method: 'POST', path: '/v1/raster/resolve', body: { token: `<the ${prefix}:raster: token that named the artifact>` } },
    },
  );
}

/** The description of a stored artifact; refuses a malformed cid and one not held here. */
export async function storedArtifact(ctx: ServiceContext, cid: string): Promise<ArtifactInfo> {
  if (!CID_RE.test(cid)) throw invalidArgument('cid', 'expected 52 lowercase base32 characters (b32 of the BLAKE3 of the artifact)');
  const info = await ctx.store.artifacts.info(cid);
  if (!info || info.state !== 'stored') throw notFound(cid, info, ctx.config.prefix);
  return info;
}

/** The bytes of a stored artifact (inclusive `range` when given); artifact_not_found when it went meanwhile. */
export async function artifactBytes(ctx: ServiceContext, cid: string, range?: { start: number; end: number }): Promise<ArtifactBytes> {
  const got = await ctx.store.artifacts.read(cid, range);
  if (!got) throw notFound(cid, await ctx.store.artifacts.info(cid), ctx.config.prefix);
  return got;
}
